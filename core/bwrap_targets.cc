#include "core/bwrap_targets.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/errors.h"
#include "core/paths.h"

namespace np {

absl::Status CheckMountTargetHasNoLink(const std::string& target,
                                       const std::vector<SandboxBind>& binds) {
  // The deepest bind wins: a mount on top of the project hides it there.
  const SandboxBind* under = nullptr;
  for (const SandboxBind& bind : binds) {
    if (!IsInside(target, bind.target)) continue;
    if (under == nullptr || bind.target.size() > under->target.size()) under = &bind;
  }
  if (under == nullptr) return absl::OkStatus();  // On the sandbox's own tmpfs root.
  const std::string rest =
      target.size() > under->target.size() ? target.substr(under->target.size()) : "";
  std::string host = under->source;
  for (absl::string_view part : absl::StrSplit(rest, '/', absl::SkipEmpty())) {
    host = JoinPath(host, part);
    struct stat st;
    if (lstat(host.c_str(), &st) != 0) break;  // bubblewrap creates the rest here.
    if (S_ISLNK(st.st_mode)) {
      return MakeError(
          absl::StatusCode::kInvalidArgument, "isolation-mount-target-symlink",
          absl::StrCat("mount target ", target, " passes the link ", host,
                       " on the host; bubblewrap would follow it and create the mount point "
                       "wherever it leads. Mount at a path without links"),
          {{"target", target}, {"link", host}});
    }
    if (!S_ISDIR(st.st_mode)) break;  // The mount point itself may be a file.
  }
  return absl::OkStatus();
}

namespace {

std::string Base(const std::string& path) { return path.substr(path.rfind('/') + 1); }

bool Overlaps(const std::string& a, const std::string& b) {
  return IsInside(a, b) || IsInside(b, a);
}

// The names in the host directory `dir`; nullopt when it cannot be listed.
std::optional<std::set<std::string>> ListDirectory(const std::string& dir) {
  DIR* handle = opendir(dir.c_str());
  if (handle == nullptr) return std::nullopt;
  std::set<std::string> names;
  while (dirent* entry = readdir(handle)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.insert(name);
  }
  closedir(handle);
  return names;
}

// Whether `later` is already shown by `earlier`: same mode, its target below
// (or at) the earlier target and its source the same path below the earlier
// source, and no bind made between the two (`others`) below the earlier
// target where the later one would cover it.
bool ShownBy(const ValidatedMount& later, const ValidatedMount& earlier,
             const std::vector<const std::string*>& others) {
  if (later.writable != earlier.writable || !IsInside(later.target, earlier.target)) return false;
  std::string rest = later.target.substr(earlier.target.size());
  if (!rest.empty() && rest.front() == '/') rest.erase(0, 1);
  if (later.source != (rest.empty() ? earlier.source : JoinPath(earlier.source, rest))) {
    return false;
  }
  for (const std::string* other : others) {
    if (IsInside(*other, earlier.target) && Overlaps(*other, later.target)) return false;
  }
  return true;
}

// Nothing bound twice: a mount an earlier one already shows is dropped.
std::vector<ValidatedMount> DropShownMounts(const std::vector<ValidatedMount>& mounts) {
  std::vector<ValidatedMount> kept;
  for (size_t i = 0; i < mounts.size(); ++i) {
    bool redundant = false;
    for (size_t k = 0; k < kept.size() && !redundant; ++k) {
      // Only a mount between the two can tell them apart: the earlier one
      // covers whatever was bound below its target before it (the system
      // directories, the project, the protected paths).
      std::vector<const std::string*> others;
      for (size_t j = k + 1; j < kept.size(); ++j) others.push_back(&kept[j].target);
      redundant = ShownBy(mounts[i], kept[k], others);
    }
    if (!redundant) kept.push_back(mounts[i]);
  }
  return kept;
}

// Whether the read-only siblings `members` of `kept`, all the entries of the
// host directory `source` shown at `target`, can be one bind of it: nothing
// else is bound at, below or above `target`, and the directory is one the
// program could list and enter (where bubblewrap made a directory, it could).
bool WholeDirectory(const std::vector<ValidatedMount>& kept, const std::vector<size_t>& members,
                    const std::vector<SandboxBind>& fixed, const std::string& source,
                    const std::string& target) {
  std::set<std::string> names;
  for (size_t i : members) names.insert(Base(kept[i].target));
  if (names.size() != members.size()) return false;
  bool alone = true;
  for (const SandboxBind& bind : fixed) alone = alone && !Overlaps(bind.target, target);
  for (size_t i = 0; i < kept.size(); ++i) {
    if (std::find(members.begin(), members.end(), i) != members.end()) continue;
    alone = alone && !Overlaps(kept[i].target, target);
  }
  if (!alone) return false;
  struct stat st;
  if (lstat(source.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
      access(source.c_str(), R_OK | X_OK) != 0) {
    return false;
  }
  const std::optional<std::set<std::string>> listed = ListDirectory(source);
  return listed.has_value() && *listed == names;
}

}  // namespace

std::vector<ValidatedMount> CoalesceBwrapMounts(const std::vector<ValidatedMount>& mounts,
                                                const std::vector<SandboxBind>& fixed) {
  const std::vector<ValidatedMount> kept = DropShownMounts(mounts);
  // Read-only siblings that are a whole host directory: one bind.
  std::map<std::pair<std::string, std::string>, std::vector<size_t>> groups;
  for (size_t i = 0; i < kept.size(); ++i) {
    const ValidatedMount& mount = kept[i];
    if (mount.writable || Base(mount.source) != Base(mount.target)) continue;
    const std::string source_parent = ParentPath(mount.source);
    const std::string target_parent = ParentPath(mount.target);
    if (source_parent == "/" || target_parent == "/") continue;
    groups[{source_parent, target_parent}].push_back(i);
  }
  std::vector<bool> merged(kept.size(), false);
  std::map<size_t, ValidatedMount> replacement;  // At the group's first index.
  for (const auto& [parents, members] : groups) {
    if (members.size() < 2 ||
        !WholeDirectory(kept, members, fixed, parents.first, parents.second)) {
      continue;
    }
    for (size_t i : members) merged[i] = true;
    replacement[members.front()] = ValidatedMount{parents.first, parents.second, false};
  }
  std::vector<ValidatedMount> result;
  for (size_t i = 0; i < kept.size(); ++i) {
    auto it = replacement.find(i);
    if (it != replacement.end()) {
      result.push_back(it->second);
    } else if (!merged[i]) {
      result.push_back(kept[i]);
    }
  }
  return result;
}

}  // namespace np
