// What the keeper undoes between two spawns of a warm sandbox (core/warm.h),
// from inside it, as its PID 1: every other process, the contents of every
// writable scratch mount, every SysV IPC object. Touches processes and the
// sandbox's own file system.
#ifndef NP_EXEC_LAUNCHER_WARM_SANDBOX_RESET_H_
#define NP_EXEC_LAUNCHER_WARM_SANDBOX_RESET_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace np::warm {

// The writable scratch mounts in `mountinfo` (/proc/self/mountinfo's text):
// whole tmpfs and mqueue file systems (a mount root of "/") mounted
// read-write, except the root, those below /proc and /sys (a runtime's masks)
// and below /run/np-exec (np-exec's own). Their mount points, in the order
// listed.
std::vector<std::string> ScratchMounts(absl::string_view mountinfo);

// Kills every process of the pid namespace but the caller (kill(-1,
// SIGKILL), which the sandbox's PID 1 may send) and reaps them, until none is
// left. Codes: `warm-reset-failed` when some survive `timeout_ms`.
absl::Status KillAllOthers(int timeout_ms);

// Removes everything below `mount_point`, never following a link and never
// crossing into another mount. Codes: `warm-reset-failed`.
absl::Status EmptyMount(const std::string& mount_point);

// Removes every SysV shared memory segment, semaphore set and message queue
// of the IPC namespace. Codes: `warm-reset-failed`.
absl::Status RemoveSysvIpc();

}  // namespace np::warm

#endif  // NP_EXEC_LAUNCHER_WARM_SANDBOX_RESET_H_
