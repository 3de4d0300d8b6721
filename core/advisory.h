// The advisory shown on the direct tier once a project has plans.
// Pure.
#ifndef NP_EXEC_CORE_ADVISORY_H_
#define NP_EXEC_CORE_ADVISORY_H_

#include <optional>
#include <string>

#include "core/tier.h"

namespace np {

// A sentence for `status` and `doctor` when the tier is direct and the project
// has plans (`.nubos-pilot/milestones/` exists); nullopt otherwise.
std::optional<std::string> Advisory(Tier tier, bool has_milestones);

}  // namespace np

#endif  // NP_EXEC_CORE_ADVISORY_H_
