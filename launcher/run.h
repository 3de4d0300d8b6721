// The run path: one spawn through the configured tier.
//
// Reads as its steps: guard against recursion, load settings, probe and gate
// (container only), plan, record, carry out the plan. direct and worktree
// exec the program in place; container supervises the runtime client (docker,
// podman) or execs bubblewrap. Spawns and execs.
#ifndef NP_EXEC_LAUNCHER_RUN_H_
#define NP_EXEC_LAUNCHER_RUN_H_

#include <string>

#include "absl/status/status.h"
#include "launcher/cli.h"
#include "launcher/host.h"

namespace np {

// Exit status of the run path for an error that stopped it before the program
// ran: 127 not found, 126 not executable, 69 tier unavailable, else 125.
int RunPathExitCode(const absl::Status& status);

// Runs `cl.program`; returns np-exec's exit status (it returns at all only on
// the container tier or on failure: direct execs in place).
int RunProgram(const CommandLine& cl, const HostFacts& host);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_RUN_H_
