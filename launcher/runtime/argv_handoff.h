// The program's argv handed to the bubblewrap sandbox through a descriptor.
//
// bubblewrap refuses more than 9000 arguments, the program's own included.
// Past that, core's argv runs np-exec's own static binary inside (bound
// read-only) as `... -- SELF argv-entry -- PROGRAM ARGS...`
// (core/bwrap_argv.h); right before bubblewrap is executed, the part after
// `argv-entry --` moves into a sealed memfd, NUL-separated, and the command
// becomes `SELF argv-entry --fd N`. Inside, argv-entry reads the descriptor,
// closes it and execs the program, which keeps its pid. So the run path and a
// printed plan's sandbox-exec take as many arguments as the kernel does on
// the direct tier. Touches descriptors.
#ifndef NP_EXEC_LAUNCHER_RUNTIME_ARGV_HANDOFF_H_
#define NP_EXEC_LAUNCHER_RUNTIME_ARGV_HANDOFF_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace np {

// Moves the handed-off part of the bwrap argv `argv` into a new descriptor
// (not close-on-exec; the caller keeps it open for bubblewrap and closes it
// afterwards) and returns it; -1 when the argv hands nothing off. Code
// `spawn-failed` when the descriptor cannot be made.
absl::StatusOr<int> HandOffArgv(std::vector<std::string>& argv);

// Reads the NUL-separated argv from `fd` (argv-entry's side) and closes it.
// Code `usage` when it holds no program.
absl::StatusOr<std::vector<std::string>> ReadHandedOffArgv(int fd);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_RUNTIME_ARGV_HANDOFF_H_
