#include "core/config.h"

#include <algorithm>
#include <array>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/types/span.h"
#include "core/errors.h"
#include "core/paths.h"
#include "core/protected_paths.h"
#include "core/warm.h"

namespace np {
namespace {

using nlohmann::json;

constexpr std::array<absl::string_view, 3> kIsolationKeys = {"tier", "container", "interpose"};
constexpr std::array<absl::string_view, 3> kMountKeys = {"source", "target", "mode"};

// Edit distance, to suggest "tier" for "tire". Keys are short, so the
// quadratic table is a few dozen cells.
size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

absl::Status CheckKnownKeys(const json& object, absl::string_view prefix,
                            absl::Span<const absl::string_view> known) {
  for (const auto& item : object.items()) {
    const std::string& key = item.key();
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    absl::string_view best;
    size_t best_distance = 3;
    for (absl::string_view candidate : known) {
      size_t d = EditDistance(key, candidate);
      if (d < best_distance) {
        best_distance = d;
        best = candidate;
      }
    }
    std::string dotted = absl::StrCat(prefix, ".", key);
    std::string message = absl::StrCat("unknown key \"", dotted, "\"");
    if (!best.empty()) absl::StrAppend(&message, "; did you mean \"", prefix, ".", best, "\"?");
    absl::StrAppend(&message, " Known keys: ", absl::StrJoin(known, ", "), ".");
    json details = {{"key", dotted}, {"known", known}};
    if (!best.empty()) details["suggestion"] = absl::StrCat(prefix, ".", best);
    return MakeError(absl::StatusCode::kInvalidArgument, "isolation-unknown-key", message, details);
  }
  return absl::OkStatus();
}

// The rest of the file belongs to nubos-pilot and is ignored, but a key that
// is almost np-exec's own (`Isolation`, `isolaton`, `workfow`) is a typo that
// would silently leave the project on direct: refused, with a did-you-mean.
absl::Status CheckTopLevelNearMisses(const json& root) {
  for (const auto& item : root.items()) {
    const std::string& key = item.key();
    for (absl::string_view ours : {absl::string_view("isolation"), absl::string_view("workflow")}) {
      if (key == ours) continue;
      if (!absl::EqualsIgnoreCase(key, ours) && EditDistance(key, ours) > 2) continue;
      return MakeError(absl::StatusCode::kInvalidArgument, "isolation-unknown-key",
                       absl::StrCat("unknown top-level key \"", key, "\"; did you mean \"", ours,
                                    "\"? np-exec reads only \"isolation\" and \"workflow\", "
                                    "spelled exactly"),
                       {{"key", key}, {"suggestion", ours}});
    }
  }
  return absl::OkStatus();
}

absl::Status InvalidValue(absl::string_view code, absl::string_view key, const json& value,
                          absl::string_view expected) {
  return MakeError(absl::StatusCode::kInvalidArgument, code,
                   absl::StrCat(key, " must be ", expected, ", not ",
                                value.dump(-1, ' ', false, json::error_handler_t::replace)),
                   {{"key", key}, {"expected", expected}, {"value", value}});
}

bool AllOf(absl::string_view s, bool (*ok)(char)) {
  return !s.empty() && std::all_of(s.begin(), s.end(), ok);
}

bool IsImageChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ||
         c == '/' || c == ':' || c == '@';
}

bool IsProgramNameChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ||
         c == '+';
}

bool IsUserChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}

// "512m", "1g", "1073741824", "1.5g". Docker's size grammar, minus spaces.
bool IsMemorySize(absl::string_view s) {
  if (s.empty()) return false;
  if (absl::string_view("bkmgBKMG").find(s.back()) != absl::string_view::npos) {
    s.remove_suffix(1);
  }
  bool digits = false;
  bool dot = false;
  for (char c : s) {
    if (absl::ascii_isdigit(static_cast<unsigned char>(c))) {
      digits = true;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      return false;
    }
  }
  return digits && s.front() != '.';
}

bool IsPositiveDecimal(absl::string_view s) {
  double value = 0;
  if (s.empty() || s.front() == '.' || s.front() == '-' || s.front() == '+') return false;
  for (char c : s) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c)) && c != '.') return false;
  }
  return absl::SimpleAtod(s, &value) && value > 0;
}

// A resource limit: the text the runtime receives, and the value as written.
struct Limit {
  std::optional<std::string> text;
  json as_written;
};

