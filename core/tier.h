// The tier model of ADR-0029 as data.
//
// Three tiers, ordered by strength: direct < worktree < container. Each has a
// description (the ADR's describeTier() fields) that the CLI, doctor and the
// docs all read, so there is one statement of each security boundary. Pure.
#ifndef NP_EXEC_CORE_TIER_H_
#define NP_EXEC_CORE_TIER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/runtime.h"
#include "nlohmann/json.hpp"

namespace np {

// Ordered by strength, so comparisons mean "stronger than".
enum class Tier { kDirect = 0, kWorktree = 1, kContainer = 2 };

absl::string_view TierName(Tier tier);

// Parses a tier name; anything else is `isolation-unknown-tier`.
absl::StatusOr<Tier> ParseTier(absl::string_view name);

// The ADR's describeTier() fields.
struct TierDescription {
  Tier tier;
  bool isolates_versions;
  bool isolates_rights;
  bool network_restricted;
  std::string summary;
  std::string use_when;
  std::vector<std::string> does_not_protect_against;
};

// Describes a tier. The container tier's text depends on the runtime, because
// bubblewrap differs from an image-based runtime in what it exposes.
TierDescription DescribeTier(Tier tier, Runtime runtime = kDefaultRuntime);

// The description as JSON with the ADR's field names.
nlohmann::json DescriptionToJson(const TierDescription& description);

}  // namespace np

#endif  // NP_EXEC_CORE_TIER_H_
