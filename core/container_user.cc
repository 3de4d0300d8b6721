#include "core/container_user.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/errors.h"
#include "core/runtime.h"

namespace np {
namespace {

// A decimal id as the runtimes parse one (all digits, fits 32 bits).
std::optional<uint32_t> NumericId(absl::string_view text) {
  if (text.empty() ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  uint64_t value = 0;
  for (char c : text) {
    value = value * 10 + static_cast<uint64_t>(c - '0');
    if (value > 0xffffffffULL) return std::nullopt;
  }
  return static_cast<uint32_t>(value);
}

// The fields of each line of an account file with at least `min_fields`
// fields and a numeric third field.
std::vector<std::vector<absl::string_view>> Lines(absl::string_view text, size_t min_fields) {
  std::vector<std::vector<absl::string_view>> out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::vector<absl::string_view> fields = absl::StrSplit(line, ':');
    if (fields.size() < min_fields || !NumericId(fields[2]).has_value()) continue;
    out.push_back(std::move(fields));
  }
  return out;
}

absl::Status Unresolved(absl::string_view spec, absl::string_view what) {
  return MakeError(
      absl::StatusCode::kFailedPrecondition, "isolation-user-unresolved",
      absl::StrCat("isolation.container.user resolves to \"", spec, "\" in the image, but ", what,
                   "; np-exec cannot tell which uid and gid the program would get, so "
                   "nothing runs. Give numeric ids (\"1000:1000\")"),
      {{"key", "isolation.container.user"}, {"value", spec}});
}

absl::Status RootRefused(absl::string_view spec, const ContainerUserIds& ids, bool from_image) {
  return MakeError(
      absl::StatusCode::kPermissionDenied, "isolation-user-root-needs-operator",
      absl::StrCat("isolation.container.user ",
                   from_image ? "\"image\" is the image's user \"" : "\"", spec,
                   "\", which runs as ", DescribeContainerUser(ids),
                   " in the image: root (uid or gid 0) inside the container; only the operator "
                   "file ($XDG_CONFIG_HOME/nubos-pilot/config.json) may ask for that. Give a "
                   "non-root user such as \"1000:1000\", or remove the key to run as yourself"),
      {{"key", "isolation.container.user"},
       {"value", std::string(spec)},
       {"uid", ids.uid},
       {"gid", ids.gid}});
}

}  // namespace

namespace {

// The user part's passwd entry: its uid, its primary gid and its name. An
// empty user is the image's default: root (the runtimes' own default). As
// runc: a number matches the uid field only, a name the name only; a number
// without an entry is taken as it is.
struct PasswdMatch {
  uint32_t uid = 0;
  std::optional<uint32_t> gid;
  std::string name;
};
absl::StatusOr<PasswdMatch> MatchUser(absl::string_view spec, absl::string_view user_arg,
                                      absl::string_view passwd) {
  PasswdMatch match;
  const std::optional<uint32_t> numeric =
      user_arg.empty() ? std::optional<uint32_t>(0) : NumericId(user_arg);
  for (const std::vector<absl::string_view>& fields : Lines(passwd, 4)) {
    if (numeric.has_value() ? NumericId(fields[2]) == numeric : fields[0] == user_arg) {
      match.uid = *NumericId(fields[2]);
      match.gid = NumericId(fields[3]);
      match.name = std::string(fields[0]);
      return match;
    }
  }
  if (!numeric.has_value()) {
    return Unresolved(spec, absl::StrCat("the image's /etc/passwd has no user \"", user_arg, "\""));
  }
  match.uid = *numeric;
  return match;
}

// The group part: a number matches the gid field only, a name the name only;
// a number without an entry is taken as it is.
absl::StatusOr<uint32_t> MatchGroup(absl::string_view spec, absl::string_view group_arg,
                                    absl::string_view group) {
  const std::optional<uint32_t> numeric = NumericId(group_arg);
  for (const std::vector<absl::string_view>& fields : Lines(group, 3)) {
    if (numeric.has_value() ? NumericId(fields[2]) == numeric : fields[0] == group_arg) {
      return *NumericId(fields[2]);
    }
  }
  if (!numeric.has_value()) {
    return Unresolved(spec,
                      absl::StrCat("the image's /etc/group has no group \"", group_arg, "\""));
  }
  return *numeric;
}

// Every group that lists `user_name` as a member.
std::vector<uint32_t> SupplementaryGroups(absl::string_view user_name, absl::string_view group) {
  std::vector<uint32_t> ids;
  for (const std::vector<absl::string_view>& fields : Lines(group, 4)) {
    for (absl::string_view member : absl::StrSplit(fields[3], ',')) {
      if (member == user_name) {
        ids.push_back(*NumericId(fields[2]));
        break;
      }
    }
  }
  return ids;
}

}  // namespace

absl::StatusOr<ContainerUserIds> ResolveContainerUser(absl::string_view spec,
                                                      absl::string_view passwd,
                                                      absl::string_view group) {
  const size_t colon = spec.find(':');
  const absl::string_view user_arg = spec.substr(0, colon);
  const bool has_group = colon != absl::string_view::npos;
  const absl::string_view group_arg = has_group ? spec.substr(colon + 1) : absl::string_view();
  if (has_group && group_arg.empty()) return Unresolved(spec, "its group is empty");
  absl::StatusOr<PasswdMatch> user = MatchUser(spec, user_arg, passwd);
  if (!user.ok()) return user.status();
  ContainerUserIds ids;
  ids.uid = user->uid;
  if (has_group) {
    absl::StatusOr<uint32_t> gid = MatchGroup(spec, group_arg, group);
    if (!gid.ok()) return gid.status();
    ids.gid = *gid;
    return ids;
  }
  // No group named: the passwd entry's (0 without one), and every group
  // listing the user's name.
  ids.gid = user->gid.value_or(0);
  if (!user->name.empty()) ids.supplementary = SupplementaryGroups(user->name, group);
  return ids;
}

std::string DescribeContainerUser(const ContainerUserIds& ids) {
  std::string text = absl::StrCat(ids.uid, ":", ids.gid);
  if (!ids.supplementary.empty()) {
    absl::StrAppend(&text, ",groups=", absl::StrJoin(ids.supplementary, ","));
  }
  return text;
}

absl::StatusOr<std::optional<ContainerUserIds>> CheckProjectContainerUser(
    const ContainerConfig& config, const ImageUserFacts* image) {
  if (!config.user_from_project || config.user.kind == UserSpec::Kind::kCaller ||
      !TraitsOf(config.runtime).uses_image) {
    return std::optional<ContainerUserIds>();
  }
  const bool from_image = config.user.kind == UserSpec::Kind::kImage;
  if (from_image && (image == nullptr || !image->configured.has_value())) {
    return MakeError(absl::StatusCode::kPermissionDenied, "isolation-user-root-needs-operator",
                     absl::StrCat("isolation.container.user \"image\" in a project file: np-exec "
                                  "could not ask the engine which user the image ",
                                  config.image,
                                  " runs as, so it cannot tell that it is not root; pull the "
                                  "image first, or give a non-root user such as \"1000:1000\""),
                     {{"key", "isolation.container.user"}, {"value", "image"}});
  }
  const std::string spec = from_image ? *image->configured : config.user.value;
  const ImageUserFacts none;
  const ImageUserFacts& files = image != nullptr ? *image : none;
  absl::StatusOr<ContainerUserIds> ids = ResolveContainerUser(spec, files.passwd, files.group);
  if (!ids.ok()) return ids.status();
  const bool root = ids->uid == 0 || ids->gid == 0 ||
                    std::find(ids->supplementary.begin(), ids->supplementary.end(), 0u) !=
                        ids->supplementary.end();
  if (root) return RootRefused(from_image && spec.empty() ? "" : spec, *ids, from_image);
  return std::optional<ContainerUserIds>(*ids);
}

}  // namespace np
