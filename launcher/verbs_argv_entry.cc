// argv-entry: the bubblewrap sandbox's entry point for a program with more
// arguments than bubblewrap takes (runtime/argv_handoff.h).
//
// `np-exec argv-entry --fd N` runs inside the sandbox from the read-only copy
// of np-exec's own static binary at /run/np-exec/np-exec. It reads the
// program's argv from descriptor N (NUL-separated, sealed), closes it, finds
// the program on the sandbox's PATH as the run path's visibility check did
// (core/plan.h) and execs it in place, so the program keeps this process: its
// pid, stdio, signals and exit status. The environment passes through
// unchanged.
#include "launcher/environment.h"
#include "launcher/exec.h"
#include "launcher/runtime/argv_handoff.h"
#include "launcher/verbs.h"
#include "shim/find_real_program.h"

namespace np {

absl::StatusOr<Outcome> VerbArgvEntry(const CommandLine& cl, const HostFacts& host) {
  absl::StatusOr<std::vector<std::string>> argv = ReadHandedOffArgv(cl.argv_fd);
  if (!argv.ok()) return argv.status();
  absl::StatusOr<std::string> program =
      FindRealProgram(argv->front(), host.path, host.cwd, FileId{}, StatFile);
  if (!program.ok()) return program.status();
  absl::Status failed = ExecInPlace(*program, *argv, EditEnvironment(host.envp, {}, {}));
  return failed.ok() ? absl::InternalError("exec returned") : failed;
}

}  // namespace np
