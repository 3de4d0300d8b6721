#include "launcher/egress/refusal_notice.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace np::egress {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Optional;

Allowlist Configured() {
  absl::StatusOr<Allowlist> list =
      ParseAllowHosts(nlohmann::json::array({"registry.npmjs.org", "127.0.0.1:8080"}));
  EXPECT_TRUE(list.ok());
  return *list;
}

EgressRecord Refused(const std::string& host, uint16_t port, absl::string_view code) {
  EgressRecord record;
  record.method = "CONNECT";
  record.host = host;
  record.port = port;
  record.reason_code = std::string(code);
  record.reason = "why";
  return record;
}

TEST(RefusalNoticeTest, NamesTheHostTheKeyAndTheListToPaste) {
  RefusalNotices notices(Configured());
  std::optional<std::string> line =
      notices.Notice(Refused("API.Anthropic.com", 443, kEgressHostNotAllowed));
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(*line,
            "np-exec: egress refused api.anthropic.com:443 (egress-host-not-allowed): the host is "
            "not on isolation.container.allow_hosts; to allow it, add \"api.anthropic.com\" there "
            "(.nubos-pilot/config.json, then np-exec trust): \"allow_hosts\": "
            "[\"registry.npmjs.org\",\"127.0.0.1:8080\",\"api.anthropic.com\"]\n");
  // Another port of a listed host: the entry carries the port.
  EXPECT_THAT(notices.Notice(Refused("registry.npmjs.org", 80, kEgressPortNotAllowed)),
              Optional(HasSubstr("add \"registry.npmjs.org:80\" there")));
  EXPECT_THAT(notices.Notice(Refused("::1", 443, kEgressHostNotAllowed)),
              Optional(HasSubstr("add \"[::1]\" there")));
}

TEST(RefusalNoticeTest, EachHostAndPortOnceAndABoundOnTheCount) {
  RefusalNotices notices(Configured());
  EXPECT_TRUE(notices.Notice(Refused("a.example", 443, kEgressHostNotAllowed)).has_value());
  EXPECT_FALSE(notices.Notice(Refused("a.example", 443, kEgressHostNotAllowed)).has_value());
  EXPECT_FALSE(notices.Notice(Refused("A.EXAMPLE", 443, kEgressHostNotAllowed)).has_value());
  EXPECT_TRUE(notices.Notice(Refused("a.example", 80, kEgressHostNotAllowed)).has_value());
  int lines = 2;
  for (int i = 0; i < 100; ++i) {
    if (notices.Notice(Refused("h" + std::to_string(i) + ".example", 443, kEgressHostNotAllowed))
            .has_value()) {
      ++lines;
    }
  }
  // The bound, then one closing line pointing at the audit log.
  EXPECT_EQ(lines, static_cast<int>(kMaxRefusalNotices) + 1);
}

TEST(RefusalNoticeTest, OnlyTheAllowlistsRefusalsAndNoControlBytes) {
  RefusalNotices notices(Configured());
  EgressRecord allowed = Refused("registry.npmjs.org", 443, "");
  allowed.allowed = true;
  EXPECT_FALSE(notices.Notice(allowed).has_value());
  EgressRecord unreachable = Refused("registry.npmjs.org", 443, "egress-connect-failed");
  unreachable.allowed = true;
  EXPECT_FALSE(notices.Notice(unreachable).has_value());
  EXPECT_FALSE(notices.Notice(Refused("x", 443, "egress-head-timeout")).has_value());
  // A name resolving into loopback: the reason, and what would let it through.
  EXPECT_THAT(notices.Notice(Refused("localhost", 443, kEgressAddressRefused)),
              Optional(HasSubstr("lists that address itself with its port")));
  std::optional<std::string> hostile =
      notices.Notice(Refused("evil\x1b[2J\nx.example", 443, kEgressBadHost));
  ASSERT_TRUE(hostile.has_value());
  EXPECT_THAT(*hostile, Not(HasSubstr("\x1b")));
  EXPECT_EQ(hostile->find('\n'), hostile->size() - 1);
}

}  // namespace
}  // namespace np::egress
