// The egress proxy's path for a credential host (core/credentials.h): after
// the allowlist let a CONNECT through and the upstream socket is connected,
//
//   TLS to the real host (SNI, verified against the system trust store and
//   for that host name) -> "200 Connection established" -> TLS with the
//   sandbox on a leaf of the session CA -> every request framed and its
//   placeholder replaced (core/credential_request.h) -> responses relayed
//
// An upstream whose certificate does not verify is refused before the
// tunnel opens: 502 `egress-upstream-tls-failed`, the key never sent. A
// client that fails its handshake (it does not trust the session CA) ends
// the connection: `egress-client-tls-failed`. A request the proxy cannot
// frame gets a 400 inside the tunnel: `egress-credential-bad-request`.
// Internal to launcher/egress/. Touches sockets.
#ifndef NP_EXEC_LAUNCHER_EGRESS_CREDENTIAL_TUNNEL_H_
#define NP_EXEC_LAUNCHER_EGRESS_CREDENTIAL_TUNNEL_H_

#include <openssl/ssl.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/credentials.h"
#include "launcher/egress/proxy.h"
#include "launcher/egress/session_ca.h"

namespace np::egress {

// One credential with the key it adds.
struct CredentialRoute {
  Credential credential;
  std::string value;
};

// What the proxy needs for its credential hosts: the routes, the session CA
// and the context that verifies the real hosts.
struct CredentialRoutes {
  std::vector<CredentialRoute> routes;
  std::unique_ptr<SessionCa> ca;
  std::shared_ptr<SSL_CTX> upstream;

  // The route of `host` (as the client sent it, any case, one trailing dot
  // allowed) and `port`; nullptr when that target has none.
  const CredentialRoute* Find(const std::string& host, uint16_t port) const;
};

// Makes the session CA (constrained to the routes' hosts) and the upstream
// context. Code: egress-ca-failed.
absl::StatusOr<std::shared_ptr<CredentialRoutes>> MakeCredentialRoutes(
    std::vector<CredentialRoute> routes);

struct TunnelContext {
  int stop_fd;
  int handshake_timeout_ms;  // each handshake
};

// Serves the connected, non-blocking `client` and `upstream` to their end
// (neither is closed here) and fills in the record's bytes (plaintext),
// credential counts and failure, if any. `early`: bytes the client sent
// after its CONNECT head, the start of its handshake.
void ServeCredentialTunnel(int client, int upstream, const std::string& early,
                           const CredentialRoute& route, CredentialRoutes& routes,
                           const TunnelContext& context, EgressRecord* record);

}  // namespace np::egress

#endif  // NP_EXEC_LAUNCHER_EGRESS_CREDENTIAL_TUNNEL_H_
