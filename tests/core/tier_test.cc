#include "core/tier.h"

#include "core/errors.h"
#include "gtest/gtest.h"

namespace np {
namespace {

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

TEST(TierTest, UnknownTierIsCoded) {
  absl::StatusOr<Tier> tier = ParseTier("none");
  ASSERT_FALSE(tier.ok());
  EXPECT_EQ(ErrorCode(tier.status()), "isolation-unknown-tier");
}

}  // namespace
}  // namespace np
