// Turning a plan's environment recipe (core's EnvPlan) into the environment
// of the process np-exec executes. The caller's environment comes in as
// `envp`; only names the recipe lists are read from it. No I/O.
#ifndef NP_EXEC_LAUNCHER_ENVIRONMENT_H_
#define NP_EXEC_LAUNCHER_ENVIRONMENT_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "core/plan.h"

namespace np {

// A copy of `envp` with each `set` entry ("NAME=value") replacing or adding
// its variable and each name in `unset` removed.
std::vector<std::string> EditEnvironment(char** envp, const std::vector<std::string>& set,
                                         const std::vector<std::string>& unset);

// The environment a plan's recipe yields over the caller's `envp`: the
// caller's (minus `unset`) when `inherit`, else only np-exec's `set` values and
// the `pass` and `forward` names the caller has set (an unset name stays
// unset, as with docker's -e NAME).
std::vector<std::string> BuildEnvironment(const EnvPlan& plan, char** envp);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_ENVIRONMENT_H_
