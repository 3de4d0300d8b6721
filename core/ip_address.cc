#include "core/ip_address.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace np {
namespace {

constexpr uint8_t kMappedPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

IpAddress V4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  IpAddress address;
  address.bytes[0] = a;
  address.bytes[1] = b;
  address.bytes[2] = c;
  address.bytes[3] = d;
  return address;
}

// Normalises ::ffff:a.b.c.d to a.b.c.d; other addresses pass unchanged.
IpAddress Unmap(const IpAddress& address) {
  if (!address.v6) return address;
  for (int i = 0; i < 12; ++i) {
    if (address.bytes[i] != kMappedPrefix[i]) return address;
  }
  return V4(address.bytes[12], address.bytes[13], address.bytes[14], address.bytes[15]);
}

bool AllZero(const IpAddress& address, int from, int to) {
  for (int i = from; i < to; ++i) {
    if (address.bytes[i] != 0) return false;
  }
  return true;
}

AddressClass ClassifyV4(const uint8_t* b) {
  if (b[0] == 0) return AddressClass::kUnspecified;
  if (b[0] == 127) return AddressClass::kLoopback;
  if (b[0] == 169 && b[1] == 254) return AddressClass::kLinkLocal;
  if (b[0] == 10) return AddressClass::kPrivate;
  if (b[0] == 172 && (b[1] & 0xf0) == 16) return AddressClass::kPrivate;
  if (b[0] == 192 && b[1] == 168) return AddressClass::kPrivate;
  if (b[0] == 100 && (b[1] & 0xc0) == 64) return AddressClass::kPrivate;
  if ((b[0] & 0xf0) == 224) return AddressClass::kMulticast;
  if ((b[0] & 0xf0) == 240) return AddressClass::kReserved;
  if (b[0] == 192 && b[1] == 0 && b[2] == 0) return AddressClass::kReserved;
  if (b[0] == 198 && (b[1] & 0xfe) == 18) return AddressClass::kReserved;
  return AddressClass::kPublic;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool IsHexDigit(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

int HexValue(char c) {
  if (IsDigit(c)) return c - '0';
  return absl::ascii_tolower(static_cast<unsigned char>(c)) - 'a' + 10;
}

// Parses up to 8 colon-separated hex groups (no "::") into `groups`.
bool ParseGroups(absl::string_view text, std::vector<uint16_t>* groups) {
  if (text.empty()) return true;
  for (absl::string_view part : absl::StrSplit(text, ':')) {
    if (part.empty() || part.size() > 4) return false;
    uint16_t value = 0;
    for (char c : part) {
      if (!IsHexDigit(c)) return false;
      value = static_cast<uint16_t>(value * 16 + HexValue(c));
    }
    groups->push_back(value);
  }
  return true;
}

}  // namespace

std::optional<IpAddress> IpAddressFromBytes(const uint8_t* data, size_t size) {
  if (size == 4) return V4(data[0], data[1], data[2], data[3]);
  if (size != 16) return std::nullopt;
  IpAddress address;
  address.v6 = true;
  for (size_t i = 0; i < 16; ++i) address.bytes[i] = data[i];
  return Unmap(address);
}

std::optional<IpAddress> ParseIpv4(absl::string_view text) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, '.');
  if (parts.size() != 4) return std::nullopt;
  uint8_t out[4];
  for (int i = 0; i < 4; ++i) {
    absl::string_view part = parts[i];
    // A leading zero is octal to inet_aton: refuse it rather than guess.
    if (part.empty() || part.size() > 3 || (part.size() > 1 && part[0] == '0')) return std::nullopt;
    int value = 0;
    for (char c : part) {
      if (!IsDigit(c)) return std::nullopt;
      value = value * 10 + (c - '0');
    }
    if (value > 255) return std::nullopt;
    out[i] = static_cast<uint8_t>(value);
  }
  return V4(out[0], out[1], out[2], out[3]);
}

std::optional<IpAddress> ParseIpv6(absl::string_view text) {
  if (text.empty() || text.size() > 45) return std::nullopt;
  // A dotted IPv4 tail stands for the last two groups.
  std::optional<IpAddress> tail;
  size_t last_colon = text.rfind(':');
  if (last_colon == absl::string_view::npos) return std::nullopt;
  if (text.find('.', last_colon) != absl::string_view::npos) {
    tail = ParseIpv4(text.substr(last_colon + 1));
    if (!tail.has_value()) return std::nullopt;
    text = text.substr(0, last_colon + 1);
    // "::1.2.3.4" keeps its "::"; "1::2:1.2.3.4" leaves "1::2:" whose colon
    // only separated the tail.
    if (text.size() < 2 || text.substr(text.size() - 2) != "::") text.remove_suffix(1);
  }
  const size_t wanted = tail.has_value() ? 6 : 8;
  std::vector<uint16_t> head, rest;
  size_t gap = text.find("::");
  if (gap == absl::string_view::npos) {
    if (!ParseGroups(text, &head) || head.size() != wanted) return std::nullopt;
  } else {
    if (text.find("::", gap + 1) != absl::string_view::npos) return std::nullopt;
    if (!ParseGroups(text.substr(0, gap), &head)) return std::nullopt;
    if (!ParseGroups(text.substr(gap + 2), &rest)) return std::nullopt;
    // "::" stands for at least one zero group.
    if (head.size() + rest.size() >= wanted) return std::nullopt;
    head.resize(wanted - rest.size(), 0);
    head.insert(head.end(), rest.begin(), rest.end());
  }
  IpAddress address;
  address.v6 = true;
  for (size_t i = 0; i < head.size(); ++i) {
    address.bytes[2 * i] = static_cast<uint8_t>(head[i] >> 8);
    address.bytes[2 * i + 1] = static_cast<uint8_t>(head[i] & 0xff);
  }
  if (tail.has_value()) {
    for (int i = 0; i < 4; ++i) address.bytes[12 + i] = tail->bytes[i];
  }
  return Unmap(address);
}

