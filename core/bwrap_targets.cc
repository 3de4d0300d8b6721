#include "core/bwrap_targets.h"

#include <sys/stat.h>

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

}  // namespace np
