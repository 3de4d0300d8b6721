#include "core/http_proxy_request.h"

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/errors.h"
#include "core/ip_address.h"

namespace np {
namespace {

constexpr absl::string_view kCrlf = "\r\n";
constexpr absl::string_view kHeadEnd = "\r\n\r\n";

absl::Status Error(absl::string_view code, absl::string_view message,
                   absl::StatusCode canonical = absl::StatusCode::kInvalidArgument) {
  return MakeError(canonical, code, message);
}

// RFC 9110 tchar: the characters of a method or a header name.
bool IsTokenChar(char c) {
  if (absl::ascii_isalnum(static_cast<unsigned char>(c))) return true;
  return absl::string_view("!#$%&'*+-.^_`|~").find(c) != absl::string_view::npos;
}

bool IsToken(absl::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), IsTokenChar);
}

// A header value may hold visible ASCII, space, tab and obs-text, never
// another control character (a NUL, a bare CR).
bool IsFieldValue(absl::string_view value) {
  return std::all_of(value.begin(), value.end(), [](char c) {
    const unsigned char u = static_cast<unsigned char>(c);
    return u == '\t' || (u >= 0x20 && u != 0x7f);
  });
}

bool IsVisible(absl::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    const unsigned char u = static_cast<unsigned char>(c);
    return u > 0x20 && u < 0x7f;
  });
}

// Splits an authority "host[:port]" (host a reg-name, a dotted quad or
// "[IPv6]") and checks its shape; the allowlist checks the host itself.
absl::Status ParseAuthority(absl::string_view authority, bool port_required, uint16_t default_port,
                            std::string* host, uint16_t* port) {
  if (authority.empty()) return Error("proxy-bad-target", "the target has no host");
  if (authority.find('@') != absl::string_view::npos) {
    return Error("proxy-bad-target", "userinfo ('@') in the target is refused");
  }
  absl::string_view host_part = authority;
  absl::string_view port_part;
  bool has_port = false;
  if (authority[0] == '[') {
    size_t close = authority.find(']');
    if (close == absl::string_view::npos) return Error("proxy-bad-target", "unclosed '[' in host");
    host_part = authority.substr(0, close + 1);
    absl::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') return Error("proxy-bad-target", "expected ':port' after ']'");
      port_part = rest.substr(1);
      has_port = true;
    }
  } else {
    size_t colon = authority.find(':');
    if (colon != absl::string_view::npos) {
      host_part = authority.substr(0, colon);
      port_part = authority.substr(colon + 1);
      has_port = true;
    }
  }
  if (host_part.empty() || host_part == "[]") return Error("proxy-bad-target", "empty host");
  if (has_port) {
    if (!ParsePort(port_part, port)) {
      return Error("proxy-bad-target", "the port must be a decimal number from 1 to 65535");
    }
  } else if (port_required) {
    return Error("proxy-bad-target", "CONNECT needs host:port");
  } else {
    *port = default_port;
  }
  *host = std::string(host_part);
  return absl::OkStatus();
}

struct Header {
  absl::string_view name;
  absl::string_view value;
};

absl::StatusOr<std::vector<Header>> ParseHeaders(const std::vector<absl::string_view>& lines) {
  std::vector<Header> headers;
  for (size_t i = 1; i < lines.size(); ++i) {
    absl::string_view line = lines[i];
    if (headers.size() >= kMaxProxyHeaders) {
      return Error("proxy-bad-header", absl::StrCat("more than ", kMaxProxyHeaders, " headers"));
    }
    if (!line.empty() && (line[0] == ' ' || line[0] == '\t')) {
      return Error("proxy-bad-header", "folded header lines are refused");
    }
    size_t colon = line.find(':');
    if (colon == absl::string_view::npos || !IsToken(line.substr(0, colon))) {
      return Error("proxy-bad-header", "a header line must be name: value");
    }
    absl::string_view value = absl::StripAsciiWhitespace(line.substr(colon + 1));
    if (!IsFieldValue(value)) return Error("proxy-bad-header", "control character in a header");
    headers.push_back({line.substr(0, colon), value});
  }
  return headers;
}

// Headers meant for this hop only, plus Host, which is rebuilt from the URI
// (RFC 9112 3.2.2) so the upstream cannot be told a different host than the
// one the allowlist checked.
bool IsDropped(absl::string_view name, const std::vector<std::string>& connection_tokens) {
  static constexpr absl::string_view kHopByHop[] = {"host",
                                                    "connection",
                                                    "proxy-connection",
                                                    "keep-alive",
                                                    "proxy-authorization",
                                                    "proxy-authenticate",
                                                    "te",
                                                    "upgrade"};
  for (absl::string_view drop : kHopByHop) {
    if (absl::EqualsIgnoreCase(name, drop)) return true;
  }
  for (const std::string& token : connection_tokens) {
    if (absl::EqualsIgnoreCase(name, token)) return true;
  }
  return false;
}

