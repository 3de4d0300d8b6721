#include "core/advisory.h"

namespace np {

std::optional<std::string> Advisory(Tier tier, bool has_milestones) {
  if (tier != Tier::kDirect || !has_milestones) return std::nullopt;
  return std::string(
      "This project has plans and runs them on the direct tier: executor agents act with "
      "your account's full rights. If a plan was generated, shared through a repository or "
      "written by another model, consider \"isolation\": {\"tier\": \"container\"}.");
}

}  // namespace np