// memory and cpus: null, a string or a number; the text is what the runtime
// receives, the number itself is kept for `status` to echo.
absl::StatusOr<Limit> ParseLimit(const json& value, absl::string_view key,
                                 bool (*valid)(absl::string_view), absl::string_view expected) {
  if (value.is_null()) return Limit{};
  std::string text;
  if (value.is_string()) {
    text = value.get<std::string>();
  } else if (value.is_number_unsigned() || value.is_number_integer()) {
    text = value.dump();
  } else if (value.is_number_float()) {
    text = absl::StrCat(value.get<double>());
  } else {
    return InvalidValue("isolation-invalid-value", key, value, expected);
  }
  if (!valid(text)) return InvalidValue("isolation-invalid-value", key, value, expected);
  return Limit{text, value};
}

absl::StatusOr<UserSpec> ParseUser(const json& value) {
  constexpr absl::string_view kKey = "isolation.container.user";
  constexpr absl::string_view kExpected =
      "null (the caller's uid:gid), \"image\", or NAME_OR_UID[:GROUP_OR_GID]";
  UserSpec user;
  if (value.is_null()) return user;
  if (!value.is_string()) return InvalidValue("isolation-invalid-value", kKey, value, kExpected);
  const std::string text = value.get<std::string>();
  if (text == "image") {
    user.kind = UserSpec::Kind::kImage;
    return user;
  }
  std::vector<absl::string_view> parts = absl::StrSplit(text, ':');
  if (text.empty() || parts.size() > 2 || text.front() == '-' ||
      !std::all_of(parts.begin(), parts.end(),
                   [](absl::string_view p) { return AllOf(p, IsUserChar); })) {
    return InvalidValue("isolation-invalid-value", kKey, value, kExpected);
  }
  user.kind = UserSpec::Kind::kExplicit;
  user.value = text;
  return user;
}

// The shape of one mount, checked in the reference's order and with its codes
// (lib/isolation.cjs validateMount): an object, a source, an absolute target,
// a mode, no colon. What the host makes of the paths is ValidateMount's.
absl::StatusOr<MountSpec> ParseMount(const json& value, size_t index) {
  const std::string key = absl::StrCat("isolation.container.mounts[", index, "]");
  if (!value.is_object()) {
    return InvalidValue("isolation-bad-mount", key, value, "an object {source, target, mode}");
  }
  absl::Status known = CheckKnownKeys(value, key, kMountKeys);
  if (!known.ok()) return known;
  MountSpec mount;
  auto source = value.find("source");
  if (source == value.end() || !source->is_string() ||
      absl::StripAsciiWhitespace(source->get<std::string>()).empty()) {
    return InvalidValue("isolation-mount-no-source", absl::StrCat(key, ".source"),
                        source == value.end() ? json(nullptr) : *source,
                        "a non-empty absolute host path");
  }
  auto target = value.find("target");
  if (target == value.end() || !target->is_string() ||
      !absl::StartsWith(target->get<std::string>(), "/")) {
    return InvalidValue("isolation-mount-bad-target", absl::StrCat(key, ".target"),
                        target == value.end() ? json(nullptr) : *target,
                        "an absolute path inside the container");
  }
  mount.source = source->get<std::string>();
  mount.target = target->get<std::string>();
  auto mode = value.find("mode");
  if (mode != value.end()) {
    if (*mode == "rw") {
      mount.writable = true;
    } else if (*mode != "ro") {
      return InvalidValue("isolation-mount-bad-mode", absl::StrCat(key, ".mode"), *mode,
                          "\"ro\" (the default) or \"rw\"");
    }
  }
  // A colon shifts every field after it in the `-v source:target:mode` spec
  // the reference builds. np-exec's --mount could carry one in a source, but
  // the reference refuses it, and a config must mean the same mount to both.
  const std::pair<absl::string_view, absl::string_view> paths[] = {{"source", mount.source},
                                                                   {"target", mount.target}};
  for (const auto& [field, path] : paths) {
    if (path.find(':') == absl::string_view::npos) continue;
    const std::string field_key = absl::StrCat(key, ".", field);
    return MakeError(absl::StatusCode::kInvalidArgument, "isolation-mount-colon-in-path",
                     absl::StrCat(field_key, " \"", path,
                                  "\" must not contain a colon: a bind spec is colon-delimited, "
                                  "so a colon would shift the target and the mode"),
                     {{"key", field_key}, {"field", field}, {"value", path}});
  }
  return mount;
}

// One parser per key of isolation.container; the table below is also the
// list of known keys.
absl::Status ParseRuntimeKey(const json& value, ContainerConfig& out) {
  if (!value.is_string()) {
    std::vector<std::string> names;
    for (const RuntimeTraits& row : AllRuntimes())
      names.push_back(absl::StrCat("\"", row.name, "\""));
    return InvalidValue("isolation-invalid-runtime", "isolation.container.runtime", value,
                        absl::StrCat("one of ", absl::StrJoin(names, ", ")));
  }
  absl::StatusOr<Runtime> runtime = ParseRuntime(value.get<std::string>());
  if (!runtime.ok()) return runtime.status();
  out.runtime = *runtime;
  return absl::OkStatus();
}

