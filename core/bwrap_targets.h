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
#include "core/mounts.h"

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

// The extra mounts bubblewrap needs for the same sandbox, in order
// (bubblewrap re-reads the mount table after every bind, so each one costs
// more than the one before):
//  - a mount that repeats an earlier one, or that an earlier mount of the
//    same mode already shows at the same place (its source is the earlier
//    source's same path below), is left out, unless a mount made between
//    the two lies there;
//  - read-only mounts `P/NAME -> T/NAME` that are, between them, every
//    entry of the host directory P become one read-only bind `P -> T`, when
//    nothing else is bound at, above or below T (T lies on the sandbox's own
//    root) and neither P nor T is "/". The sandbox then shows the same
//    entries with the same content and modes, and the program has the same
//    rights on T (it can list and enter it; it cannot write it, as the
//    directory bubblewrap made there was on the read-only root); only T's
//    own mode and owner are P's instead of bubblewrap's 0700, and an entry
//    created in P on the host during the run shows too, read-only. Read-write mounts are never
//    merged (the program could create entries in P).
// `fixed` are the sandbox's other binds (system directories, /etc, the
// project, the protected paths). Reads the host directories (readdir).
std::vector<ValidatedMount> CoalesceBwrapMounts(const std::vector<ValidatedMount>& mounts,
                                                const std::vector<SandboxBind>& fixed);

}  // namespace np

#endif  // NP_EXEC_CORE_BWRAP_TARGETS_H_
