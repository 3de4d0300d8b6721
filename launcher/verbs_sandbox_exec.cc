// sandbox-exec: the internal verb a printed bubblewrap plan runs.
//
// `np-exec sandbox-exec [--env NAMES] -- BWRAP ARGS...` builds the sandbox's
// environment by name, exactly as the run path does (core's SandboxEnvPlan:
// the sandbox's PATH and HOME, TERM, and the forwarded names' values read from
// its own environment), closes every descriptor but 0, 1 and 2, builds the
// sandbox's system-call filter (bwrap_seccomp.h) exactly as the run path does
// and passes it as the one other descriptor, and execs bubblewrap. So a caller who runs a printed
// plan with any environment at all hands the sandbox only the forwarded names, and no value is in
// any argv.
#include <fcntl.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "core/plan.h"
#include "launcher/environment.h"
#include "launcher/exec.h"
#include "launcher/runtime/bwrap_seccomp.h"
#include "launcher/verbs.h"

namespace np {

absl::StatusOr<Outcome> VerbSandboxExec(const CommandLine& cl, const HostFacts& host) {
  if (cl.program.empty() || cl.program.front().empty() || cl.program.front().front() != '/') {
    return MakeError(absl::StatusCode::kInvalidArgument, "usage",
                     "sandbox-exec needs the absolute path of bubblewrap after --");
  }
  const std::vector<std::string> env = BuildEnvironment(SandboxEnvPlan(cl.env_names), host.envp);
  // Nothing of the caller's open descriptors reaches the sandbox.
  close_range(3, ~0U, 0);
  std::vector<std::string> argv = cl.program;
  argv.front() = "bwrap";
  // A printed plan is as strict as a run: the same filter, or nothing runs.
  absl::StatusOr<int> seccomp = BuildSeccompFilterFd();
  if (!seccomp.ok()) return seccomp.status();
  absl::Status filtered = AddSeccompArg(argv, *seccomp);
  if (!filtered.ok()) return filtered;
  // bubblewrap reads the filter from this descriptor, so it survives the exec.
  fcntl(*seccomp, F_SETFD, 0);
  absl::Status failed = ExecInPlace(cl.program.front(), argv, env);
  return failed.ok() ? absl::InternalError("exec returned") : failed;
}

}  // namespace np
