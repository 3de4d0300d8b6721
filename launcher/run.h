// The run path: one spawn through the configured tier.
//
// Reads as its steps: guard against recursion, load settings, resolve and
// probe the runtime (container only), plan, record, carry out the plan.
// direct and worktree exec the program in place; container runs the plan
// through its runtime's driver under supervision. Spawns and execs.
#ifndef NP_EXEC_LAUNCHER_RUN_H_
#define NP_EXEC_LAUNCHER_RUN_H_

#include "absl/status/statusor.h"
#include "launcher/cli.h"
#include "launcher/host.h"
#include "launcher/outcome.h"

namespace np {

// Runs `cl.program`. Returns only on the container tier (the program's exit
// status) or on failure (already recorded in the audit log): direct and
// worktree exec in place.
absl::StatusOr<Outcome> RunProgram(const CommandLine& cl, const HostFacts& host,
                                   const Reporter& reporter);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_RUN_H_
