// Name resolution for the egress proxy, and conversions between core's
// IpAddress and socket addresses. The proxy resolves on the host, never in
// the sandbox; tests inject a resolver so that a name can "resolve" to
// loopback without touching DNS. Touches the system resolver.
#ifndef NP_EXEC_LAUNCHER_EGRESS_RESOLVER_H_
#define NP_EXEC_LAUNCHER_EGRESS_RESOLVER_H_

#include <sys/socket.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ip_address.h"

namespace np::egress {

// Returns the addresses of a host name (never an address literal: those are
// not resolved). An error carries the code egress-resolve-failed.
using Resolver = std::function<absl::StatusOr<std::vector<IpAddress>>(const std::string& name)>;

// getaddrinfo(3) for TCP, both families, duplicates dropped, in the
// resolver's order.
Resolver SystemResolver();

// The address in a sockaddr_in or sockaddr_in6 (IPv4-mapped IPv6 normalised
// to IPv4); std::nullopt for any other family.
std::optional<IpAddress> IpAddressFromSockaddr(const sockaddr* address, socklen_t size);

// A sockaddr_in or sockaddr_in6 for `address` and `port`; returns its size.
socklen_t ToSockaddr(const IpAddress& address, uint16_t port, sockaddr_storage* out);

}  // namespace np::egress

#endif  // NP_EXEC_LAUNCHER_EGRESS_RESOLVER_H_