std::string BuildForwardHead(absl::string_view method, absl::string_view origin,
                             absl::string_view version, absl::string_view authority,
                             const std::vector<Header>& headers) {
  std::vector<std::string> connection_tokens;
  for (const Header& header : headers) {
    if (!absl::EqualsIgnoreCase(header.name, "connection")) continue;
    for (absl::string_view token : absl::StrSplit(header.value, ',')) {
      token = absl::StripAsciiWhitespace(token);
      if (!token.empty()) connection_tokens.emplace_back(token);
    }
  }
  std::string out =
      absl::StrCat(method, " ", origin, " ", version, kCrlf, "Host: ", authority, kCrlf);
  for (const Header& header : headers) {
    if (IsDropped(header.name, connection_tokens)) continue;
    absl::StrAppend(&out, header.name, ": ", header.value, kCrlf);
  }
  absl::StrAppend(&out, "Connection: close", kCrlf, kCrlf);
  return out;
}

absl::Status ParseAbsoluteUri(absl::string_view target, ProxyRequest* request,
                              std::string* authority, std::string* origin) {
  size_t scheme_end = target.find("://");
  if (target.empty() || target[0] == '/' || scheme_end == absl::string_view::npos) {
    return Error("proxy-bad-target",
                 "a proxy request needs an absolute URI (http://host/path) or CONNECT host:port");
  }
  if (!absl::EqualsIgnoreCase(target.substr(0, scheme_end), "http")) {
    return Error("proxy-unsupported-scheme",
                 "only http:// is forwarded; https goes through CONNECT");
  }
  if (target.find('#') != absl::string_view::npos) {
    return Error("proxy-bad-target", "a fragment ('#') is not allowed in a request target");
  }
  absl::string_view rest = target.substr(scheme_end + 3);
  size_t path_start = rest.find_first_of("/?");
  absl::string_view auth = rest.substr(0, path_start);
  absl::string_view path =
      path_start == absl::string_view::npos ? absl::string_view() : rest.substr(path_start);
  absl::Status status = ParseAuthority(auth, false, 80, &request->host, &request->port);
  if (!status.ok()) return status;
  *authority = std::string(auth);
  *origin = path.empty() ? "/" : (path[0] == '?' ? absl::StrCat("/", path) : std::string(path));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::optional<ProxyRequest>> ParseProxyRequest(absl::string_view buffer,
                                                              size_t max_head) {
  size_t end = buffer.find(kHeadEnd);
  if (end == absl::string_view::npos || end + kHeadEnd.size() > max_head) {
    if (buffer.size() < max_head && end == absl::string_view::npos) return std::nullopt;
    return Error("proxy-head-too-large",
                 absl::StrCat("the request head is larger than ", max_head, " bytes"),
                 absl::StatusCode::kResourceExhausted);
  }
  absl::string_view head = buffer.substr(0, end);
  // Every line ends in CRLF: a lone CR or LF left inside a line is refused,
  // since other parsers would split there and see a different request.
  std::vector<absl::string_view> lines = absl::StrSplit(head, kCrlf);
  for (absl::string_view line : lines) {
    if (line.find_first_of("\r\n") != absl::string_view::npos) {
      return Error("proxy-bad-request-line", "a bare CR or LF in the request head");
    }
  }

  std::vector<absl::string_view> parts = absl::StrSplit(lines[0], ' ');
  if (parts.size() != 3 || !IsToken(parts[0]) || parts[1].empty() || !IsVisible(parts[1]) ||
      (parts[2] != "HTTP/1.1" && parts[2] != "HTTP/1.0")) {
    return Error("proxy-bad-request-line", "the request line must be METHOD target HTTP/1.x");
  }
  absl::StatusOr<std::vector<Header>> headers = ParseHeaders(lines);
  if (!headers.ok()) return headers.status();

  ProxyRequest request;
  request.method = std::string(parts[0]);
  request.head_size = end + kHeadEnd.size();
  if (request.method == "CONNECT") {
    request.kind = ProxyRequest::Kind::kConnect;
    absl::Status status = ParseAuthority(parts[1], true, 0, &request.host, &request.port);
    if (!status.ok()) return status;
    return request;
  }
  request.kind = ProxyRequest::Kind::kForward;
  std::string authority, origin;
  absl::Status status = ParseAbsoluteUri(parts[1], &request, &authority, &origin);
  if (!status.ok()) return status;
  request.forward_head = BuildForwardHead(parts[0], origin, parts[2], authority, *headers);
  return request;
}

}  // namespace np
