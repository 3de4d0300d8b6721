#include "core/allowlist.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/errors.h"
#include "core/ip_address.h"

namespace np {
namespace {

constexpr absl::string_view kInvalid = "isolation-invalid-allow-hosts";
constexpr absl::string_view kBadPort = "isolation-allow-hosts-bad-port";
constexpr absl::string_view kIdn = "isolation-allow-hosts-idn";
constexpr absl::string_view kBadWildcard = "isolation-allow-hosts-bad-wildcard";
constexpr absl::string_view kLooseIpv4 = "isolation-allow-hosts-loose-ipv4";

absl::Status EntryError(absl::string_view code, size_t index, absl::string_view entry,
                        absl::string_view why) {
  return MakeError(
      absl::StatusCode::kInvalidArgument, code,
      absl::StrCat("isolation.container.allow_hosts[", index, "] \"", entry, "\": ", why),
      {{"index", index}, {"entry", std::string(entry)}});
}

bool HasNonAscii(absl::string_view text) {
  return std::any_of(text.begin(), text.end(),
                     [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
}

bool HasControlOrSpace(absl::string_view text) {
  return std::any_of(text.begin(), text.end(), [](char c) {
    const unsigned char u = static_cast<unsigned char>(c);
    return u <= 0x20 || u == 0x7f;
  });
}

// An ASCII host name: dot-separated labels of 1..63 letters, digits, '-' and
// '_' (used by some service names), no label starting or ending with '-',
// at most 253 characters. `name` is already lowercase without a trailing dot.
bool IsValidName(absl::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  for (absl::string_view label : absl::StrSplit(name, '.')) {
    if (label.empty() || label.size() > 63) return false;
    if (label.front() == '-' || label.back() == '-') return false;
    for (char c : label) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
    }
  }
  return true;
}

std::string NormaliseName(absl::string_view host) {
  std::string name = absl::AsciiStrToLower(host);
  if (!name.empty() && name.back() == '.') name.pop_back();
  return name;
}

// The characters an entry may hold: ASCII, no space or control character,
// and a host rather than a URL.
absl::Status CheckEntryText(size_t index, absl::string_view text) {
  if (text.empty()) return EntryError(kInvalid, index, text, "an entry must not be empty");
  if (HasNonAscii(text)) {
    return EntryError(kIdn, index, text,
                      "non-ASCII (internationalised) names are refused; write the punycode "
                      "form (xn--...)");
  }
  if (HasControlOrSpace(text)) {
    return EntryError(kInvalid, index, text, "spaces and control characters are not allowed");
  }
  if (absl::StrContains(text, "://") || text.find_first_of("/@?#") != absl::string_view::npos) {
    return EntryError(kInvalid, index, text,
                      "write a host (\"api.example.com\"), not a URL or user@host");
  }
  return absl::OkStatus();
}

// A bracketed IPv6 address, "[literal]" or "[literal]:port": the address is
// taken into `entry`, the port's text into `port_text`.
absl::Status ParseBracketed(size_t index, absl::string_view text, AllowEntry& entry,
                            std::optional<absl::string_view>& port_text) {
  const size_t close = text.find(']');
  if (close == absl::string_view::npos) {
    return EntryError(kInvalid, index, text, "an IPv6 address needs its closing ']'");
  }
  absl::string_view rest = text.substr(close + 1);
  if (!rest.empty()) {
    if (rest[0] != ':') return EntryError(kInvalid, index, text, "expected ':port' after ']'");
    port_text = rest.substr(1);
  }
  std::optional<IpAddress> address = ParseIpv6(text.substr(1, close - 1));
  if (!address.has_value()) {
    return EntryError(kInvalid, index, text,
                      "not an IPv6 address (zone indexes such as %eth0 are not allowed)");
  }
  entry.kind = AllowEntry::Kind::kAddress;
  entry.address = *address;
  return absl::OkStatus();
}

// The host part of an unbracketed entry: an IPv4 address, "*.domain" or a
// host name.
absl::Status ParseHost(size_t index, absl::string_view text, absl::string_view host,
                       AllowEntry& entry) {
  std::string name = NormaliseName(host);
  if (std::optional<IpAddress> v4 = ParseIpv4(name)) {
    entry.kind = AllowEntry::Kind::kAddress;
    entry.address = *v4;
    return absl::OkStatus();
  }
  if (name.find('*') != std::string::npos) {
    if (!absl::StartsWith(name, "*.") || name.find('*', 1) != std::string::npos) {
      return EntryError(kBadWildcard, index, text,
                        "'*' is allowed only as the whole leftmost label, as in \"*.example.com\"");
    }
    name.erase(0, 2);
    if (name.find('.') == std::string::npos) {
      return EntryError(kBadWildcard, index, text,
                        "a wildcard over a single label (a top-level domain) is too broad");
    }
    entry.kind = AllowEntry::Kind::kWildcard;
  }
  if (LooksLikeLooseIpv4(name)) {
    return EntryError(kLooseIpv4, index, text,
                      "a numeric host must be a dotted quad such as 127.0.0.1 (resolvers read "
                      "this spelling as some other address)");
  }
  if (!IsValidName(name)) {
    return EntryError(kInvalid, index, text,
                      "not a host name, *.domain, IPv4 address or [IPv6] address");
  }
  entry.name = std::move(name);
  return absl::OkStatus();
}

absl::StatusOr<AllowEntry> ParseEntry(size_t index, absl::string_view text) {
  AllowEntry entry;
  entry.text = std::string(text);
  absl::Status valid = CheckEntryText(index, text);
  if (!valid.ok()) return valid;
  absl::string_view host = text;
  std::optional<absl::string_view> port_text;
  if (text[0] == '[') {
    absl::Status bracketed = ParseBracketed(index, text, entry, port_text);
    if (!bracketed.ok()) return bracketed;
  } else {
    const size_t colons = std::count(text.begin(), text.end(), ':');
    if (colons > 1) {
      return EntryError(kInvalid, index, text,
                        "write an IPv6 address in brackets, e.g. \"[::1]:8443\"");
    }
    if (colons == 1) {
      const size_t colon = text.find(':');
      host = text.substr(0, colon);
      port_text = text.substr(colon + 1);
    }
  }
  if (port_text.has_value() && !ParsePort(*port_text, &entry.port)) {
    return EntryError(kBadPort, index, text, "a port must be a decimal number from 1 to 65535");
  }
  if (entry.kind == AllowEntry::Kind::kAddress) return entry;
  absl::Status parsed = ParseHost(index, text, host, entry);
  if (!parsed.ok()) return parsed;
  return entry;
}

std::string EntryToString(const AllowEntry& entry) {
  switch (entry.kind) {
    case AllowEntry::Kind::kName:
      return absl::StrCat(entry.name, ":", entry.port);
    case AllowEntry::Kind::kWildcard:
      return absl::StrCat("*.", entry.name, ":", entry.port);
    case AllowEntry::Kind::kAddress:
      if (entry.address.v6)
        return absl::StrCat("[", FormatIpAddress(entry.address), "]:", entry.port);
      return absl::StrCat(FormatIpAddress(entry.address), ":", entry.port);
  }
  return "";
}

std::string TargetToString(const EgressTarget& target) {
  if (!target.is_address) return absl::StrCat(target.name, ":", target.port);
  if (target.address.v6)
    return absl::StrCat("[", FormatIpAddress(target.address), "]:", target.port);
  return absl::StrCat(FormatIpAddress(target.address), ":", target.port);
}

bool NameMatches(const AllowEntry& entry, const std::string& name) {
  if (entry.kind == AllowEntry::Kind::kName) return entry.name == name;
  if (entry.kind != AllowEntry::Kind::kWildcard) return false;
  // A proper subdomain: at least one label, then a dot, then the domain.
  return name.size() > entry.name.size() + 1 && absl::EndsWith(name, entry.name) &&
         name[name.size() - entry.name.size() - 1] == '.';
}

EgressDecision Refuse(EgressDecision decision, absl::string_view code, std::string reason) {
  decision.allowed = false;
  decision.reason_code = std::string(code);
  decision.reason = std::move(reason);
  return decision;
}

}  // namespace

absl::StatusOr<Allowlist> ParseAllowHosts(const nlohmann::json& value) {
  if (!value.is_array() || value.empty()) {
    return MakeError(absl::StatusCode::kInvalidArgument, kInvalid,
                     "isolation.container.allow_hosts must be a non-empty array of strings such "
                     "as \"api.example.com\", \"*.example.com\", \"127.0.0.1:8080\", \"[::1]\"",
                     {{"value", value}});
  }
  Allowlist allowlist;
  for (size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_string()) {
      return MakeError(absl::StatusCode::kInvalidArgument, kInvalid,
                       absl::StrCat("isolation.container.allow_hosts[", i, "] must be a string"),
                       {{"index", i}, {"entry", value[i]}});
    }
    absl::StatusOr<AllowEntry> entry = ParseEntry(i, value[i].get_ref<const std::string&>());
    if (!entry.ok()) return entry.status();
    if (std::find(allowlist.entries.begin(), allowlist.entries.end(), *entry) ==
        allowlist.entries.end()) {
      allowlist.entries.push_back(*std::move(entry));
    }
  }
  return allowlist;
}

std::vector<std::string> AllowlistToStrings(const Allowlist& allowlist) {
  std::vector<std::string> out;
  out.reserve(allowlist.entries.size());
  for (const AllowEntry& entry : allowlist.entries) out.push_back(EntryToString(entry));
  return out;
}

EgressDecision Decide(const Allowlist& allowlist, absl::string_view host, uint16_t port) {
  EgressDecision decision;
  decision.target.port = port;
  const std::string shown = absl::StrCat(absl::CHexEscape(host), ":", port);
  if (HasNonAscii(host)) {
    return Refuse(decision, kEgressBadHost,
                  absl::StrCat(shown, ": non-ASCII host names are refused; use the xn-- form"));
  }
  if (port == 0) return Refuse(decision, kEgressBadHost, absl::StrCat(shown, ": port 0"));

  // An IPv6 literal arrives bracketed from a request line, bare from elsewhere.
  absl::string_view literal = host;
  if (absl::StartsWith(literal, "[") && absl::EndsWith(literal, "]") && literal.size() >= 2) {
    literal = literal.substr(1, literal.size() - 2);
  }
  std::optional<IpAddress> address;
  if (literal.find(':') != absl::string_view::npos) {
    address = ParseIpv6(literal);
    if (!address.has_value()) {
      return Refuse(decision, kEgressBadHost, absl::StrCat(shown, ": not an IPv6 address"));
    }
  }
  const std::string name = NormaliseName(host);
  if (!address.has_value()) address = ParseIpv4(name);
  if (address.has_value()) {
    decision.target.is_address = true;
    decision.target.address = *address;
  } else if (LooksLikeLooseIpv4(name)) {
    return Refuse(decision, kEgressBadHost,
                  absl::StrCat(shown, ": numeric hosts must be dotted quads such as 127.0.0.1"));
  } else if (!IsValidName(name)) {
    return Refuse(decision, kEgressBadHost, absl::StrCat(shown, ": not a valid host name"));
  } else {
    decision.target.name = name;
  }

  bool host_listed = false;
  for (const AllowEntry& entry : allowlist.entries) {
    const bool matches = decision.target.is_address ? entry.kind == AllowEntry::Kind::kAddress &&
                                                          entry.address == decision.target.address
                                                    : NameMatches(entry, decision.target.name);
    if (!matches) continue;
    host_listed = true;
    if (entry.port == port) {
      decision.allowed = true;
      decision.reason =
          absl::StrCat(TargetToString(decision.target), " matches ", EntryToString(entry));
      return decision;
    }
  }
  const std::string target = TargetToString(decision.target);
  if (host_listed) {
    return Refuse(decision, kEgressPortNotAllowed,
                  absl::StrCat(target, ": this port is not on isolation.container.allow_hosts"));
  }
  return Refuse(decision, kEgressHostNotAllowed,
                absl::StrCat(target, ": host not on isolation.container.allow_hosts"));
}

EgressDecision CheckResolved(const Allowlist& allowlist, const EgressDecision& allowed,
                             const std::vector<IpAddress>& addresses) {
  if (!allowed.allowed || allowed.target.is_address) return allowed;
  const std::string target = TargetToString(allowed.target);
  if (addresses.empty()) {
    return Refuse(allowed, kEgressNoAddress, absl::StrCat(target, ": the name has no address"));
  }
  for (const IpAddress& raw : addresses) {
    const IpAddress address =
        *IpAddressFromBytes(raw.bytes.data(), raw.v6 ? 16 : 4);  // ::ffff:a.b.c.d -> a.b.c.d
    const AddressClass cls = ClassifyAddress(address);
    if (cls == AddressClass::kPublic) continue;
    const bool listed = std::any_of(
        allowlist.entries.begin(), allowlist.entries.end(), [&](const AllowEntry& entry) {
          return entry.kind == AllowEntry::Kind::kAddress && entry.address == address &&
                 entry.port == allowed.target.port;
        });
    if (listed) continue;
    return Refuse(
        allowed, kEgressAddressRefused,
        absl::StrCat(target, " resolves to ", FormatIpAddress(address), " (", AddressClassName(cls),
                     "); only an address listed as a literal may be reached"));
  }
  return allowed;
}

}  // namespace np
