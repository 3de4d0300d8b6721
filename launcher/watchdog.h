// The watchdog: a small np-exec process that outlives a killed np-exec.
//
// A SIGKILLed np-exec cannot remove its container, and a program that ignores
// SIGTERM keeps it running (docker until a later spawn reaps it, podman
// without its API service forever), with no exit line in the audit log. So
// before the runtime starts, np-exec starts itself once more as
// `np-exec container-watchdog`, in a session of its own, on the host (out of
// the sandboxed program's reach), holding the read end of a pipe whose write
// end only np-exec has. When np-exec has seen its runtime end it writes one
// byte and the watchdog exits; when the pipe closes without it (np-exec died,
// SIGKILL included), the watchdog force-removes the container (through the
// engine socket, else `RUNTIME rm -f`) and appends the exit line, saying
// np-exec was killed. It also holds a copy of the spawn lock of the
// project's placeholders (protected_placeholders.h): after a killed np-exec,
// once the sandbox is gone (the container removed; on bubblewrap, the
// sandbox's init ended, which bubblewrap's --sync-fd tells through a pipe
// only that init holds), it removes the placeholders as the last spawn of
// the project would, so a SIGKILL leaves nothing of np-exec's in the
// project. Spawns a process.
#ifndef NP_EXEC_LAUNCHER_WATCHDOG_H_
#define NP_EXEC_LAUNCHER_WATCHDOG_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/protected_paths.h"
#include "nlohmann/json.hpp"

namespace np {

inline constexpr absl::string_view kWatchdogVerb = "container-watchdog";

struct WatchdogSpec {
  std::string self_path;              // np-exec's own binary (the run path: /proc/self/exe).
  std::vector<std::string> env;       // The watchdog's environment (the runtime client's).
  Runtime runtime = kDefaultRuntime;  // Whose driver removes the container.
  std::string runtime_bin;            // For `rm -f` without a socket.
  std::optional<std::string> socket;  // The engine API socket, when there is one.
  std::string container_name;         // Empty: nothing to remove (bubblewrap).
  std::vector<std::string> secrets;   // podman secrets of the spawn, removed too.
  std::string project_root;           // Whose audit log gets the exit line.
  nlohmann::json run_record;          // The run line; the exit line is made from it.
  // The placeholders: the spawn lock's descriptor (-1: none), the project's
  // real path and the read-only binds (ProtectedPlaceholders).
  int lock_fd = -1;
  std::string project_real;
  std::vector<ProtectedBind> binds;
  // The opened project folder (-1: by path): a killed np-exec's placeholders
  // are removed there and its exit line goes to that folder's audit log,
  // wherever the project's path points by then.
  int project_fd = -1;
  // bubblewrap: the read end of the pipe whose write end bubblewrap's init
  // holds (--sync-fd); -1: none (the container's removal is the sign then).
  int sandbox_fd = -1;
};

class Watchdog {
 public:
  // Starts the watchdog. Code `spawn-failed` when it cannot be started (the
  // spawn is then refused: np-exec does not run a container it could not
  // clean up after).
  static absl::StatusOr<Watchdog> Start(const WatchdogSpec& spec);

  Watchdog(Watchdog&& other) noexcept;
  Watchdog& operator=(Watchdog&&) = delete;
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  ~Watchdog();  // Disarm().

  // np-exec saw its runtime end and cleaned up itself: the watchdog exits
  // doing nothing. Waits for it. Idempotent.
  void Disarm();

  pid_t pid() const { return pid_; }

 private:
  Watchdog(int fd, pid_t pid) : fd_(fd), pid_(pid) {}
  int fd_ = -1;
  pid_t pid_ = -1;
};

// bubblewrap's sandbox pipe: the write end goes to bubblewrap (--sync-fd,
// held by its init, never by the program), the read end to the watchdog
// (WatchdogSpec::sandbox_fd). Both close-on-exec; closed with the object.
class SandboxPipe {
 public:
  SandboxPipe() = default;
  SandboxPipe(const SandboxPipe&) = delete;
  SandboxPipe& operator=(const SandboxPipe&) = delete;
  ~SandboxPipe() { Close(); }
  // Code `spawn-failed`.
  absl::Status Open();
  void Close();
  int read_end() const { return read_end_; }
  int write_end() const { return write_end_; }

 private:
  int read_end_ = -1;
  int write_end_ = -1;
};

// The watchdog's own side, `np-exec container-watchdog OPTIONS` (its
// arguments after the verb): waits on descriptor 3, then acts as above.
// Returns its exit status.
int RunWatchdog(absl::Span<const std::string> args);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_WATCHDOG_H_