bool LooksLikeLooseIpv4(absl::string_view text) {
  if (!text.empty() && text.back() == '.') text.remove_suffix(1);
  if (text.empty() || ParseIpv4(text).has_value()) return false;
  size_t dot = text.rfind('.');
  absl::string_view last = dot == absl::string_view::npos ? text : text.substr(dot + 1);
  if (last.empty()) return false;
  if (last.size() > 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X')) {
    for (char c : last.substr(2)) {
      if (!IsHexDigit(c)) return false;
    }
    return true;
  }
  for (char c : last) {
    if (!IsDigit(c)) return false;
  }
  return true;
}

std::string FormatIpAddress(const IpAddress& address) {
  const uint8_t* b = address.bytes.data();
  if (!address.v6) return absl::StrFormat("%d.%d.%d.%d", b[0], b[1], b[2], b[3]);
  uint16_t groups[8];
  for (int i = 0; i < 8; ++i) groups[i] = static_cast<uint16_t>(b[2 * i] << 8 | b[2 * i + 1]);
  // RFC 5952: the longest run of two or more zero groups, the first on a tie.
  int best = -1, best_len = 1;
  for (int i = 0; i < 8;) {
    if (groups[i] != 0) {
      ++i;
      continue;
    }
    int j = i;
    while (j < 8 && groups[j] == 0) ++j;
    if (j - i > best_len) {
      best = i;
      best_len = j - i;
    }
    i = j;
  }
  std::string out;
  for (int i = 0; i < 8; ++i) {
    if (i == best) {
      out += "::";
      i += best_len - 1;
      continue;
    }
    if (!out.empty() && out.back() != ':') out += ':';
    out += absl::StrFormat("%x", groups[i]);
  }
  return out;
}

AddressClass ClassifyAddress(const IpAddress& raw) {
  const IpAddress address = Unmap(raw);
  const uint8_t* b = address.bytes.data();
  if (!address.v6) return ClassifyV4(b);
  if (AllZero(address, 0, 16)) return AddressClass::kUnspecified;
  if (AllZero(address, 0, 15) && b[15] == 1) return AddressClass::kLoopback;
  // IPv4-compatible ::a.b.c.d (deprecated, still routed by some stacks).
  if (AllZero(address, 0, 12)) return ClassifyV4(b + 12);
  // NAT64 well-known prefix 64:ff9b::/96 reaches the embedded IPv4 address.
  static constexpr uint8_t kNat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
  bool nat64 = true;
  for (int i = 0; i < 12; ++i) nat64 = nat64 && b[i] == kNat64[i];
  if (nat64) return ClassifyV4(b + 12);
  // 6to4 2002:aabb:ccdd::/48 reaches aa.bb.cc.dd.
  if (b[0] == 0x20 && b[1] == 0x02) {
    AddressClass embedded = ClassifyV4(b + 2);
    if (embedded != AddressClass::kPublic) return embedded;
  }
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return AddressClass::kLinkLocal;
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return AddressClass::kPrivate;
  if ((b[0] & 0xfe) == 0xfc) return AddressClass::kUniqueLocal;
  if (b[0] == 0xff) return AddressClass::kMulticast;
  return AddressClass::kPublic;
}

absl::string_view AddressClassName(AddressClass cls) {
  switch (cls) {
    case AddressClass::kPublic:
      return "public";
    case AddressClass::kUnspecified:
      return "unspecified";
    case AddressClass::kLoopback:
      return "loopback";
    case AddressClass::kLinkLocal:
      return "link-local";
    case AddressClass::kPrivate:
      return "private";
    case AddressClass::kUniqueLocal:
      return "unique-local";
    case AddressClass::kMulticast:
      return "multicast";
    case AddressClass::kReserved:
      return "reserved";
  }
  return "reserved";
}

bool ParsePort(absl::string_view text, uint16_t* port) {
  if (text.empty() || text.size() > 5 || text[0] == '0') return false;
  uint32_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint32_t>(c - '0');
  }
  if (value == 0 || value > 65535) return false;
  *port = static_cast<uint16_t>(value);
  return true;
}

}  // namespace np