absl::StatusOr<std::string> ParseImageReference(const json& value, const std::string& key) {
  if (!value.is_string() || value.get<std::string>().empty()) {
    return MakeError(absl::StatusCode::kInvalidArgument, "isolation-no-image",
                     absl::StrCat(key,
                                  " must be a non-empty image reference, such as "
                                  "\"node:22-bookworm-slim\""),
                     {{"key", key}, {"value", value}});
  }
  const std::string image = value.get<std::string>();
  // A reference starting with "-" would be read by the runtime as a flag.
  if (image.front() == '-' || !AllOf(image, IsImageChar) || image.size() > 512) {
    return InvalidValue("isolation-invalid-image", key, value,
                        "an image reference of letters, digits and . _ - / : @, not "
                        "starting with -");
  }
  return image;
}

absl::Status ParseImageKey(const json& value, ContainerConfig& out) {
  absl::StatusOr<std::string> image = ParseImageReference(value, "isolation.container.image");
  if (!image.ok()) return image.status();
  out.image = *std::move(image);
  return absl::OkStatus();
}

// A program's file name as the shim or `--` gives it: no slash, no control
// character, not "." or "..".
bool IsProgramName(absl::string_view name) {
  if (name.empty() || name.size() > 255 || name == "." || name == "..") return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return c != '/' && static_cast<unsigned char>(c) >= 0x20 && c != 0x7f;
  });
}

absl::Status ParseImagesKey(const json& value, ContainerConfig& out) {
  if (!value.is_object()) {
    return InvalidValue("isolation-invalid-value", "isolation.container.images", value,
                        "an object from a program's file name to its image, such as "
                        "{\"codex\": \"np-agent-codex:local\"}");
  }
  for (const auto& item : value.items()) {
    const std::string key = absl::StrCat("isolation.container.images.", item.key());
    if (!IsProgramName(item.key())) {
      return InvalidValue("isolation-invalid-value", "isolation.container.images", item.key(),
                          "program file names (no slash, no control character) as its keys");
    }
    absl::StatusOr<std::string> image = ParseImageReference(item.value(), key);
    if (!image.ok()) return image.status();
    out.images[item.key()] = *std::move(image);
  }
  return absl::OkStatus();
}

absl::Status ParseNetworkKey(const json& value, ContainerConfig& out) {
  if (value == "none") {
    out.network = Network::kNone;
  } else if (value == "bridge") {
    out.network = Network::kBridge;
  } else if (value == "host") {
    out.network = Network::kHost;
  } else if (value == "allowlist") {
    out.network = Network::kAllowlist;
  } else {
    return InvalidValue("isolation-invalid-network", "isolation.container.network", value,
                        "\"none\", \"allowlist\", \"bridge\" or \"host\"");
  }
  return absl::OkStatus();
}

absl::Status ParseUserKey(const json& value, ContainerConfig& out) {
  absl::StatusOr<UserSpec> user = ParseUser(value);
  if (!user.ok()) return user.status();
  out.user = *user;
  return absl::OkStatus();
}

absl::Status ParseMemoryKey(const json& value, ContainerConfig& out) {
  auto memory = ParseLimit(value, "isolation.container.memory", IsMemorySize,
                           "null or a size such as \"512m\" or 536870912");
  if (!memory.ok()) return memory.status();
  out.memory = memory->text;
  out.memory_as_written = memory->as_written;
  return absl::OkStatus();
}

absl::Status ParseCpusKey(const json& value, ContainerConfig& out) {
  auto cpus = ParseLimit(value, "isolation.container.cpus", IsPositiveDecimal,
                         "null or a positive number such as 1.5");
  if (!cpus.ok()) return cpus.status();
  out.cpus = cpus->text;
  out.cpus_as_written = cpus->as_written;
  return absl::OkStatus();
}

absl::Status ParseMountsKey(const json& value, ContainerConfig& out) {
  if (!value.is_array()) {
    return InvalidValue("isolation-invalid-value", "isolation.container.mounts", value,
                        "an array of {source, target, mode}");
  }
  for (size_t i = 0; i < value.size(); ++i) {
    absl::StatusOr<MountSpec> mount = ParseMount(value[i], i);
    if (!mount.ok()) return mount.status();
    out.mounts.push_back(*std::move(mount));
  }
  return absl::OkStatus();
}

