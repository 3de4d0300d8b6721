// The requests to a credential host, framed one by one and rewritten: the
// placeholder in the named header becomes the key for that host only, every
// other byte passes unchanged, whatever the framing and however the bytes
// are split.
#include "core/credential_request.h"

#include "core/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace np {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kKey[] = "sk-real-0123456789";
constexpr char kPlaceholder[] = "np-exec-credential-placeholder:ANTHROPIC_API_KEY";

Credential Anthropic() {
  return {"api.anthropic.com", 443, "ANTHROPIC_API_KEY", "x-api-key", "{}"};
}

std::string Request(const std::string& extra_headers, const std::string& body = "",
                    const std::string& host = "api.anthropic.com") {
  return absl::StrCat("POST /v1/messages HTTP/1.1\r\nHost: ", host, "\r\n", extra_headers,
                      "Content-Length: ", body.size(), "\r\n\r\n", body);
}

// Feeds `input` in pieces of `step` bytes; returns what went upstream.
std::string Through(CredentialRequestStream& stream, const std::string& input, size_t step,
                    absl::Status* status = nullptr) {
  std::string out;
  for (size_t at = 0; at < input.size(); at += step) {
    absl::Status fed = stream.Feed(absl::string_view(input).substr(at, step), &out);
    if (!fed.ok()) {
      if (status != nullptr) *status = fed;
      return out;
    }
  }
  return out;
}

TEST(CredentialRequestTest, ThePlaceholderBecomesTheKeyOnEveryKeptAliveRequest) {
  const std::string one = Request(absl::StrCat("x-api-key: ", kPlaceholder, "\r\n"), "{\"a\":1}");
  const std::string input = one + one;
  for (size_t step : {1ul, 7ul, input.size()}) {
    CredentialRequestStream stream(Anthropic(), kKey);
    const std::string out = Through(stream, input, step);
    const std::string expected = Request(absl::StrCat("x-api-key: ", kKey, "\r\n"), "{\"a\":1}");
    EXPECT_EQ(out, expected + expected) << step;
    EXPECT_EQ(stream.requests(), 2);
    EXPECT_EQ(stream.injected(), 2);
  }
}

TEST(CredentialRequestTest, TheFormatWrapsTheKey) {
  Credential openai{"api.openai.com", 443, "OPENAI_API_KEY", "Authorization", "Bearer {}"};
  CredentialRequestStream stream(openai, kKey);
  std::string out;
  ASSERT_TRUE(
      stream
          .Feed(Request("authorization: Bearer np-exec-credential-placeholder:OPENAI_API_KEY\r\n",
                        "", "API.openai.com:443"),
                &out)
          .ok());
  EXPECT_THAT(out, HasSubstr(absl::StrCat("authorization: Bearer ", kKey, "\r\n")));
  EXPECT_EQ(stream.injected(), 1);
}

TEST(CredentialRequestTest, WithoutThePlaceholderNothingIsInjected) {
  const std::string kInputs[] = {
      Request("x-api-key: sk-the-agents-own\r\n"),
      Request(""),
      // Another header holds it: only the named one is ever rewritten.
      Request(absl::StrCat("x-other: ", kPlaceholder, "\r\n")),
      // Not exactly the placeholder.
      Request(absl::StrCat("x-api-key: ", kPlaceholder, "x\r\n")),
      // Twice: ambiguous, left alone.
      Request(absl::StrCat("x-api-key: ", kPlaceholder, "\r\nX-Api-Key: ", kPlaceholder, "\r\n")),
      // Another Host (a CDN could route on it): the key goes to its host only.
      Request(absl::StrCat("x-api-key: ", kPlaceholder, "\r\n"), "", "evil.example.com"),
      Request(absl::StrCat("x-api-key: ", kPlaceholder, "\r\n"), "", "api.anthropic.com:8443"),
  };
  for (const std::string& input : kInputs) {
    CredentialRequestStream stream(Anthropic(), kKey);
    std::string out;
    ASSERT_TRUE(stream.Feed(input, &out).ok()) << input;
    EXPECT_THAT(out, Not(HasSubstr(kKey))) << input;
    EXPECT_EQ(stream.requests(), 1);
    EXPECT_EQ(stream.injected(), 0);
  }
}

TEST(CredentialRequestTest, BodiesPassUntouchedEvenWhenTheyLookLikeAHead) {
  const std::string inner = Request(absl::StrCat("x-api-key: ", kPlaceholder, "\r\n"));
  const std::string input = Request("", inner);
  CredentialRequestStream stream(Anthropic(), kKey);
  EXPECT_EQ(Through(stream, input, 3), input);
  EXPECT_EQ(stream.requests(), 1);
  EXPECT_EQ(stream.injected(), 0);
}

