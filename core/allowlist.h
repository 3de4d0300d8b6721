// The egress allowlist: `isolation.container.allow_hosts` parsed into typed
// entries, and the decisions the per-spawn proxy takes with it (design.md
// section 8). Pure; the proxy in launcher/egress/ resolves names and connects.
//
// Entries: `host`, `host:port`, `*.domain` (any subdomain at any depth, never
// the bare domain, never a mere suffix: `*.example.com` does not match
// `evil-example.com`), IPv4, `[IPv6]`, each with an optional `:port`; without
// one the port is 443. Names are ASCII (IDN in punycode form), compared
// case-insensitively with a trailing dot ignored; ports exactly.
//
// Codes (InvalidArgument, details {index, entry}):
//   isolation-invalid-allow-hosts       not an array, empty, an element not a
//                                       string, or a malformed entry
//   isolation-allow-hosts-bad-port      a port that is not 1..65535 in decimal
//   isolation-allow-hosts-idn           a non-ASCII name (write its xn-- form)
//   isolation-allow-hosts-bad-wildcard  `*` other than as the whole leftmost
//                                       label, or over a single label (`*.com`)
//   isolation-allow-hosts-loose-ipv4    a numeric spelling other than a dotted
//                                       quad (`2130706433`, `0177.0.0.1`, `127.1`)
#ifndef NP_EXEC_CORE_ALLOWLIST_H_
#define NP_EXEC_CORE_ALLOWLIST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/ip_address.h"
#include "nlohmann/json.hpp"

namespace np {

struct AllowEntry {
  enum class Kind { kName, kWildcard, kAddress };
  Kind kind = Kind::kName;
  // kName: the whole name; kWildcard: the domain after "*."; lowercase, no
  // trailing dot. Empty for kAddress.
  std::string name;
  IpAddress address;  // kAddress only
  uint16_t port = 443;
  std::string text;  // the entry as written, for messages

  bool operator==(const AllowEntry& other) const {
    return kind == other.kind && name == other.name && address == other.address &&
           port == other.port;
  }
};

struct Allowlist {
  std::vector<AllowEntry> entries;  // in the order written, duplicates dropped
};

// Parses the value of `isolation.container.allow_hosts`.
absl::StatusOr<Allowlist> ParseAllowHosts(const nlohmann::json& value);

// The canonical form of each entry ("api.example.com:443", "*.example.com:443",
// "127.0.0.1:8080", "[::1]:443"), for status, trust hashing and audit.
std::vector<std::string> AllowlistToStrings(const Allowlist& allowlist);

// A host the proxy was asked for, normalised: a lowercase name without a
// trailing dot, or an address literal.
struct EgressTarget {
  bool is_address = false;
  std::string name;   // when !is_address
  IpAddress address;  // when is_address
  uint16_t port = 0;
};

// The proxy's verdict. `reason_code` is stable (the audit record and the 403
// body carry it); `reason` is one line a person or an agent can read.
struct EgressDecision {
  bool allowed = false;
  std::string reason_code;  // empty when allowed
  std::string reason;
  EgressTarget target;
};

// Refusal codes of Decide and CheckResolved.
inline constexpr absl::string_view kEgressBadHost = "egress-bad-host";
inline constexpr absl::string_view kEgressHostNotAllowed = "egress-host-not-allowed";
inline constexpr absl::string_view kEgressPortNotAllowed = "egress-port-not-allowed";
inline constexpr absl::string_view kEgressAddressRefused = "egress-address-refused";
inline constexpr absl::string_view kEgressNoAddress = "egress-no-address";

// Decides whether `host` (as the client sent it: a name, a dotted quad, or
// IPv6 with or without brackets) on `port` may be reached. A name matches
// name and wildcard entries only; an address literal matches address entries
// only, by value (::ffff:127.0.0.1 is 127.0.0.1). Malformed, non-ASCII and
// loosely spelled numeric hosts are refused (egress-bad-host).
EgressDecision Decide(const Allowlist& allowlist, absl::string_view host, uint16_t port);

// The second check, after a name allowed by Decide was resolved on the host:
// every address must be public, or listed as a literal with that port;
// otherwise the whole name is refused (egress-address-refused), so a name
// that resolves to both a public address and 169.254.169.254 (DNS rebinding)
// reaches neither. An empty list is refused too (egress-no-address).
EgressDecision CheckResolved(const Allowlist& allowlist, const EgressDecision& allowed,
                             const std::vector<IpAddress>& addresses);

}  // namespace np

#endif  // NP_EXEC_CORE_ALLOWLIST_H_
