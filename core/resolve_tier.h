// Which tier applies, and which source decided it.
//
// The project file may come from a repository nobody reviewed, so it can raise
// the tier but never lower what the operator set: the operator file,
// NP_EXEC_TIER and workflow.worktree_isolation are floors. Pure.
#ifndef NP_EXEC_CORE_RESOLVE_TIER_H_
#define NP_EXEC_CORE_RESOLVE_TIER_H_

#include <optional>

#include "absl/strings/string_view.h"
#include "core/tier.h"

namespace np {

enum class TierSource { kDefault, kConfig, kWorktreeIsolation, kOperator, kEnv };

// "default", "config", "worktree_isolation", "operator", "env".
absl::string_view TierSourceName(TierSource source);

struct TierInputs {
  std::optional<Tier> project;  // isolation.tier in the project file.
  bool worktree_isolation = false;
  std::optional<Tier> operator_file;
  std::optional<Tier> env;  // NP_EXEC_TIER.
};

struct ResolvedTier {
  Tier tier = Tier::kDirect;
  TierSource from = TierSource::kDefault;
};

// The strongest tier of all sources. Sources are considered in the order
// project, worktree floor, operator file, NP_EXEC_TIER, and a later one is
// credited only when it raises the tier, so `effective_from` names the source
// without which the tier would be lower.
ResolvedTier ResolveTier(const TierInputs& inputs);

}  // namespace np

#endif  // NP_EXEC_CORE_RESOLVE_TIER_H_
