#include "core/allowlist.h"

#include <string>
#include <vector>

#include "core/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace np {
namespace {

using ::testing::ElementsAre;

Allowlist MustParse(const nlohmann::json& value) {
  absl::StatusOr<Allowlist> allowlist = ParseAllowHosts(value);
  EXPECT_TRUE(allowlist.ok()) << allowlist.status();
  return allowlist.ok() ? *allowlist : Allowlist{};
}

IpAddress Ip(const char* text) {
  std::optional<IpAddress> address = ParseIpv4(text);
  if (!address.has_value()) address = ParseIpv6(text);
  EXPECT_TRUE(address.has_value()) << text;
  return address.value_or(IpAddress{});
}

TEST(AllowlistTest, ParsesEveryEntryFormIntoItsCanonicalForm) {
  Allowlist allowlist = MustParse({"api.Example.com", "example.org:8080", "*.GitHub.com.",
                                   "127.0.0.1:8080", "10.0.0.5", "[::1]", "[2001:DB8::1]:8443",
                                   "[::ffff:127.0.0.1]:9000", "api.example.com"});
  EXPECT_THAT(
      AllowlistToStrings(allowlist),
      ElementsAre("api.example.com:443", "example.org:8080", "*.github.com:443", "127.0.0.1:8080",
                  "10.0.0.5:443", "[::1]:443", "[2001:db8::1]:8443", "127.0.0.1:9000"));
}

TEST(AllowlistTest, RefusesBadValuesWithCodes) {
  struct Case {
    nlohmann::json value;
    const char* code;
  } cases[] = {
      {nlohmann::json::array(), "isolation-invalid-allow-hosts"},
      {"example.com", "isolation-invalid-allow-hosts"},
      {nullptr, "isolation-invalid-allow-hosts"},
      {{{"host", "example.com"}}, "isolation-invalid-allow-hosts"},
      {{42}, "isolation-invalid-allow-hosts"},
      {{""}, "isolation-invalid-allow-hosts"},
      {{"exa mple.com"}, "isolation-invalid-allow-hosts"},
      {{"example.com\n"}, "isolation-invalid-allow-hosts"},
      {{std::string("a\0b.com", 7)}, "isolation-invalid-allow-hosts"},
      {{"http://example.com"}, "isolation-invalid-allow-hosts"},
      {{"example.com/path"}, "isolation-invalid-allow-hosts"},
      {{"user@example.com"}, "isolation-invalid-allow-hosts"},
      {{"a..b.com"}, "isolation-invalid-allow-hosts"},
      {{"-a.com"}, "isolation-invalid-allow-hosts"},
      {{"."}, "isolation-invalid-allow-hosts"},
      {{std::string(64, 'a') + ".com"}, "isolation-invalid-allow-hosts"},
      {{"::1"}, "isolation-invalid-allow-hosts"},
      {{"[::1"}, "isolation-invalid-allow-hosts"},
      {{"[::1]8080"}, "isolation-invalid-allow-hosts"},
      {{"[fe80::1%eth0]"}, "isolation-invalid-allow-hosts"},
      {{"[127.0.0.1]"}, "isolation-invalid-allow-hosts"},
      {{"[example.com]"}, "isolation-invalid-allow-hosts"},
      {{"example.com:"}, "isolation-allow-hosts-bad-port"},
      {{"example.com:0"}, "isolation-allow-hosts-bad-port"},
      {{"example.com:65536"}, "isolation-allow-hosts-bad-port"},
      {{"example.com:-1"}, "isolation-allow-hosts-bad-port"},
      {{"example.com:+80"}, "isolation-allow-hosts-bad-port"},
      {{"example.com:080"}, "isolation-allow-hosts-bad-port"},
      {{"example.com:http"}, "isolation-allow-hosts-bad-port"},
      {{"[::1]:99999"}, "isolation-allow-hosts-bad-port"},
      {{"bücher.example"}, "isolation-allow-hosts-idn"},
      {{"example.com\xef\xbc\x8e"
        "evil.com"},
       "isolation-allow-hosts-idn"},  // fullwidth dot
      {{"*"}, "isolation-allow-hosts-bad-wildcard"},
      {{"*.com"}, "isolation-allow-hosts-bad-wildcard"},
      {{"*example.com"}, "isolation-allow-hosts-bad-wildcard"},
      {{"api.*.example.com"}, "isolation-allow-hosts-bad-wildcard"},
      {{"*.*.example.com"}, "isolation-allow-hosts-bad-wildcard"},
      {{"a*.example.com"}, "isolation-allow-hosts-bad-wildcard"},
      {{"2130706433"}, "isolation-allow-hosts-loose-ipv4"},
      {{"0177.0.0.1"}, "isolation-allow-hosts-loose-ipv4"},
      {{"127.1"}, "isolation-allow-hosts-loose-ipv4"},
      {{"0x7f.0.0.1"}, "isolation-allow-hosts-loose-ipv4"},
      {{"*.10.0.0"}, "isolation-allow-hosts-loose-ipv4"},
      {{"example.com", "ok.org", "bad:port"}, "isolation-allow-hosts-bad-port"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Allowlist> allowlist = ParseAllowHosts(c.value);
    ASSERT_FALSE(allowlist.ok()) << c.value.dump();
    EXPECT_EQ(ErrorCode(allowlist.status()), c.code) << c.value.dump();
    EXPECT_EQ(allowlist.status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(AllowlistTest, ErrorDetailsNameTheEntry) {
  absl::StatusOr<Allowlist> allowlist = ParseAllowHosts({"example.com", "*.com"});
  ASSERT_FALSE(allowlist.ok());
  nlohmann::json details = ErrorDetails(allowlist.status());
  EXPECT_EQ(details["index"], 1);
  EXPECT_EQ(details["entry"], "*.com");
}

struct DecideCase {
  const char* host;
  uint16_t port;
  const char* code;  // "" when allowed
};

void ExpectDecisions(const Allowlist& allowlist, const std::vector<DecideCase>& cases) {
  for (const DecideCase& c : cases) {
    EgressDecision decision = Decide(allowlist, c.host, c.port);
    EXPECT_EQ(decision.reason_code, c.code) << c.host << ":" << c.port << " " << decision.reason;
    EXPECT_EQ(decision.allowed, std::string(c.code).empty()) << c.host << ":" << c.port;
    EXPECT_FALSE(decision.reason.empty());
    EXPECT_EQ(decision.reason.find('\n'), std::string::npos);
  }
}

TEST(AllowlistTest, NamesMatchExactlyCaseInsensitivelyWithTrailingDotIgnored) {
  Allowlist allowlist = MustParse({"api.example.com", "example.org:8080"});
  ExpectDecisions(allowlist, {
                                 {"api.example.com", 443, ""},
                                 {"API.EXAMPLE.COM", 443, ""},
                                 {"api.example.com.", 443, ""},
                                 {"example.org", 8080, ""},
                                 {"api.example.com", 80, "egress-port-not-allowed"},
                                 {"api.example.com", 4430, "egress-port-not-allowed"},
                                 {"example.org", 443, "egress-port-not-allowed"},
                                 {"example.com", 443, "egress-host-not-allowed"},
                                 {"x.api.example.com", 443, "egress-host-not-allowed"},
                                 {"api.example.com.evil.com", 443, "egress-host-not-allowed"},
                                 {"evilapi.example.com", 443, "egress-host-not-allowed"},
                                 {"api.example.co", 443, "egress-host-not-allowed"},
                                 {"api.example.com..", 443, "egress-bad-host"},
                                 {"api.example.com:443", 443, "egress-bad-host"},
                                 {"api.example.com/", 443, "egress-bad-host"},
                                 {"", 443, "egress-bad-host"},
                                 {"api.example.com", 0, "egress-bad-host"},
                                 {"\xd0\xb0pi.example.com", 443, "egress-bad-host"},  // Cyrillic a
                             });
}

TEST(AllowlistTest, WildcardsMatchSubdomainsOnlyNeverTheDomainOrASuffix) {
  Allowlist allowlist = MustParse({"*.domain.com"});
  ExpectDecisions(allowlist, {
                                 {"a.domain.com", 443, ""},
                                 {"a.b.domain.com", 443, ""},
                                 {"A.Domain.Com.", 443, ""},
                                 {"domain.com", 443, "egress-host-not-allowed"},
                                 {"evil-domain.com", 443, "egress-host-not-allowed"},
                                 {"evildomain.com", 443, "egress-host-not-allowed"},
                                 {".domain.com", 443, "egress-bad-host"},
                                 {"a.domain.com.evil.net", 443, "egress-host-not-allowed"},
                                 {"a.domain.co", 443, "egress-host-not-allowed"},
                                 {"a.domain.com", 80, "egress-port-not-allowed"},
                             });
}

TEST(AllowlistTest, LiteralsMatchByValueNeverByName) {
  Allowlist allowlist =
      MustParse({"127.0.0.1:8080", "[::1]:8443", "localhost:9000", "*.example.com"});
  ExpectDecisions(allowlist,
                  {
                      {"127.0.0.1", 8080, ""},
                      {"[::ffff:127.0.0.1]", 8080, ""},
                      {"::ffff:7f00:1", 8080, ""},
                      {"[::1]", 8443, ""},
                      {"[0:0:0:0:0:0:0:1]", 8443, ""},
                      {"::1", 8443, ""},
                      {"127.0.0.1", 8081, "egress-port-not-allowed"},
                      {"127.0.0.2", 8080, "egress-host-not-allowed"},
                      {"[::1]", 8080, "egress-port-not-allowed"},
                      {"2130706433", 8080, "egress-bad-host"},
                      {"0177.0.0.1", 8080, "egress-bad-host"},
                      {"127.1", 8080, "egress-bad-host"},
                      {"0x7f000001", 8080, "egress-bad-host"},
                      {"127.0.0.1.", 8080, ""},
                      {"[127.0.0.1]", 8080, "egress-bad-host"},
                      {"[fe80::1%25eth0]", 8443, "egress-bad-host"},
                      {"localhost", 8080, "egress-port-not-allowed"},
                      {"localhost", 9000, ""},  // a name: CheckResolved has the last word
                      {"127.0.0.1", 9000, "egress-port-not-allowed"},  // the name adds no literal
                      {"127.0.0.3", 9000, "egress-host-not-allowed"},
                      {"1.2.3.4.example.com", 443, ""},  // a name, resolved by DNS
                  });
}

TEST(AllowlistTest, ANulByteNeverCutsAHostShort) {
  Allowlist allowlist = MustParse({"api.example.com", "127.0.0.1:8080"});
  for (const std::string& host :
       {std::string("api.example.com\0.evil.net", 25), std::string("api.example.com\0", 16),
        std::string("127.0.0.1\0", 10), std::string("\0", 1)}) {
    EgressDecision decision = Decide(allowlist, host, host[0] == '1' ? 8080 : 443);
    EXPECT_FALSE(decision.allowed);
    EXPECT_EQ(decision.reason_code, "egress-bad-host");
    EXPECT_EQ(decision.reason.find('\0'), std::string::npos) << "escaped in the reason";
  }
}

TEST(AllowlistTest, ResolvedAddressesMustBePublicUnlessListedAsLiterals) {
  Allowlist allowlist = MustParse({"rebind.example.com", "internal.example.com", "10.0.0.5",
                                   "127.0.0.1:8080", "local.test:8080"});
  struct Case {
    const char* host;
    uint16_t port;
    std::vector<const char*> addresses;
    const char* code;
  } cases[] = {
      {"rebind.example.com", 443, {"93.184.216.34"}, ""},
      {"rebind.example.com", 443, {"2606:2800:220:1::"}, ""},
      {"rebind.example.com", 443, {"127.0.0.1"}, "egress-address-refused"},
      {"rebind.example.com", 443, {"93.184.216.34", "169.254.169.254"}, "egress-address-refused"},
      {"rebind.example.com", 443, {"::ffff:169.254.169.254"}, "egress-address-refused"},
      {"rebind.example.com", 443, {"::ffff:7f00:1"}, "egress-address-refused"},
      {"rebind.example.com", 443, {"fd00:ec2::254"}, "egress-address-refused"},
      {"rebind.example.com", 443, {"0.0.0.0"}, "egress-address-refused"},
      {"rebind.example.com", 443, {"192.168.0.1"}, "egress-address-refused"},
      {"rebind.example.com", 443, {"100.64.1.1"}, "egress-address-refused"},
      {"rebind.example.com", 443, {"64:ff9b::7f00:1"}, "egress-address-refused"},
      {"rebind.example.com", 443, {}, "egress-no-address"},
      {"internal.example.com", 443, {"10.0.0.5"}, ""},
      {"internal.example.com", 443, {"10.0.0.6"}, "egress-address-refused"},
      {"local.test", 8080, {"127.0.0.1"}, ""},
      {"local.test", 8080, {"::1"}, "egress-address-refused"},
  };
  for (const Case& c : cases) {
    EgressDecision first = Decide(allowlist, c.host, c.port);
    ASSERT_TRUE(first.allowed) << c.host << " " << first.reason;
    std::vector<IpAddress> addresses;
    for (const char* text : c.addresses) addresses.push_back(Ip(text));
    EgressDecision second = CheckResolved(allowlist, first, addresses);
    EXPECT_EQ(second.reason_code, c.code) << c.host << " " << second.reason;
    EXPECT_EQ(second.allowed, std::string(c.code).empty()) << c.host;
  }

  // The listed address on another port does not make the name's address reachable.
  Allowlist other_port = MustParse({"rebind.example.com", "127.0.0.1:8080"});
  EgressDecision first = Decide(other_port, "rebind.example.com", 443);
  EXPECT_EQ(CheckResolved(other_port, first, {Ip("127.0.0.1")}).reason_code,
            "egress-address-refused");
  // A refusal passes through unchanged.
  EgressDecision refused = Decide(other_port, "nope.example.com", 443);
  EXPECT_EQ(CheckResolved(other_port, refused, {Ip("8.8.8.8")}).reason_code,
            "egress-host-not-allowed");
}

}  // namespace
}  // namespace np
