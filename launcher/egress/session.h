// One spawn's egress set-up on the host: the private directory
// that holds the proxy's socket, the proxy itself as a Supervise companion,
// and the guarantee that the directory goes away.
//
// The directory is made with mkdtemp (0700, this user's, a unique name) under
// $XDG_RUNTIME_DIR when that is an absolute directory of this user's that no
// one else can write and that lies outside everything the sandboxed program
// can write (`writable_roots`: the project, writable mounts), else /tmp
// (sticky): a program that could rename the directory away and put a link in
// its place would have the runtime mount whatever it pointed at. It is removed
// when the session ends, whatever became of the sandbox; and because a
// SIGKILLed np-exec runs no destructor, a watchdog process forked when the
// directory is made waits on a pipe only np-exec holds: when that pipe closes
// without the word that np-exec cleaned up itself, the watchdog removes the
// socket and the directory. The watchdog holds no other descriptor, ignores
// the terminal's signals and leaves its session. Forks; touches files and
// sockets (the proxy).
#ifndef NP_EXEC_LAUNCHER_EGRESS_SESSION_H_
#define NP_EXEC_LAUNCHER_EGRESS_SESSION_H_

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/allowlist.h"
#include "launcher/egress/proxy.h"
#include "launcher/supervise.h"

namespace np::egress {

class EgressSession {
 public:
  // Makes the directory and forks its watchdog; nothing listens yet. Codes:
  // egress-socket-dir-failed, egress-watchdog-failed.
  static absl::StatusOr<std::unique_ptr<EgressSession>> Create(
      const std::string& runtime_dir, const std::vector<std::string>& writable_roots);

  // Stops the proxy, removes the socket and the directory, releases the
  // watchdog and reaps it.
  ~EgressSession();
  EgressSession(const EgressSession&) = delete;
  EgressSession& operator=(const EgressSession&) = delete;

  const std::string& dir() const { return dir_; }
  const std::string& socket_path() const { return socket_path_; }

  // The companion that serves the proxy for exactly as long as the runtime
  // runs. `on_record` gets every connection attempt (see ProxyOptions).
  Companion ProxyCompanion(Allowlist allowlist, std::function<void(const EgressRecord&)> on_record);

  // Why the companion could not start; OK when it did or was not asked to.
  const absl::Status& start_error() const { return start_error_; }

 private:
  EgressSession(std::string dir, int watchdog_fd, pid_t watchdog);
  void StopProxy();

  std::string dir_;
  std::string socket_path_;
  int watchdog_fd_;  // The write end; closing it without a byte means "clean up".
  pid_t watchdog_;
  std::unique_ptr<EgressProxy> proxy_;
  absl::Status start_error_;
};

}  // namespace np::egress

#endif  // NP_EXEC_LAUNCHER_EGRESS_SESSION_H_
