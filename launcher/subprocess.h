// Running a helper command to completion and capturing its stdout.
//
// Used off the hot path (the probe's fallback, `docker version` against a
// non-local endpoint; bubblewrap's no-op sandbox; an image's copy-out), and
// for podman without its API service, whose client is the engine (a spawn's
// `podman image inspect`). Spawns processes.
#ifndef NP_EXEC_LAUNCHER_SUBPROCESS_H_
#define NP_EXEC_LAUNCHER_SUBPROCESS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace np {

inline constexpr size_t kDefaultCaptureBytes = 64 * 1024;

struct CaptureResult {
  int exit_code = -1;  // 128+n when a signal ended it.
  std::string out;     // stdout, at most the `max_out` asked for.
  bool timed_out = false;
  bool truncated = false;  // stdout went on past `max_out` (read and dropped).
};

// posix_spawn()s `argv` (argv[0] an absolute path) with stdin and stderr on
// /dev/null, waits at most `timeout_ms`, then kills it. Error code
// `spawn-failed` when it could not be started.
absl::StatusOr<CaptureResult> RunAndCapture(const std::vector<std::string>& argv, char** envp,
                                            int timeout_ms, size_t max_out = kDefaultCaptureBytes);

// 128+n for a signal, the status for an exit.
int ExitCodeOf(int wait_status);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_SUBPROCESS_H_