absl::Status ParseEnvKey(const json& value, ContainerConfig& out) {
  if (!value.is_array()) {
    return InvalidValue("isolation-invalid-value", "isolation.container.env", value,
                        "an array of variable names");
  }
  for (const json& name : value) {
    if (!name.is_string()) {
      return InvalidValue("isolation-bad-env-name", "isolation.container.env[]", name,
                          "a variable name");
    }
    absl::Status valid = ValidateEnvName(name.get<std::string>());
    if (!valid.ok()) return valid;
    out.env.push_back(name.get<std::string>());
  }
  return absl::OkStatus();
}

absl::Status ParseWorkdirKey(const json& value, ContainerConfig& out) {
  if (value.is_null()) return absl::OkStatus();
  if (!value.is_string()) {
    return InvalidValue("isolation-invalid-value", "isolation.container.workdir", value,
                        "null or an absolute path other than /");
  }
  absl::StatusOr<std::string> workdir =
      ParseMountPoint(value.get<std::string>(), "isolation.container.workdir");
  if (!workdir.ok()) return workdir.status();
  out.workdir = *std::move(workdir);
  return absl::OkStatus();
}

absl::Status ParsePullKey(const json& value, ContainerConfig& out) {
  if (value == "missing") {
    out.pull_missing = true;
  } else if (value != "never") {
    return InvalidValue("isolation-invalid-value", "isolation.container.pull", value,
                        "\"never\" (the default) or \"missing\"");
  }
  return absl::OkStatus();
}

absl::Status ParseProtectKey(const json& value, ContainerConfig& out) {
  absl::StatusOr<std::vector<std::string>> protect = ParseProtect(value);
  if (!protect.ok()) return protect.status();
  out.protect.insert(out.protect.end(), protect->begin(), protect->end());
  return absl::OkStatus();
}

absl::Status ParseAllowHostsKey(const json& value, ContainerConfig& out) {
  absl::StatusOr<Allowlist> allowlist = ParseAllowHosts(value);
  if (!allowlist.ok()) return allowlist.status();
  out.allow_hosts = *std::move(allowlist);
  return absl::OkStatus();
}

// network and allow_hosts decide together: a list under any other network
// would read as a restriction nothing enforces, and "allowlist" without one
// would be "none" under another name.
absl::Status CheckAllowHostsMatchNetwork(const json& c, const ContainerConfig& out) {
  const bool has_list = c.contains("allow_hosts");
  if (has_list && out.network != Network::kAllowlist) {
    return MakeError(
        absl::StatusCode::kInvalidArgument, "isolation-allow-hosts-without-allowlist",
        absl::StrCat("isolation.container.allow_hosts is set but "
                     "isolation.container.network is \"",
                     NetworkName(out.network),
                     "\": set network to \"allowlist\" or remove allow_hosts"),
        {{"key", "isolation.container.allow_hosts"}, {"network", NetworkName(out.network)}});
  }
  if (!has_list && out.network == Network::kAllowlist) {
    return MakeError(absl::StatusCode::kInvalidArgument, "isolation-invalid-allow-hosts",
                     "isolation.container.network \"allowlist\" needs "
                     "isolation.container.allow_hosts, a non-empty array of hosts such as "
                     "[\"api.anthropic.com\"]",
                     {{"key", "isolation.container.allow_hosts"}});
  }
  return absl::OkStatus();
}

absl::Status ParseCredentialsKey(const json& value, ContainerConfig& out) {
  absl::StatusOr<std::vector<Credential>> credentials = ParseCredentials(value);
  if (!credentials.ok()) return credentials.status();
  out.credentials = *std::move(credentials);
  return absl::OkStatus();
}

// A credential acts only through the egress proxy, for a host the proxy lets
// through: under another network it would be a promise nothing keeps.
absl::Status CheckCredentialsMatchNetwork(const json& c, const ContainerConfig& out) {
  if (out.network != Network::kAllowlist) {
    if (!c.contains("credentials") || out.credentials.empty()) return absl::OkStatus();
    return MakeError(
        absl::StatusCode::kInvalidArgument, "isolation-credentials-without-allowlist",
        absl::StrCat("isolation.container.credentials is set but "
                     "isolation.container.network is \"",
                     NetworkName(out.network),
                     "\": the proxy that adds them serves network \"allowlist\""),
        {{"key", "isolation.container.credentials"}, {"network", NetworkName(out.network)}});
  }
  return CheckCredentialHosts(out.credentials, out.allow_hosts);
}

