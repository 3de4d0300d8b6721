#include "core/http_proxy_request.h"

#include <string>

#include "core/errors.h"
#include "gtest/gtest.h"

namespace np {
namespace {

ProxyRequest MustParse(const std::string& buffer) {
  absl::StatusOr<std::optional<ProxyRequest>> request = ParseProxyRequest(buffer);
  EXPECT_TRUE(request.ok()) << request.status();
  EXPECT_TRUE(request.ok() && request->has_value()) << buffer;
  return request.ok() && request->has_value() ? **request : ProxyRequest{};
}

std::string CodeOf(const std::string& buffer) {
  absl::StatusOr<std::optional<ProxyRequest>> request = ParseProxyRequest(buffer);
  if (request.ok()) return request->has_value() ? "ok" : "incomplete";
  return ErrorCode(request.status());
}

TEST(HttpProxyRequestTest, ParsesConnect) {
  const std::string head =
      "CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n"
      "Proxy-Authorization: Basic eDp5\r\n\r\n";
  ProxyRequest request = MustParse(head + "\x16\x03\x01");
  EXPECT_EQ(request.kind, ProxyRequest::Kind::kConnect);
  EXPECT_EQ(request.method, "CONNECT");
  EXPECT_EQ(request.host, "api.example.com");
  EXPECT_EQ(request.port, 443);
  EXPECT_EQ(request.head_size, head.size());
  EXPECT_TRUE(request.forward_head.empty());

  ProxyRequest v6 = MustParse("CONNECT [::1]:8443 HTTP/1.1\r\n\r\n");
  EXPECT_EQ(v6.host, "[::1]");
  EXPECT_EQ(v6.port, 8443);
}

TEST(HttpProxyRequestTest, ParsesAbsoluteUriAndRewritesToOriginForm) {
  const std::string head =
      "POST http://Example.com:8080/a/b?c=d HTTP/1.1\r\n"
      "Host: evil.example\r\n"
      "User-Agent: curl/7.88\r\n"
      "Proxy-Connection: keep-alive\r\n"
      "Proxy-Authorization: Basic c2VjcmV0\r\n"
      "Connection: keep-alive, X-Hop\r\n"
      "X-Hop: 1\r\n"
      "Keep-Alive: timeout=5\r\n"
      "TE: trailers\r\n"
      "Upgrade: websocket\r\n"
      "Content-Length:   5  \r\n"
      "\r\n";
  ProxyRequest request = MustParse(head + "hello");
  EXPECT_EQ(request.kind, ProxyRequest::Kind::kForward);
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.host, "Example.com");
  EXPECT_EQ(request.port, 8080);
  EXPECT_EQ(request.head_size, head.size());
  EXPECT_EQ(request.forward_head,
            "POST /a/b?c=d HTTP/1.1\r\n"
            "Host: Example.com:8080\r\n"
            "User-Agent: curl/7.88\r\n"
            "Content-Length: 5\r\n"
            "Connection: close\r\n"
            "\r\n");
}

TEST(HttpProxyRequestTest, DefaultsPortAndPath) {
  struct Case {
    const char* line;
    const char* host;
    uint16_t port;
    const char* request_line;
  } cases[] = {
      {"GET http://example.com HTTP/1.1", "example.com", 80, "GET / HTTP/1.1"},
      {"GET HTTP://example.com/ HTTP/1.0", "example.com", 80, "GET / HTTP/1.0"},
      {"GET http://example.com?q HTTP/1.1", "example.com", 80, "GET /?q HTTP/1.1"},
      {"HEAD http://127.0.0.1:8080/x HTTP/1.1", "127.0.0.1", 8080, "HEAD /x HTTP/1.1"},
      {"GET http://[::1]:81/ HTTP/1.1", "[::1]", 81, "GET / HTTP/1.1"},
  };
  for (const Case& c : cases) {
    ProxyRequest request = MustParse(std::string(c.line) + "\r\n\r\n");
    EXPECT_EQ(request.host, c.host) << c.line;
    EXPECT_EQ(request.port, c.port) << c.line;
    EXPECT_EQ(request.forward_head.substr(0, request.forward_head.find("\r\n")), c.request_line);
  }
}

TEST(HttpProxyRequestTest, WaitsForTheWholeHead) {
  EXPECT_EQ(CodeOf(""), "incomplete");
  EXPECT_EQ(CodeOf("CONNECT a.com:443 HTTP/1.1\r\n"), "incomplete");
  EXPECT_EQ(CodeOf("CONNECT a.com:443 HTTP/1.1\r\n\r"), "incomplete");
  EXPECT_EQ(CodeOf("CONNECT a.com:443 HTTP/1.1\r\n\r\n"), "ok");
}

TEST(HttpProxyRequestTest, LimitsTheHeadSize) {
  std::string big = "GET http://a.com/ HTTP/1.1\r\nX: " + std::string(kMaxProxyHeadBytes, 'a');
  EXPECT_EQ(CodeOf(big), "proxy-head-too-large");
  EXPECT_EQ(CodeOf(big + "\r\n\r\n"), "proxy-head-too-large");
  absl::StatusOr<std::optional<ProxyRequest>> small = ParseProxyRequest("CONNECT a.com:1", 8);
  EXPECT_EQ(ErrorCode(small.status()), "proxy-head-too-large");
  EXPECT_EQ(small.status().code(), absl::StatusCode::kResourceExhausted);
  std::string many = "GET http://a.com/ HTTP/1.1\r\n";
  for (size_t i = 0; i <= kMaxProxyHeaders; ++i) many += "X: 1\r\n";
  EXPECT_EQ(CodeOf(many + "\r\n"), "proxy-bad-header");
}

TEST(HttpProxyRequestTest, RefusesHostileHeads) {
  struct Case {
    std::string head;
    const char* code;
  } cases[] = {
      {"GET /path HTTP/1.1\r\nHost: a.com\r\n\r\n", "proxy-bad-target"},
      {"GET * HTTP/1.1\r\n\r\n", "proxy-bad-target"},
      {"GET https://a.com/ HTTP/1.1\r\n\r\n", "proxy-unsupported-scheme"},
      {"GET ftp://a.com/ HTTP/1.1\r\n\r\n", "proxy-unsupported-scheme"},
      {"GET http://allowed.com@evil.com/ HTTP/1.1\r\n\r\n", "proxy-bad-target"},
      {"GET http://a.com/#frag HTTP/1.1\r\n\r\n", "proxy-bad-target"},
      {"GET http:///path HTTP/1.1\r\n\r\n", "proxy-bad-target"},
      {"GET http://a.com:0/ HTTP/1.1\r\n\r\n", "proxy-bad-target"},
      {"GET http://a.com:65536/ HTTP/1.1\r\n\r\n", "proxy-bad-target"},
      {"GET http://a.com:/ HTTP/1.1\r\n\r\n", "proxy-bad-target"},
      {"GET http://[::1/ HTTP/1.1\r\n\r\n", "proxy-bad-target"},
      {"CONNECT a.com HTTP/1.1\r\n\r\n", "proxy-bad-target"},
      {"CONNECT a.com:08 HTTP/1.1\r\n\r\n", "proxy-bad-target"},
      {"CONNECT :443 HTTP/1.1\r\n\r\n", "proxy-bad-target"},
      {"CONNECT []:443 HTTP/1.1\r\n\r\n", "proxy-bad-target"},
      {"CONNECT [::1]x:443 HTTP/1.1\r\n\r\n", "proxy-bad-target"},
      {"CONNECT a.com:443 HTTP/2.0\r\n\r\n", "proxy-bad-request-line"},
      {"CONNECT a.com:443\r\n\r\n", "proxy-bad-request-line"},
      {"CONNECT  a.com:443 HTTP/1.1\r\n\r\n", "proxy-bad-request-line"},
      {"CONNECT a.com:443 HTTP/1.1 \r\n\r\n", "proxy-bad-request-line"},
      {"G(T http://a.com/ HTTP/1.1\r\n\r\n", "proxy-bad-request-line"},
      {"\r\nGET http://a.com/ HTTP/1.1\r\n\r\n", "proxy-bad-request-line"},
      {"GET http://a.com/\x01 HTTP/1.1\r\n\r\n", "proxy-bad-request-line"},
      {"GET http://a.com/ HTTP/1.1\nX: 1\r\n\r\n", "proxy-bad-request-line"},
      {"GET http://a.com/ HTTP/1.1\r\nX: 1\rY: 2\r\n\r\n", "proxy-bad-request-line"},
      {"GET http://a.com/ HTTP/1.1\r\nX : 1\r\n\r\n", "proxy-bad-header"},
      {"GET http://a.com/ HTTP/1.1\r\nX: 1\r\n continued\r\n\r\n", "proxy-bad-header"},
      {"GET http://a.com/ HTTP/1.1\r\nNoColon\r\n\r\n", "proxy-bad-header"},
      {"GET http://a.com/ HTTP/1.1\r\n: empty\r\n\r\n", "proxy-bad-header"},
      {std::string("GET http://a.com/ HTTP/1.1\r\nX: a\0b\r\n\r\n", 38), "proxy-bad-header"},
      {"\r\n\r\n", "proxy-bad-request-line"},
      {std::string("CONNECT a.com\0.evil:443 HTTP/1.1\r\n\r\n", 36), "proxy-bad-request-line"},
      {std::string("GET http://a.com\0/ HTTP/1.1\r\n\r\n", 31), "proxy-bad-request-line"},
  };
  for (const Case& c : cases) EXPECT_EQ(CodeOf(c.head), c.code) << c.head;
}

TEST(HttpProxyRequestTest, TrailingBytesDoNotChangeTheParse) {
  const std::string head = "GET http://a.com/x HTTP/1.1\r\nAccept: */*\r\n\r\n";
  ProxyRequest alone = MustParse(head);
  ProxyRequest with_body = MustParse(head + "GET http://evil.com/ HTTP/1.1\r\n\r\n");
  EXPECT_EQ(alone.forward_head, with_body.forward_head);
  EXPECT_EQ(alone.host, with_body.host);
  EXPECT_EQ(alone.head_size, with_body.head_size);
}

}  // namespace
}  // namespace np
