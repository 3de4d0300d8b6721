#include "core/tier.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/config.h"
#include "core/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace np {
namespace {

using ::testing::HasSubstr;

TEST(TierTest, EveryTierNamesWhatItDoesNotProtectAgainst) {
  for (Tier tier : {Tier::kDirect, Tier::kWorktree, Tier::kContainer}) {
    for (Runtime runtime : {Runtime::kDocker, Runtime::kPodman, Runtime::kBwrap}) {
      TierDescription d = DescribeTier(tier, runtime);
      EXPECT_EQ(d.tier, tier);
      EXPECT_FALSE(d.does_not_protect_against.empty()) << TierName(tier);
      EXPECT_FALSE(d.summary.empty());
      EXPECT_FALSE(d.use_when.empty());
    }
  }
}

// status and doctor describe the tier as configured: an opened network is
// not a restricted one (design.md 3: "yes, unless configured").
TEST(TierTest, ConfiguredNetworkIsNotRestricted) {
  ContainerConfig config;
  EXPECT_TRUE(DescribeConfiguredTier(Tier::kContainer, config).network_restricted);
  EXPECT_EQ(DescribeConfiguredTier(Tier::kContainer, config).does_not_protect_against,
            DescribeTier(Tier::kContainer, config.runtime).does_not_protect_against);
  for (Network network : {Network::kBridge, Network::kHost}) {
    config.network = network;
    TierDescription d = DescribeConfiguredTier(Tier::kContainer, config);
    EXPECT_FALSE(d.network_restricted) << NetworkName(network);
    EXPECT_TRUE(d.isolates_rights);
    EXPECT_THAT(d.summary, HasSubstr(std::string(NetworkName(network))));
    ASSERT_FALSE(d.does_not_protect_against.empty());
    EXPECT_THAT(d.does_not_protect_against.front(),
                HasSubstr(absl::StrCat("network is \"", NetworkName(network), "\"")));
  }
  // Other tiers do not depend on the container block.
  EXPECT_FALSE(DescribeConfiguredTier(Tier::kDirect, config).network_restricted);
  EXPECT_EQ(DescribeConfiguredTier(Tier::kWorktree, config).summary,
            DescribeTier(Tier::kWorktree).summary);
}

TEST(TierTest, UnknownTierIsCoded) {
  absl::StatusOr<Tier> tier = ParseTier("none");
  ASSERT_FALSE(tier.ok());
  EXPECT_EQ(ErrorCode(tier.status()), "isolation-unknown-tier");
}

struct FieldsCase {
  Tier tier;
  bool isolates_versions;
  bool isolates_rights;
  bool network_restricted;
};

TEST(TierTest, DescriptionFieldsMatchTheAdrTable) {
  const std::vector<FieldsCase> cases = {
      {Tier::kDirect, false, false, false},
      {Tier::kWorktree, true, false, false},
      {Tier::kContainer, true, true, true},
  };
  for (const FieldsCase& c : cases) {
    for (Runtime runtime : {Runtime::kDocker, Runtime::kPodman, Runtime::kBwrap}) {
      TierDescription d = DescribeTier(c.tier, runtime);
      EXPECT_EQ(d.isolates_versions, c.isolates_versions) << TierName(c.tier);
      EXPECT_EQ(d.isolates_rights, c.isolates_rights) << TierName(c.tier);
      EXPECT_EQ(d.network_restricted, c.network_restricted) << TierName(c.tier);
    }
  }
}

TEST(TierTest, ContainerNamesTheCommonLimitsForEveryRuntime) {
  for (Runtime runtime : {Runtime::kDocker, Runtime::kPodman, Runtime::kBwrap}) {
    const std::string all =
        ::testing::PrintToString(DescribeTier(Tier::kContainer, runtime).does_not_protect_against);
    EXPECT_THAT(all, HasSubstr("container escape")) << RuntimeName(runtime);
    EXPECT_THAT(all, HasSubstr("mount or network the operator enabled"));
    EXPECT_THAT(all, HasSubstr("without reviewing anything"));
  }
}

TEST(TierTest, BwrapDescriptionDiffersFromImageRuntimes) {
  TierDescription docker = DescribeTier(Tier::kContainer, Runtime::kDocker);
  TierDescription bwrap = DescribeTier(Tier::kContainer, Runtime::kBwrap);
  EXPECT_NE(docker.summary, bwrap.summary);
  EXPECT_NE(docker.does_not_protect_against, bwrap.does_not_protect_against);
}

TEST(TierTest, WeakerTiersSayTheyGiveNoRightsIsolation) {
  for (Tier tier : {Tier::kDirect, Tier::kWorktree}) {
    const std::string all = ::testing::PrintToString(DescribeTier(tier).does_not_protect_against);
    EXPECT_THAT(all, HasSubstr("your account's")) << TierName(tier);
  }
}

TEST(TierTest, TiersAreOrderedByStrength) {
  EXPECT_LT(Tier::kDirect, Tier::kWorktree);
  EXPECT_LT(Tier::kWorktree, Tier::kContainer);
}

TEST(TierTest, NamesRoundTrip) {
  for (Tier tier : {Tier::kDirect, Tier::kWorktree, Tier::kContainer}) {
    absl::StatusOr<Tier> parsed = ParseTier(TierName(tier));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, tier);
  }
  for (Runtime runtime : {Runtime::kDocker, Runtime::kPodman, Runtime::kBwrap}) {
    absl::StatusOr<Runtime> parsed = ParseRuntime(RuntimeName(runtime));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, runtime);
  }
  EXPECT_EQ(TierName(Tier::kDirect), "direct");
  EXPECT_EQ(TierName(Tier::kWorktree), "worktree");
  EXPECT_EQ(TierName(Tier::kContainer), "container");
}

TEST(TierTest, NearMissNamesAreRefused) {
  for (const char* name :
       {"", "none", "Direct", "CONTAINER", " container", "container ", "docker", "sandbox"}) {
    absl::StatusOr<Tier> tier = ParseTier(name);
    ASSERT_FALSE(tier.ok()) << name;
    EXPECT_EQ(ErrorCode(tier.status()), "isolation-unknown-tier") << name;
  }
  for (const char* name : {"", "Docker", "lxc", "runc", "bubblewrap"}) {
    absl::StatusOr<Runtime> runtime = ParseRuntime(name);
    ASSERT_FALSE(runtime.ok()) << name;
    EXPECT_EQ(ErrorCode(runtime.status()), "isolation-invalid-runtime") << name;
  }
}

TEST(TierTest, DescriptionJsonHasTheAdrFieldNames) {
  nlohmann::json j = DescriptionToJson(DescribeTier(Tier::kWorktree));
  EXPECT_EQ(j["tier"], "worktree");
  EXPECT_EQ(j["isolates_versions"], true);
  EXPECT_EQ(j["isolates_rights"], false);
  EXPECT_EQ(j["network_restricted"], false);
  EXPECT_TRUE(j["summary"].is_string());
  EXPECT_TRUE(j["use_when"].is_string());
  ASSERT_TRUE(j["does_not_protect_against"].is_array());
  EXPECT_FALSE(j["does_not_protect_against"].empty());
  EXPECT_EQ(j.size(), 7u);
}

}  // namespace
}  // namespace np
