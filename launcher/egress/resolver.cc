#include "launcher/egress/resolver.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/errors.h"

namespace np::egress {

std::optional<IpAddress> IpAddressFromSockaddr(const sockaddr* address, socklen_t size) {
  if (address == nullptr) return std::nullopt;
  if (address->sa_family == AF_INET && size >= static_cast<socklen_t>(sizeof(sockaddr_in))) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(address);
    return IpAddressFromBytes(reinterpret_cast<const uint8_t*>(&in->sin_addr), 4);
  }
  if (address->sa_family == AF_INET6 && size >= static_cast<socklen_t>(sizeof(sockaddr_in6))) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(address);
    return IpAddressFromBytes(reinterpret_cast<const uint8_t*>(&in6->sin6_addr), 16);
  }
  return std::nullopt;
}

socklen_t ToSockaddr(const IpAddress& address, uint16_t port, sockaddr_storage* out) {
  std::memset(out, 0, sizeof *out);
  if (!address.v6) {
    auto* in = reinterpret_cast<sockaddr_in*>(out);
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
    std::memcpy(&in->sin_addr, address.bytes.data(), 4);
    return sizeof(sockaddr_in);
  }
  auto* in6 = reinterpret_cast<sockaddr_in6*>(out);
  in6->sin6_family = AF_INET6;
  in6->sin6_port = htons(port);
  std::memcpy(&in6->sin6_addr, address.bytes.data(), 16);
  return sizeof(sockaddr_in6);
}

Resolver SystemResolver() {
  return [](const std::string& name) -> absl::StatusOr<std::vector<IpAddress>> {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    int rc = getaddrinfo(name.c_str(), nullptr, &hints, &found);
    if (rc != 0) {
      return MakeError(absl::StatusCode::kUnavailable, "egress-resolve-failed",
                       absl::StrCat("cannot resolve ", name, ": ", gai_strerror(rc)));
    }
    std::vector<IpAddress> addresses;
    for (const addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
      std::optional<IpAddress> address = IpAddressFromSockaddr(ai->ai_addr, ai->ai_addrlen);
      if (address.has_value() &&
          std::find(addresses.begin(), addresses.end(), *address) == addresses.end()) {
        addresses.push_back(*address);
      }
    }
    freeaddrinfo(found);
    return addresses;
  };
}

}  // namespace np::egress
