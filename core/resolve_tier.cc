#include "core/resolve_tier.h"

namespace np {

absl::string_view TierSourceName(TierSource source) {
  switch (source) {
    case TierSource::kDefault:
      return "default";
    case TierSource::kConfig:
      return "config";
    case TierSource::kWorktreeIsolation:
      return "worktree_isolation";
    case TierSource::kOperator:
      return "operator";
    case TierSource::kEnv:
      return "env";
  }
  return "default";
}

ResolvedTier ResolveTier(const TierInputs& inputs) {
  ResolvedTier resolved;
  auto raise = [&resolved](std::optional<Tier> tier, TierSource source) {
    if (!tier.has_value()) return;
    // An explicit setting equal to the default still counts as the source.
    if (*tier > resolved.tier || resolved.from == TierSource::kDefault) {
      if (*tier >= resolved.tier) {
        resolved.tier = *tier;
        resolved.from = source;
      }
    }
  };
  raise(inputs.project, TierSource::kConfig);
  if (inputs.worktree_isolation) raise(Tier::kWorktree, TierSource::kWorktreeIsolation);
  raise(inputs.operator_file, TierSource::kOperator);
  raise(inputs.env, TierSource::kEnv);
  return resolved;
}

}  // namespace np
