// The per-spawn egress proxy (design.md section 8): an HTTP proxy
// on one unix socket, which the run path bind-mounts into the sandbox.
//
//   CONNECT host:port   Decide (core/allowlist.h) -> resolve on the host ->
//                       CheckResolved on every address -> connect -> "200
//                       Connection established" -> relay both ways
//   GET http://h[:p]/x  the same checks -> forward the origin-form request
//                       (hop-by-hop headers removed, Connection: close) ->
//                       relay the response
//   a refusal           "HTTP/1.1 403 Forbidden" with a one-line reason and
//                       the code in the X-Np-Exec-Egress header; 400 for a
//                       malformed request, 502 when an allowed host cannot be
//                       resolved or reached, 503 beyond the connection limit
//
// Every connection attempt yields exactly one EgressRecord, from the thread
// that served it, when the connection is over and before the client's socket
// is closed. The proxy connects only to the addresses it checked (never
// resolving a second time), so a name that rebinds between check and connect
// changes nothing.
//
// I/O: one accept thread and one thread per connection, each a small poll(2)
// loop (launcher/egress/relay.h) that also watches a stop pipe. See docs/egress.md,
// "Why this I/O loop", for why. Touches sockets, threads and the resolver.
#ifndef NP_EXEC_LAUNCHER_EGRESS_PROXY_H_
#define NP_EXEC_LAUNCHER_EGRESS_PROXY_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "core/allowlist.h"
#include "launcher/egress/resolver.h"
#include "nlohmann/json.hpp"

namespace np::egress {

// One connection attempt, for the audit log.
struct EgressRecord {
  std::string method;  // "CONNECT", "GET", ...; empty when the head did not parse
  std::string host;    // as requested; empty when the head did not parse
  uint16_t port = 0;
  bool allowed = false;     // the allowlist let it through (it may still fail to connect)
  std::string reason_code;  // empty on success; the refusal or failure code otherwise
  std::string reason;       // one line
  std::string address;      // the address connected to, when one was
  uint64_t bytes_up = 0;    // client -> upstream (for plain HTTP, the rewritten head too)
  uint64_t bytes_down = 0;  // upstream -> client, not counting the proxy's own replies
  int64_t duration_ms = 0;  // accept to close
  // A credential host (launcher/egress/credential_tunnel.h): the header the
  // proxy adds, whether it terminated the client's TLS, how many requests
  // it read and into how many it put the key. Never the key itself.
  std::string credential_header;
  bool tls_terminated = false;
  int requests = 0;
  int injected = 0;
};

// {"egress": {method, host, port, allowed, reason_code, reason, address,
// bytes_up, bytes_down, duration_ms}}, for AppendAudit; for a credential host
// also "credential": {header, tls_terminated, requests, injected}.
nlohmann::json EgressRecordToJson(const EgressRecord& record);

struct CredentialRoutes;

struct ProxyOptions {
  // The socket to create. Its directory must exist, be a real directory owned
  // by this user with no access for group or others (0700); the socket itself
  // must not exist yet.
  std::string socket_path;
  mode_t socket_mode = 0600;
  Allowlist allowlist;
  Resolver resolver;  // empty: SystemResolver()
  // The credential hosts (credential_tunnel.h), whose CONNECTs the proxy
  // terminates; nullptr: none, every tunnel is plain.
  std::shared_ptr<CredentialRoutes> credentials;
  // Called once per connection attempt, never concurrently (the proxy
  // serialises the calls), on a thread of the proxy: it must not call Stop().
  std::function<void(const EgressRecord&)> on_record;
  int max_connections = 128;       // beyond: 503
  int head_timeout_ms = 30000;     // to receive the request head
  int connect_timeout_ms = 10000;  // per address
};

class EgressProxy {
 public:
  // Creates the socket, starts serving on a thread of its own and returns.
  // Codes: egress-socket-dir-unsafe, egress-socket-exists,
  // egress-socket-path-too-long, egress-socket-failed.
  static absl::StatusOr<std::unique_ptr<EgressProxy>> Start(ProxyOptions options);

  // Stops accepting, ends every open connection (their records are still
  // delivered), joins every thread and removes the socket. Idempotent; the
  // destructor calls it. A connection waiting on the resolver is waited for.
  void Stop();
  ~EgressProxy();

  EgressProxy(const EgressProxy&) = delete;
  EgressProxy& operator=(const EgressProxy&) = delete;

  const std::string& socket_path() const { return options_.socket_path; }

 private:
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> finished;
  };

  EgressProxy(ProxyOptions options, int listen_fd, int stop_read, int stop_write);
  void AcceptLoop();
  void ReapFinished(bool all);
  void Serve(int client);
  void Emit(const EgressRecord& record);

  ProxyOptions options_;
  int listen_fd_;
  int stop_read_;
  int stop_write_;
  std::thread accept_thread_;
  std::list<Worker> workers_;  // the accept thread's only
  std::atomic<int> active_{0};
  std::mutex record_mutex_;
  std::mutex stop_mutex_;
  bool stopped_ = false;
};

}  // namespace np::egress

#endif  // NP_EXEC_LAUNCHER_EGRESS_PROXY_H_
