// IP address literals: strict parsing, normalisation and classification, for
// the egress allowlist (design.md section 8).
//
// Only the canonical spellings parse: IPv4 as four dotted decimal parts with
// no leading zeros, IPv6 as RFC 4291 text (with "::" and an optional dotted
// IPv4 tail), no zone index. The loose forms inet_aton and getaddrinfo accept
// ("2130706433", "0177.0.0.1", "0x7f.1", "127.1") all mean 127.0.0.1 to the
// resolver, so they are never read as a name or an address here: callers
// refuse them (LooksLikeLooseIpv4). An IPv4-mapped IPv6 address
// (::ffff:a.b.c.d) is normalised to the IPv4 address it carries. Pure.
#ifndef NP_EXEC_CORE_IP_ADDRESS_H_
#define NP_EXEC_CORE_IP_ADDRESS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace np {

struct IpAddress {
  bool v6 = false;
  // IPv4 uses bytes[0..3]; IPv6 all 16, network order.
  std::array<uint8_t, 16> bytes{};

  bool operator==(const IpAddress& other) const { return v6 == other.v6 && bytes == other.bytes; }
  bool operator!=(const IpAddress& other) const { return !(*this == other); }
};

// Builds an address from network-order bytes (4 or 16), normalising an
// IPv4-mapped IPv6 address to IPv4. std::nullopt for any other length.
std::optional<IpAddress> IpAddressFromBytes(const uint8_t* data, size_t size);

// Parses "a.b.c.d" strictly.
std::optional<IpAddress> ParseIpv4(absl::string_view text);
// Parses IPv6 text without brackets or zone; normalises IPv4-mapped forms.
std::optional<IpAddress> ParseIpv6(absl::string_view text);

// True when `text` is something a resolver would read as an IPv4 address
// but ParseIpv4 does not accept: its last dot-separated part is all decimal
// digits or a 0x hex number ("2130706433", "0177.0.0.1", "127.1", "1.2.3.0x4").
// Such a string is neither a valid host name (a top-level label is never
// numeric) nor a canonical address, so it is refused, never resolved.
bool LooksLikeLooseIpv4(absl::string_view text);

// The canonical text: dotted quad, or RFC 5952 IPv6 (lowercase, longest run
// of zero groups as "::") without brackets.
std::string FormatIpAddress(const IpAddress& address);

// What an address is, for the rule that a name must not resolve to a
// non-public address unless that address was listed as a literal.
enum class AddressClass {
  kPublic,
  kUnspecified,  // 0.0.0.0/8, ::
  kLoopback,     // 127.0.0.0/8, ::1
  kLinkLocal,    // 169.254.0.0/16 (the cloud metadata endpoint), fe80::/10
  kPrivate,      // 10/8, 172.16/12, 192.168/16, 100.64/10 (CGNAT), fec0::/10 (site-local)
  kUniqueLocal,  // fc00::/7
  kMulticast,    // 224.0.0.0/4, ff00::/8
  kReserved,     // 240.0.0.0/4 (and broadcast), 192.0.0.0/24, 198.18.0.0/15
};

// Classifies an address. IPv6 forms that embed an IPv4 address and reach it
// (IPv4-compatible ::a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16) take the
// class of the embedded address, so ::7f00:1 is loopback like 127.0.0.1.
AddressClass ClassifyAddress(const IpAddress& address);

// "public", "loopback", "link-local", ... for messages and audit records.
absl::string_view AddressClassName(AddressClass cls);

// Parses a port strictly: 1..65535, decimal, no sign, no leading zero (the
// allowlist's entries and the proxy's request targets alike).
bool ParsePort(absl::string_view text, uint16_t* port);

}  // namespace np

#endif  // NP_EXEC_CORE_IP_ADDRESS_H_