// In a rootful engine uid 0 reads root-only files through read-only mounts
// and leaves setuid-root binaries in the project for the operator to run:
// only the operator's own file may ask for it, never a project's, trusted or
// not.
absl::Status RefuseRootUserFromProject(const json& container, const ContainerConfig& parsed) {
  if (!container.contains("user") || parsed.user.kind != UserSpec::Kind::kExplicit) {
    return absl::OkStatus();
  }
  const absl::string_view user = parsed.user.value;
  const absl::string_view name = user.substr(0, user.find(':'));
  const absl::string_view group = user.find(':') == absl::string_view::npos
                                      ? absl::string_view()
                                      : user.substr(user.find(':') + 1);
  auto is_root = [](absl::string_view id) {
    return id == "root" || (!id.empty() && id.find_first_not_of('0') == absl::string_view::npos);
  };
  if (!is_root(name) && !is_root(group)) return absl::OkStatus();
  return MakeError(absl::StatusCode::kPermissionDenied, "isolation-user-root-needs-operator",
                   absl::StrCat("isolation.container.user \"", user,
                                "\" in a project file asks for root inside the container; only "
                                "the operator file ($XDG_CONFIG_HOME/nubos-pilot/config.json) may "
                                "ask for uid or gid 0"),
                   {{"key", "isolation.container.user"}, {"value", user}});
}

absl::Status ParseHomeKey(const json& value, ContainerConfig& out) {
  if (value != "ephemeral" && value != "persistent") {
    return InvalidValue("isolation-invalid-value", "isolation.container.home", value,
                        "\"ephemeral\" (the default) or \"persistent\"");
  }
  out.persistent_home = value == "persistent";
  return absl::OkStatus();
}

absl::Status ParseHomeSeedKey(const json& value, ContainerConfig& out) {
  if (!value.is_array()) {
    return InvalidValue("isolation-invalid-value", "isolation.container.home_seed", value,
                        "an array of paths relative to your HOME, such as [\".claude.json\"]");
  }
  for (const json& entry : value) {
    absl::StatusOr<std::string> path = ParseHomeSeedPath(entry);
    if (!path.ok()) return path.status();
    if (std::find(out.home_seed.begin(), out.home_seed.end(), *path) == out.home_seed.end()) {
      out.home_seed.push_back(*std::move(path));
    }
  }
  return absl::OkStatus();
}

// A seed is copied when a persistent home is created; an ephemeral home
// would need the operator's files copied into every sandbox, which is a live
// mount under another name.
absl::Status CheckSeedNeedsPersistentHome(const ContainerConfig& out) {
  if (out.home_seed.empty() || out.persistent_home) return absl::OkStatus();
  return MakeError(absl::StatusCode::kInvalidArgument, "isolation-invalid-value",
                   "isolation.container.home_seed is set but isolation.container.home is not "
                   "\"persistent\": seeds are copied once into a persistent home; set home to "
                   "\"persistent\" or remove home_seed",
                   {{"key", "isolation.container.home_seed"}});
}

// true (the default idle time), false, or {"idle_seconds": N}.
absl::Status ParseWarmKey(const json& value, ContainerConfig& out) {
  const char* expected = "true, false, or {\"idle_seconds\": N} with N from 1 to 86400 (a day)";
  if (value.is_boolean()) {
    out.warm_idle_seconds =
        value.get<bool>() ? std::optional<int>(kDefaultWarmIdleSeconds) : std::nullopt;
    return absl::OkStatus();
  }
  if (!value.is_object()) {
    return InvalidValue("isolation-invalid-value", "isolation.container.warm", value, expected);
  }
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (it.key() != "idle_seconds") {
      return InvalidValue("isolation-invalid-value", "isolation.container.warm", value, expected);
    }
  }
  auto idle = value.find("idle_seconds");
  if (idle == value.end() || !idle->is_number_integer() || *idle < 1 || *idle > 86400) {
    return InvalidValue("isolation-invalid-value", "isolation.container.warm", value, expected);
  }
  out.warm_idle_seconds = idle->get<int>();
  return absl::OkStatus();
}

absl::Status ParseRemoteEngineKey(const json& value, ContainerConfig& out) {
  if (!value.is_boolean()) {
    return InvalidValue("isolation-invalid-value", "isolation.container.remote_engine", value,
                        "true or false");
  }
  out.remote_engine = value.get<bool>();
  return absl::OkStatus();
}

// A remote engine runs the project's programs on another machine, with
// whatever that machine's admins can see: only the operator may choose it,
// never a project file, trusted or not.
absl::Status RefuseRemoteEngineFromProject(const json& container) {
  if (!container.contains("remote_engine")) return absl::OkStatus();
  return MakeError(absl::StatusCode::kPermissionDenied, "isolation-remote-engine-needs-operator",
                   "isolation.container.remote_engine in a project file: only the operator file "
                   "($XDG_CONFIG_HOME/nubos-pilot/config.json) may let spawns run on an engine on "
                   "another host",
                   {{"key", "isolation.container.remote_engine"}});
}

