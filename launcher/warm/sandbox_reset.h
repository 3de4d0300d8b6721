// What the keeper undoes between two spawns of a warm sandbox (core/warm.h),
// from inside it, as its PID 1: every other process, the contents of every
// writable scratch mount, every SysV IPC object. Touches processes and the
// sandbox's own file system.
#ifndef NP_EXEC_LAUNCHER_WARM_SANDBOX_RESET_H_
#define NP_EXEC_LAUNCHER_WARM_SANDBOX_RESET_H_

#include <string>
#include <utility>
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

// What a spawn must leave as the keeper found it, since the reset does not
// undo it, in named parts: the mount table (a protected path's mount the host
// detached by replacing the file, a mount added or changed), /dev's entries
// (a link or file planted there), the scratch mounts' own roots (their mode
// and owner), the keeper's resource limits, nice value, scheduling policy
// and CPU affinity (which prlimit, setpriority and the like change from
// outside). The keeper takes it at start and compares it after every reset;
// any difference ends the sandbox.
struct SandboxFingerprint {
  std::vector<std::pair<std::string, std::string>> parts;  // {name, text}
};
SandboxFingerprint TakeFingerprint(absl::string_view mountinfo,
                                   const std::vector<std::string>& scratch);
// The names of the parts that differ ("" when none does).
std::string FingerprintDifference(const SandboxFingerprint& before,
                                  const SandboxFingerprint& after);

}  // namespace np::warm

#endif  // NP_EXEC_LAUNCHER_WARM_SANDBOX_RESET_H_
