#include "core/resolve_tier.h"

#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace np {
namespace {

constexpr std::optional<Tier> kUnset = std::nullopt;
constexpr Tier kD = Tier::kDirect;
constexpr Tier kW = Tier::kWorktree;
constexpr Tier kC = Tier::kContainer;

struct Case {
  std::optional<Tier> project;
  bool worktree;
  std::optional<Tier> operator_file;
  std::optional<Tier> env;
  Tier tier;
  std::string from;
};

TEST(ResolveTierTest, Table) {
  const std::vector<Case> cases = {
      // Nothing set: the default is direct.
      {kUnset, false, kUnset, kUnset, kD, "default"},
      // The project alone.
      {kD, false, kUnset, kUnset, kD, "config"},
      {kW, false, kUnset, kUnset, kW, "config"},
      {kC, false, kUnset, kUnset, kC, "config"},
      // The worktree floor raises, never lowers.
      {kUnset, true, kUnset, kUnset, kW, "worktree_isolation"},
      {kD, true, kUnset, kUnset, kW, "worktree_isolation"},
      {kW, true, kUnset, kUnset, kW, "config"},
      {kC, true, kUnset, kUnset, kC, "config"},
      // The operator file is a floor the project cannot lower.
      {kUnset, false, kC, kUnset, kC, "operator"},
      {kD, false, kC, kUnset, kC, "operator"},
      {kW, false, kC, kUnset, kC, "operator"},
      {kC, false, kC, kUnset, kC, "config"},
      {kC, false, kW, kUnset, kC, "config"},
      {kD, false, kW, kUnset, kW, "operator"},
      {kUnset, false, kD, kUnset, kD, "operator"},
      {kD, false, kD, kUnset, kD, "config"},
      {kUnset, true, kD, kUnset, kW, "worktree_isolation"},
      {kUnset, true, kC, kUnset, kC, "operator"},
      // NP_EXEC_TIER is a floor the project cannot lower either.
      {kUnset, false, kUnset, kC, kC, "env"},
      {kD, false, kUnset, kC, kC, "env"},
      {kW, false, kUnset, kC, kC, "env"},
      {kC, false, kUnset, kD, kC, "config"},
      {kC, false, kUnset, kC, kC, "config"},
      {kUnset, false, kUnset, kD, kD, "env"},
      {kUnset, false, kUnset, kW, kW, "env"},
      {kD, false, kW, kC, kC, "env"},
      {kD, false, kC, kW, kC, "operator"},
      {kD, false, kC, kC, kC, "operator"},
      {kUnset, true, kUnset, kC, kC, "env"},
      {kUnset, true, kUnset, kD, kW, "worktree_isolation"},
      {kD, true, kW, kW, kW, "worktree_isolation"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    TierInputs inputs;
    inputs.project = c.project;
    inputs.worktree_isolation = c.worktree;
    inputs.operator_file = c.operator_file;
    inputs.env = c.env;
    ResolvedTier resolved = ResolveTier(inputs);
    EXPECT_EQ(TierName(resolved.tier), TierName(c.tier)) << "case " << i;
    EXPECT_EQ(TierSourceName(resolved.from), c.from) << "case " << i;
  }
}

// Every combination: the tier is the strongest source, the project never
// lowers a floor, and effective_from names a source that asked for that tier.
TEST(ResolveTierTest, EveryCombinationTakesTheStrongest) {
  const std::vector<std::optional<Tier>> values = {kUnset, kD, kW, kC};
  for (const auto& project : values) {
    for (bool worktree : {false, true}) {
      for (const auto& operator_file : values) {
        for (const auto& env : values) {
          TierInputs inputs{project, worktree, operator_file, env};
          ResolvedTier resolved = ResolveTier(inputs);
          Tier strongest = kD;
          for (const auto& v : {project, operator_file, env}) {
            if (v.has_value() && *v > strongest) strongest = *v;
          }
          if (worktree && kW > strongest) strongest = kW;
          EXPECT_EQ(resolved.tier, strongest);
          if (operator_file.has_value()) {
            EXPECT_GE(resolved.tier, *operator_file);
          }
          if (env.has_value()) {
            EXPECT_GE(resolved.tier, *env);
          }
          if (worktree) {
            EXPECT_GE(resolved.tier, kW);
          }
          switch (resolved.from) {
            case TierSource::kDefault:
              EXPECT_FALSE(project || worktree || operator_file || env);
              break;
            case TierSource::kConfig:
              EXPECT_EQ(project, resolved.tier);
              break;
            case TierSource::kWorktreeIsolation:
              EXPECT_TRUE(worktree);
              EXPECT_EQ(resolved.tier, kW);
              break;
            case TierSource::kOperator:
              EXPECT_EQ(operator_file, resolved.tier);
              break;
            case TierSource::kEnv:
              EXPECT_EQ(env, resolved.tier);
              break;
          }
        }
      }
    }
  }
}

TEST(ResolveTierTest, SourceNames) {
  EXPECT_EQ(TierSourceName(TierSource::kDefault), "default");
  EXPECT_EQ(TierSourceName(TierSource::kConfig), "config");
  EXPECT_EQ(TierSourceName(TierSource::kWorktreeIsolation), "worktree_isolation");
  EXPECT_EQ(TierSourceName(TierSource::kOperator), "operator");
  EXPECT_EQ(TierSourceName(TierSource::kEnv), "env");
}

}  // namespace
}  // namespace np
