#include "core/advisory.h"

#include "gtest/gtest.h"

namespace np {
namespace {

TEST(AdvisoryTest, OnlyDirectWithMilestones) {
  struct Case {
    Tier tier;
    bool milestones;
    bool shown;
  };
  const Case cases[] = {
      {Tier::kDirect, true, true},     {Tier::kDirect, false, false},
      {Tier::kWorktree, true, false},  {Tier::kWorktree, false, false},
      {Tier::kContainer, true, false}, {Tier::kContainer, false, false},
  };
  for (const Case& c : cases) {
    std::optional<std::string> advisory = Advisory(c.tier, c.milestones);
    EXPECT_EQ(advisory.has_value(), c.shown) << TierName(c.tier) << " " << c.milestones;
    if (advisory.has_value()) {
      EXPECT_NE(advisory->find("container"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace np
