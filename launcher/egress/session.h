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
// sockets (the proxy). With credentials the directory also holds the
// session CA's certificate and a trust bundle, removed the same way.
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
#include "core/credentials.h"
#include "launcher/egress/credential_tunnel.h"
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

  // The credential hosts: makes the session CA (its key stays in this
  // process), writes its certificate (kCaFileName) and the bundle of
  // `system_roots_pem` plus it (kBundleFileName) into the directory, 0644,
  // for the sandbox to trust, and hands the routes to the proxy the
  // companion starts. `lookup` reads a variable of np-exec's environment.
  // Codes: egress-credential-unset (a credential's variable is unset or
  // empty here), egress-ca-failed, egress-socket-dir-failed.
  absl::Status ServeCredentials(const std::vector<Credential>& credentials,
                                const std::function<std::string(const std::string&)>& lookup,
                                const std::string& system_roots_pem);
  // The host paths of the two files; empty without credentials.
  std::string ca_path() const;
  std::string bundle_path() const;

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
  std::shared_ptr<CredentialRoutes> credentials_;
  absl::Status start_error_;
};

}  // namespace np::egress

#endif  // NP_EXEC_LAUNCHER_EGRESS_SESSION_H_