struct ContainerKey {
  absl::string_view name;
  absl::Status (*parse)(const json& value, ContainerConfig& out);
};

// isolation.container's keys, in the order they are parsed and listed.
constexpr ContainerKey kContainerKeyTable[] = {
    {"runtime", ParseRuntimeKey},
    {"image", ParseImageKey},
    {"images", ParseImagesKey},
    {"network", ParseNetworkKey},
    {"user", ParseUserKey},
    {"memory", ParseMemoryKey},
    {"cpus", ParseCpusKey},
    {"mounts", ParseMountsKey},
    {"env", ParseEnvKey},
    {"workdir", ParseWorkdirKey},
    {"pull", ParsePullKey},
    {"allow_hosts", ParseAllowHostsKey},
    {"protect", ParseProtectKey},
    {"home", ParseHomeKey},
    {"home_seed", ParseHomeSeedKey},
    {"credentials", ParseCredentialsKey},
    {"warm", ParseWarmKey},
    {"remote_engine", ParseRemoteEngineKey},
};

absl::Status ParseContainer(const json& c, ContainerConfig& out) {
  std::vector<absl::string_view> known;
  for (const ContainerKey& key : kContainerKeyTable) known.push_back(key.name);
  absl::Status checked = CheckKnownKeys(c, "isolation.container", known);
  if (!checked.ok()) return checked;
  for (const ContainerKey& key : kContainerKeyTable) {
    auto it = c.find(std::string(key.name));
    if (it == c.end()) continue;
    absl::Status parsed = key.parse(*it, out);
    if (!parsed.ok()) return parsed;
  }
  absl::Status seed = CheckSeedNeedsPersistentHome(out);
  if (!seed.ok()) return seed;
  absl::Status hosts = CheckAllowHostsMatchNetwork(c, out);
  if (!hosts.ok()) return hosts;
  return CheckCredentialsMatchNetwork(c, out);
}

// null is the default, as in the reference's resolveTier (its test IS-5).
absl::StatusOr<std::optional<Tier>> ParseTierValue(const json& value, absl::string_view key) {
  if (value.is_null()) return std::optional<Tier>();
  if (!value.is_string()) {
    return InvalidValue("isolation-invalid-tier", key, value,
                        "\"direct\", \"worktree\" or \"container\"");
  }
  absl::StatusOr<Tier> tier = ParseTier(value.get<std::string>());
  if (!tier.ok()) {
    return InvalidValue("isolation-invalid-tier", key, value,
                        "\"direct\", \"worktree\" or \"container\"");
  }
  return std::optional<Tier>(*tier);
}

}  // namespace

absl::string_view NetworkName(Network network) {
  switch (network) {
    case Network::kNone:
      return "none";
    case Network::kBridge:
      return "bridge";
    case Network::kHost:
      return "host";
    case Network::kAllowlist:
      return "allowlist";
  }
  return "none";
}

absl::StatusOr<std::string> ParseMountPoint(absl::string_view path, absl::string_view key) {
  if (!CheckAbsolutePath(path, "x").ok() || HasDotDot(path) || NormalizePath(path) == "/" ||
      path.find_first_of(",\"\n\r:") != absl::string_view::npos) {
    return InvalidValue("isolation-invalid-value", key, json(std::string(path)),
                        "null or an absolute path other than /, without .., commas, "
                        "colons, quotes or newlines");
  }
  return NormalizePath(path);
}

absl::StatusOr<std::string> ParseHomeSeedPath(const json& value) {
  constexpr absl::string_view kExpected =
      "a path relative to your HOME, without \"..\", such as \".codex/config.toml\"";
  auto bad = [&] {
    return InvalidValue("isolation-invalid-value", "isolation.container.home_seed[]", value,
                        kExpected);
  };
  if (!value.is_string()) return bad();
  const std::string text = value.get<std::string>();
  if (text.empty() || text.front() == '/' || text.size() > kMaxPathBytes) return bad();
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return bad();
  }
  const std::string normal = NormalizePath(absl::StrCat("/", text));
  if (HasDotDot(normal) || normal == "/") return bad();
  return normal.substr(1);
}

absl::StatusOr<ProjectConfig> ParseProjectConfig(const json& root) {
  return ParseProjectConfig(root, ContainerConfig());
}

absl::Status ParseOperatorContainer(const json& root, ContainerConfig& out) {
  if (!root.is_object()) return absl::OkStatus();  // ParseOperatorTier says why.
  auto isolation = root.find("isolation");
  if (isolation == root.end() || !isolation->is_object()) return absl::OkStatus();
  auto container = isolation->find("container");
  if (container == isolation->end()) return absl::OkStatus();
  if (!container->is_object()) {
    return InvalidValue("isolation-invalid-value", "isolation.container (operator config)",
                        *container, "an object");
  }
  return ParseContainer(*container, out);
}

