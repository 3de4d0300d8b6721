// The head of a request to the per-spawn egress proxy (design.md section 8):
// `CONNECT host:port HTTP/1.1` for a tunnel (TLS), or an absolute-URI request
// such as `GET http://host[:port]/path HTTP/1.1` for plain HTTP (port 80 by
// default). Pure: the proxy in launcher/egress/ reads the bytes and calls this.
//
// The grammar is RFC 9112's, read strictly so that the proxy and the server
// behind it cannot disagree about what was asked: lines end in CRLF (a bare CR
// or LF is an error), no line folding, no whitespace before a header's colon,
// no control characters, no userinfo (`http://allowed@evil/`) and no
// fragment in the target, only the `http` scheme in an absolute URI.
//
// Codes (InvalidArgument unless said):
//   proxy-head-too-large     no blank line within the size limit (ResourceExhausted)
//   proxy-bad-request-line   not `METHOD SP target SP HTTP/1.x`
//   proxy-bad-target         a malformed authority, port or URI; origin-form
//                            (`GET /path`), which a proxy cannot route
//   proxy-unsupported-scheme an absolute URI other than http:// (https goes
//                            through CONNECT)
//   proxy-bad-header         a malformed header line, or too many headers
#ifndef NP_EXEC_CORE_HTTP_PROXY_REQUEST_H_
#define NP_EXEC_CORE_HTTP_PROXY_REQUEST_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace np {

inline constexpr size_t kMaxProxyHeadBytes = 32 * 1024;
inline constexpr size_t kMaxProxyHeaders = 100;

struct ProxyRequest {
  enum class Kind { kConnect, kForward };
  Kind kind = Kind::kConnect;
  std::string method;
  // The host as the request named it: a name, a dotted quad, or an IPv6
  // literal in brackets. Decide (core/allowlist.h) normalises and checks it.
  std::string host;
  uint16_t port = 0;
  // kForward only: the request to send upstream: origin-form request line,
  // Host set from the URI, hop-by-hop headers (Connection and the headers it
  // names, Proxy-Connection, Keep-Alive, Proxy-Authorization,
  // Proxy-Authenticate, TE, Upgrade) removed and `Connection: close` added,
  // so the upstream answers one request and closes.
  std::string forward_head;
  // Bytes of the buffer the head took, through its blank line; what follows
  // is the body (kForward) or the first tunnel bytes (kConnect).
  size_t head_size = 0;
};

// Parses the head at the start of `buffer`. std::nullopt when the blank line
// that ends the head has not arrived yet and `buffer` is still within
// `max_head` bytes; an error as above otherwise.
absl::StatusOr<std::optional<ProxyRequest>> ParseProxyRequest(absl::string_view buffer,
                                                              size_t max_head = kMaxProxyHeadBytes);

}  // namespace np

#endif  // NP_EXEC_CORE_HTTP_PROXY_REQUEST_H_
