// Mount targets that bubblewrap would create on the host through a link.
//
// bubblewrap creates a missing mount point while the host's root is still
// reachable (at /oldroot) and follows every link on the way, so a target under
// a bind whose path passes a link makes it create directories and empty files
// wherever the link points: a repository symlink `x -> ../../../../oldroot/etc`
// and a mount target under `x/` write to the host. docker and podman resolve
// the same target inside the container. So on bubblewrap a mount target under
// any bind (the project, another mount, the system directories) must reach its
// deepest existing component without passing a link. Reads the file system
// (lstat); pure otherwise.
#ifndef NP_EXEC_CORE_BWRAP_TARGETS_H_
#define NP_EXEC_CORE_BWRAP_TARGETS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace np {

// One bind of the sandbox: host `source` seen at `target` inside.
struct SandboxBind {
  std::string source;
  std::string target;
};

// OK when `target` (absolute, normalised) lies under no bind, or when its
// host path (the source of the deepest bind it lies under, plus the rest)
// has no link among its existing components. Otherwise
// `isolation-mount-target-symlink`, naming the link.
absl::Status CheckMountTargetHasNoLink(const std::string& target,
                                       const std::vector<SandboxBind>& binds);

}  // namespace np

#endif  // NP_EXEC_CORE_BWRAP_TARGETS_H_