namespace {

absl::Status ParseWorkflow(const json& root, ProjectConfig& config) {
  auto workflow = root.find("workflow");
  if (workflow == root.end()) return absl::OkStatus();
  if (!workflow->is_object()) {
    return InvalidValue("isolation-invalid-value", "workflow", *workflow, "an object");
  }
  if (auto wt = workflow->find("worktree_isolation"); wt != workflow->end()) {
    if (!wt->is_boolean()) {
      return InvalidValue("isolation-invalid-value", "workflow.worktree_isolation", *wt,
                          "true or false");
    }
    config.worktree_isolation = wt->get<bool>();
  }
  return absl::OkStatus();
}

absl::Status ParseInterpose(const json& isolation, ProjectConfig& config) {
  auto interpose = isolation.find("interpose");
  if (interpose == isolation.end()) return absl::OkStatus();
  constexpr absl::string_view kExpected =
      "an array of program file names such as [\"node\", \"nodejs\"]";
  if (!interpose->is_array()) {
    return InvalidValue("isolation-invalid-value", "isolation.interpose", *interpose, kExpected);
  }
  for (const json& name : *interpose) {
    const std::string text = name.is_string() ? name.get<std::string>() : std::string();
    // A comma would split the name in NP_EXEC_PRELOAD_NAMES; a slash would
    // never match a file name.
    if (text.empty() || text == "." || text == ".." || text.size() > 255 ||
        !AllOf(text, IsProgramNameChar)) {
      return InvalidValue("isolation-invalid-value", "isolation.interpose[]", name, kExpected);
    }
    config.interpose.push_back(text);
  }
  return absl::OkStatus();
}

absl::Status ParseProjectContainer(const json& isolation, ProjectConfig& config) {
  auto container = isolation.find("container");
  if (container == isolation.end()) return absl::OkStatus();
  if (!container->is_object()) {
    return InvalidValue("isolation-invalid-value", "isolation.container", *container, "an object");
  }
  absl::Status parsed = ParseContainer(*container, config.container);
  if (!parsed.ok()) return parsed;
  absl::Status root_user = RefuseRootUserFromProject(*container, config.container);
  if (!root_user.ok()) return root_user;
  absl::Status remote = RefuseRemoteEngineFromProject(*container);
  if (!remote.ok()) return remote;
  // Whatever the operator's file said, the project's own `user` is the
  // project's: the spawn resolves it in the image (container_user.h). So is
  // the image's own user when the project chose the image.
  const UserSpec::Kind kind = config.container.user.kind;
  if (container->contains("user") ||
      ((container->contains("image") || container->contains("images")) &&
       kind == UserSpec::Kind::kImage)) {
    config.container.user_from_project = kind != UserSpec::Kind::kCaller;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ProjectConfig> ParseProjectConfig(const json& root, const ContainerConfig& base) {
  ProjectConfig config;
  config.container = base;
  if (!root.is_object()) {
    return MakeError(absl::StatusCode::kInvalidArgument, "config-invalid-shape",
                     "config must be a JSON object", {{"type", root.type_name()}});
  }
  // The tier first, whatever else is wrong: it is what the reference
  // validates first, so a config with two faults is named by the same code.
  auto isolation = root.find("isolation");
  if (isolation != root.end() && isolation->is_object()) {
    if (auto tier = isolation->find("tier"); tier != isolation->end()) {
      auto parsed = ParseTierValue(*tier, "isolation.tier");
      if (!parsed.ok()) return parsed.status();
      config.tier = *parsed;
    }
  }
  absl::Status near = CheckTopLevelNearMisses(root);
  if (!near.ok()) return near;
  absl::Status workflow = ParseWorkflow(root, config);
  if (!workflow.ok()) return workflow;
  if (isolation == root.end()) return config;
  if (!isolation->is_object()) {
    return InvalidValue("isolation-invalid-value", "isolation", *isolation,
                        "an object such as {\"tier\": \"container\"}");
  }
  absl::Status known = CheckKnownKeys(*isolation, "isolation", kIsolationKeys);
  if (!known.ok()) return known;
  absl::Status interpose = ParseInterpose(*isolation, config);
  if (!interpose.ok()) return interpose;
  absl::Status container = ParseProjectContainer(*isolation, config);
  if (!container.ok()) return container;
  return config;
}

absl::StatusOr<std::optional<Tier>> ParseOperatorTier(const json& root) {
  if (!root.is_object()) {
    return MakeError(absl::StatusCode::kInvalidArgument, "config-invalid-shape",
                     "the operator config must be a JSON object", {{"type", root.type_name()}});
  }
  absl::Status near = CheckTopLevelNearMisses(root);
  if (!near.ok()) return near;
  auto isolation = root.find("isolation");
  if (isolation == root.end()) return std::optional<Tier>();
  if (!isolation->is_object()) {
    return InvalidValue("isolation-invalid-value", "isolation (operator config)", *isolation,
                        "an object");
  }
  auto tier = isolation->find("tier");
  if (tier == isolation->end()) return std::optional<Tier>();
  return ParseTierValue(*tier, "isolation.tier (operator config)");
}

absl::StatusOr<std::optional<Tier>> ParseEnvTier(absl::string_view value) {
  if (value.empty()) return std::optional<Tier>();
  absl::StatusOr<Tier> tier = ParseTier(value);
  if (!tier.ok()) {
    return InvalidValue("isolation-invalid-tier", "NP_EXEC_TIER", json(std::string(value)),
                        "\"direct\", \"worktree\" or \"container\"");
  }
  return std::optional<Tier>(*tier);
}

absl::Status ValidateEnvName(absl::string_view name) {
  auto bad = [&](absl::string_view why) {
    return MakeError(absl::StatusCode::kInvalidArgument, "isolation-bad-env-name",
                     absl::StrCat("cannot forward variable \"", name, "\": ", why),
                     {{"name", name}});
  };
  if (name.empty()) return bad("the name is empty");
  // Bounded so a hostile config cannot push an argv element past the kernel's
  // per-string limit, which would fail late at exec instead of here.
  if (name.size() > 255) return bad("the name is longer than 255 bytes");
  const unsigned char first = static_cast<unsigned char>(name.front());
  if (!(absl::ascii_isalpha(first) || first == '_')) {
    return bad("a name starts with a letter or _ (pass names only, never NAME=value)");
  }
  for (char c : name) {
    if (!(absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_')) {
      return bad("a name has only letters, digits and _ (pass names only, never NAME=value)");
    }
  }
  if (name == "HOME") return bad("np-exec gives the container its own writable HOME");
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> ParseEnvList(absl::string_view list) {
  std::vector<std::string> names;
  for (absl::string_view item : absl::StrSplit(list, ',')) {
    const absl::string_view name = absl::StripAsciiWhitespace(item);
    if (name.empty()) continue;
    absl::Status valid = ValidateEnvName(name);
    if (!valid.ok()) return valid;
    names.emplace_back(name);
  }
  return names;
}

TierDescription DescribeConfiguredTier(Tier tier, const ContainerConfig& container) {
  TierDescription d = DescribeTier(tier, container.runtime);
  if (tier == Tier::kContainer && container.persistent_home) {
    d.does_not_protect_against.push_back(
        "what an earlier spawn of this project left in its persistent home "
        "(isolation.container.home): a login token or setting one spawn wrote, or replaced, is "
        "what the next one reads; np-exec home --reset starts clean");
  }
  if (tier != Tier::kContainer || container.network == Network::kNone) return d;
  if (container.network == Network::kAllowlist) {
    // Still restricted: loopback only, and the proxy lets exactly these out.
    absl::StrAppend(&d.summary,
                    " This project sets isolation.container.network to \"allowlist\": the "
                    "sandbox has loopback only, and np-exec's per-spawn proxy lets through "
                    "exactly ",
                    absl::StrJoin(AllowlistToStrings(container.allow_hosts), ", "), ".");
    d.does_not_protect_against.insert(
        d.does_not_protect_against.begin(),
        "exfiltration through an allowed host: anything the program can read it can send to a "
        "listed host; a broad domain (github.com, *.googleapis.com, a paste or storage "
        "service) carries user content, and domain fronting on a CDN reaches hosts the list "
        "never named");
    return d;
  }
  const absl::string_view name = NetworkName(container.network);
  d.network_restricted = false;
  absl::StrAppend(&d.summary, " This project sets isolation.container.network to \"", name,
                  "\": the program can reach the network.");
  d.does_not_protect_against.insert(
      d.does_not_protect_against.begin(),
      container.network == Network::kHost
          ? "the network: isolation.container.network is \"host\", so the program shares the "
            "host's network stack, services listening on the host's loopback included"
          : "the network: isolation.container.network is \"bridge\", so the program can reach "
            "the internet and whatever the host's bridge routes to");
  return d;
}

const std::string& ImageFor(const ContainerConfig& container, absl::string_view program) {
  const size_t slash = program.rfind('/');
  const absl::string_view name =
      slash == absl::string_view::npos ? program : program.substr(slash + 1);
  auto it = container.images.find(std::string(name));
  return it == container.images.end() ? container.image : it->second;
}

}  // namespace np
