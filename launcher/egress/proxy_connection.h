// Serving one connection of the egress proxy: read the request head, decide,
// resolve, check, connect, answer, relay. Internal to launcher/egress/; the
// lifecycle (socket, threads, stop) is proxy.cc's. Touches sockets.
#ifndef NP_EXEC_LAUNCHER_EGRESS_PROXY_CONNECTION_H_
#define NP_EXEC_LAUNCHER_EGRESS_PROXY_CONNECTION_H_

#include <string>

#include "absl/strings/string_view.h"
#include "core/allowlist.h"
#include "launcher/egress/proxy.h"
#include "launcher/egress/resolver.h"

namespace np::egress {

struct ConnectionContext {
  const Allowlist* allowlist;
  const Resolver* resolver;
  int stop_fd;
  int head_timeout_ms;
  int connect_timeout_ms;
  CredentialRoutes* credentials;  // nullptr: none
};

// Serves the non-blocking `client` to its end and fills in what happened
// (all but duration_ms). Does not close `client`.
void ServeConnection(int client, const ConnectionContext& context, EgressRecord* record);

// Sends a complete HTTP error response (`Connection: close`) whose body is
// one line naming the reason and the code.
void SendError(int client, int status, absl::string_view code, absl::string_view reason,
               int stop_fd);

}  // namespace np::egress

#endif  // NP_EXEC_LAUNCHER_EGRESS_PROXY_CONNECTION_H_
