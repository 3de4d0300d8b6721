// Handing a forwarded signal to the program inside a bubblewrap sandbox.
//
// bubblewrap forwards no signal: a SIGTERM sent to it kills it, and
// --die-with-parent then SIGKILLs the program, which never sees the TERM. So
// np-exec delivers the signal itself, as tini does inside a docker container:
// to the children of the sandbox's init, whose host pid bubblewrap reports on
// --info-fd as "child-pid". Touches processes.
#ifndef NP_EXEC_LAUNCHER_RUNTIME_SANDBOX_SIGNALS_H_
#define NP_EXEC_LAUNCHER_RUNTIME_SANDBOX_SIGNALS_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace np {

// "child-pid" of what bubblewrap wrote to --info-fd; nullopt until it wrote a
// whole JSON object holding a positive one.
std::optional<pid_t> SandboxInitPid(absl::string_view info_json);

// The pids whose parent is `pid` (/proc/PID/task/PID/children, else a scan
// of /proc).
std::vector<pid_t> ChildrenOf(pid_t pid);

// Sends `sig` to the program(s) in the sandbox described by `info_json`, as
// long as its init is still `bwrap_pid`'s child; otherwise (not set up yet,
// already ended, no program left) to bubblewrap itself. Returns the number
// of processes signalled inside.
int SignalSandbox(pid_t bwrap_pid, absl::string_view info_json, int sig);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_RUNTIME_SANDBOX_SIGNALS_H_
