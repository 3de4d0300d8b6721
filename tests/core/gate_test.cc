#include "core/gate.h"

#include <string>
#include <vector>

#include "core/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace np {
namespace {

using ::testing::HasSubstr;

ProbeResult Available(Runtime runtime) {
  ProbeResult probe;
  probe.runtime = runtime;
  probe.available = true;
  probe.bin = "/usr/bin/docker";
  probe.version = "27.0";
  return probe;
}

ProbeResult Unavailable(Runtime runtime, absl::string_view reason) {
  ProbeResult probe;
  probe.runtime = runtime;
  probe.available = false;
  probe.reason = std::string(reason);
  probe.detail = "connect: no such file";
  return probe;
}

const ResolvedTier kContainerFromConfig{Tier::kContainer, TierSource::kConfig};

TEST(GateTest, DirectAndWorktreeAreAlwaysAvailable) {
  const ProbeResult down = Unavailable(Runtime::kDocker, kReasonUnreachable);
  for (Tier tier : {Tier::kDirect, Tier::kWorktree}) {
    for (TierSource from : {TierSource::kDefault, TierSource::kConfig, TierSource::kEnv}) {
      ResolvedTier resolved{tier, from};
      EXPECT_TRUE(AssertTierAvailable(resolved, Runtime::kDocker, nullptr).ok());
      EXPECT_TRUE(AssertTierAvailable(resolved, Runtime::kPodman, &down).ok());
    }
  }
}

TEST(GateTest, ContainerNeedsAWellFormedProbe) {
  ProbeResult no_bin = Available(Runtime::kDocker);
  no_bin.bin.clear();
  const std::vector<std::pair<std::string, ProbeResult>> malformed = {
      {"AvailableWithoutBin", no_bin},
      {"UnknownReason", Unavailable(Runtime::kDocker, "it-was-tuesday")},
      {"EmptyReason", Unavailable(Runtime::kDocker, "")},
      {"OtherRuntimeAvailable", Available(Runtime::kPodman)},
      {"OtherRuntimeUnavailable", Unavailable(Runtime::kBwrap, kReasonNotInstalled)},
  };
  absl::Status none = AssertTierAvailable(kContainerFromConfig, Runtime::kDocker, nullptr);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(ErrorCode(none), "isolation-probe-required");
  for (const auto& [name, probe] : malformed) {
    absl::Status status = AssertTierAvailable(kContainerFromConfig, Runtime::kDocker, &probe);
    ASSERT_FALSE(status.ok()) << name;
    EXPECT_EQ(ErrorCode(status), "isolation-probe-required") << name;
  }
}

TEST(GateTest, ContainerAvailableIsOk) {
  for (Runtime runtime : {Runtime::kDocker, Runtime::kPodman, Runtime::kBwrap}) {
    ProbeResult probe = Available(runtime);
    EXPECT_TRUE(AssertTierAvailable(kContainerFromConfig, runtime, &probe).ok());
  }
}

TEST(GateTest, ContainerUnavailableRefusesAndSaysWhyAndHow) {
  struct Case {
    TierSource from;
    std::string how;  // How to accept direct for this source.
  };
  const std::vector<Case> cases = {
      {TierSource::kConfig, "\"tier\": \"direct\""},
      {TierSource::kOperator, "operator config"},
      {TierSource::kEnv, "NP_EXEC_TIER"},
  };
  for (absl::string_view reason : {kReasonNotInstalled, kReasonUnreachable}) {
    for (const Case& c : cases) {
      ProbeResult probe = Unavailable(Runtime::kDocker, reason);
      absl::Status status =
          AssertTierAvailable({Tier::kContainer, c.from}, Runtime::kDocker, &probe);
      ASSERT_FALSE(status.ok());
      EXPECT_EQ(ErrorCode(status), "isolation-container-unavailable");
      EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
      const std::string message(status.message());
      EXPECT_THAT(message, HasSubstr("instead of falling back to direct"));
      EXPECT_THAT(message, HasSubstr("believe it is contained"));
      EXPECT_THAT(message, HasSubstr(c.how)) << TierSourceName(c.from);
      EXPECT_THAT(message, HasSubstr(std::string(reason)));
      nlohmann::json details = ErrorDetails(status);
      EXPECT_EQ(details["effective_from"], std::string(TierSourceName(c.from)));
      EXPECT_EQ(details["probe"]["reason"], std::string(reason));
    }
  }
}

TEST(GateTest, ProbeJsonShapes) {
  nlohmann::json up = ProbeToJson(Available(Runtime::kDocker));
  EXPECT_EQ(up["available"], true);
  EXPECT_EQ(up["bin"], "/usr/bin/docker");
  EXPECT_EQ(up["version"], "27.0");
  EXPECT_FALSE(up.contains("reason"));
  nlohmann::json down = ProbeToJson(Unavailable(Runtime::kPodman, kReasonNotInstalled));
  EXPECT_EQ(down["available"], false);
  EXPECT_EQ(down["reason"], "runtime-not-installed");
  EXPECT_TRUE(down.contains("detail"));
  EXPECT_FALSE(down.contains("bin"));
}

}  // namespace
}  // namespace np
