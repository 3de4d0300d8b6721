// Running a helper command to completion and capturing its stdout.
//
// Used only off the hot path: the probe's fallback (`docker version` against a
// non-local endpoint, `podman version`), bubblewrap's no-op sandbox and
// `podman image exists`. Spawns processes.
#ifndef NP_EXEC_LAUNCHER_SUBPROCESS_H_
#define NP_EXEC_LAUNCHER_SUBPROCESS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace np {

struct CaptureResult {
  int exit_code = -1;  // 128+n when a signal ended it.
  std::string out;     // stdout, at most 64 KiB.
  bool timed_out = false;
};

// posix_spawn()s `argv` (argv[0] an absolute path) with stdin and stderr on
// /dev/null, waits at most `timeout_ms`, then kills it. Error code
// `spawn-failed` when it could not be started.
absl::StatusOr<CaptureResult> RunAndCapture(const std::vector<std::string>& argv, char** envp,
                                            int timeout_ms);

// 128+n for a signal, the status for an exit.
int ExitCodeOf(int wait_status);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_SUBPROCESS_H_