TEST(CredentialRequestTest, ChunkedBodiesAreFramedToTheirEnd) {
  const std::string head = absl::StrCat(
      "POST /v1/messages HTTP/1.1\r\nHost: api.anthropic.com\r\nx-api-key: ", kPlaceholder,
      "\r\nTransfer-Encoding: chunked\r\n\r\n");
  const std::string body = "5;ext=1\r\nhello\r\n10\r\n0123456789abcdef\r\n0\r\nTrailer: x\r\n\r\n";
  const std::string second = Request(absl::StrCat("x-api-key: ", kPlaceholder, "\r\n"));
  CredentialRequestStream stream(Anthropic(), kKey);
  const std::string out = Through(stream, head + body + second, 2);
  // Forwarded as read: sizes in plain hex, extensions and trailers dropped,
  // so a lenient server cannot find the chunks' ends where the proxy does not.
  EXPECT_THAT(out, HasSubstr("5\r\nhello\r\n10\r\n0123456789abcdef\r\n0\r\n\r\n"));
  EXPECT_THAT(out, Not(HasSubstr("ext=1")));
  EXPECT_THAT(out, Not(HasSubstr("Trailer: x")));
  EXPECT_EQ(stream.requests(), 2);
  EXPECT_EQ(stream.injected(), 2);
}

TEST(CredentialRequestTest, AnAbsoluteFormTargetOrTraceNeverGetsTheKey) {
  const std::string header = absl::StrCat("x-api-key: ", kPlaceholder, "\r\n");
  const std::string kInputs[] = {
      // A server routes by the URL's host, whatever Host says.
      absl::StrCat("GET https://other.example/x HTTP/1.1\r\nHost: api.anthropic.com\r\n", header,
                   "\r\n"),
      absl::StrCat("GET https://api.anthropic.com/x HTTP/1.1\r\nHost: api.anthropic.com\r\n",
                   header, "\r\n"),
      // A server may echo a TRACE back.
      absl::StrCat("TRACE / HTTP/1.1\r\nHost: api.anthropic.com\r\n", header, "\r\n"),
  };
  for (const std::string& input : kInputs) {
    CredentialRequestStream stream(Anthropic(), kKey);
    std::string out;
    ASSERT_TRUE(stream.Feed(input, &out).ok()) << input;
    EXPECT_THAT(out, Not(HasSubstr(kKey))) << input;
    EXPECT_EQ(stream.injected(), 0) << input;
  }
}

TEST(CredentialRequestTest, ABareLineEndInAChunkLineIsRefused) {
  const std::string head =
      "POST / HTTP/1.1\r\nHost: api.anthropic.com\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (const std::string& body : {std::string("100;\nXXXX\r\n"), std::string("5\r\r\n"),
                                  std::string("0\r\nTrailer: a\nb\r\n\r\n")}) {
    CredentialRequestStream stream(Anthropic(), kKey);
    absl::Status status;
    Through(stream, head + body, 1, &status);
    EXPECT_EQ(ErrorCode(status), "egress-credential-bad-request") << body;
  }
}

TEST(CredentialRequestTest, AmbiguousFramingIsRefused) {
  const std::string kBad[] = {
      "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +3\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: h\r\n folded\r\n\r\n",
      "POST / HTTP/1.1\r\nHost : h\r\n\r\n",
      "POST /\r\nHost: h\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: h\nX: y\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
      "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nabc\r\n",
  };
  for (const std::string& input : kBad) {
    CredentialRequestStream stream(Anthropic(), kKey);
    std::string out;
    absl::Status status;
    Through(stream, input, input.size(), &status);
    EXPECT_EQ(ErrorCode(status), "egress-credential-bad-request") << input;
  }
  CredentialRequestStream stream(Anthropic(), kKey);
  std::string out;
  EXPECT_EQ(ErrorCode(stream.Feed(std::string(kMaxCredentialHeadBytes + 1, 'a'), &out)),
            "egress-credential-bad-request");
}

TEST(CredentialRequestTest, AfterAnUpgradeTheStreamPassesRawWithoutInjection) {
  const std::string upgrade =
      "GET /ws HTTP/1.1\r\nHost: api.anthropic.com\r\nUpgrade: websocket\r\nConnection: "
      "Upgrade\r\n\r\n";
  const std::string later = Request(absl::StrCat("x-api-key: ", kPlaceholder, "\r\n"));
  CredentialRequestStream stream(Anthropic(), kKey);
  EXPECT_EQ(Through(stream, upgrade + later, 5), upgrade + later);
  EXPECT_EQ(stream.injected(), 0);
}

}  // namespace
}  // namespace np
