// Mount sources pinned between np-exec's check and the runtime's mount.
//
// np-exec checks every bind source by its real path; a runtime that is handed
// the path resolves it again, and a sandboxed program that can rename a folder
// on the way (a project nested in another project: a slice worktree, a
// package of a monorepo) swaps it for a link in between. So the launcher
// opens each source once, after the checks, and holds what it opened
// (launcher/source_pins.h):
// - bubblewrap binds the descriptor (`--bind-fd`, `--ro-bind-fd`), so what is
//   mounted is what was opened;
// - docker and podman take only paths, so the sandbox's entry point is
//   np-exec's own static binary (`mount-check`, read-only at
//   kEgressSelfTarget): before the program exists it compares each mount
//   target's device and inode with what the launcher opened, and refuses
//   with `isolation-mount-source-unstable` (125) when one differs. A printed
//   plan, which carries no descriptor, checks the same way on every runtime.
// Pure: the pinning itself is injected.
#ifndef NP_EXEC_CORE_MOUNT_PINS_H_
#define NP_EXEC_CORE_MOUNT_PINS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace np {

// What the launcher opened for one source: its identity, and the descriptor
// a runtime that binds descriptors is handed (-1: none, check by identity).
struct SourcePin {
  int fd = -1;
  uint64_t dev = 0;
  uint64_t ino = 0;
};

// Opens and checks `source` (a real path np-exec validated). Codes:
// `isolation-mount-source-unstable`, `isolation-mount-source-missing`.
using PinSourceFn = std::function<absl::StatusOr<SourcePin>(const std::string& source)>;

// One target the entry point checks inside before the program runs.
struct MountExpectation {
  std::string target;
  uint64_t dev = 0;
  uint64_t ino = 0;
};

inline constexpr absl::string_view kMountCheckVerb = "mount-check";

// {SELF, "mount-check", "--expect", TARGET, "DEV:INO", ..., "--"}: what goes
// in front of the program (and of the egress entry point).
std::vector<std::string> MountCheckPrefix(const std::vector<MountExpectation>& expected);

// "DEV:INO" of one --expect. Code `usage`.
absl::StatusOr<MountExpectation> ParseMountExpectation(absl::string_view target,
                                                       absl::string_view identity);

// The error the entry point reports for a target that is not what was pinned.
absl::Status MountNotAsPinned(absl::string_view target);

}  // namespace np

#endif  // NP_EXEC_CORE_MOUNT_PINS_H_
