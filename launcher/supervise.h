// Running a runtime (a docker or podman client, bubblewrap) as np-exec's child.
//
// A killed `docker run` client leaves its container running, and nubos-pilot
// kills timed-out spawns with SIGKILL. So on the container tier np-exec stays
// the runtime's parent: it forwards SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1
// and SIGUSR2 (through `forward`, which the runtime's driver supplies: a
// client proxies them into its container, bubblewrap forwards nothing and has
// them handed to the program inside); the child runs with a parent-death
// signal, so a SIGKILLed np-exec still takes it down; and when it dies
// abnormally, or does not exit within a grace period after a terminating
// signal, `cleanup` runs (a named container is force-removed). A companion
// (the coming egress proxy) can be kept alive beside the child for its whole
// lifetime. Generic: the driver supplies every runtime-specific step. Spawns.
#ifndef NP_EXEC_LAUNCHER_SUPERVISE_H_
#define NP_EXEC_LAUNCHER_SUPERVISE_H_

#include <signal.h>
#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace np {

// Something that must run beside the supervised child for as long as it
// lives: started before the child, stopped after it is reaped.
struct Companion {
  std::function<absl::Status()> start;
  std::function<void()> stop;
};

// The signals np-exec forwards to what it supervises.
inline constexpr int kForwardedSignals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

struct SuperviseRequest {
  std::string bin;                // Absolute path of what is executed.
  std::vector<std::string> argv;  // argv[0] is the runtime's name.
  std::vector<std::string> env;   // Its whole environment.
  int grace_ms = 10000;           // After a terminating signal, before cleanup.
  // Left open across exec in the child, the only descriptors besides 0-2 it
  // gets (bubblewrap's --info-fd and --seccomp).
  std::vector<int> keep_fds;
  // Sent to the child when np-exec dies. SIGTERM lets a docker or podman
  // client stop its container; bubblewrap forwards nothing, so it gets SIGKILL
  // and its --die-with-parent child goes with it.
  int parent_death_signal = SIGTERM;
  // Puts the child in a process group of its own, so the terminal's signals
  // (Ctrl-C) reach np-exec alone, which then forwards them like any other.
  // For bubblewrap, which would die of them and take the program along.
  bool own_process_group = false;
  // Delivers a forwarded signal; when unset, kill(child, sig) unless the
  // signal came from the terminal, which then delivered it to the child too
  // (forwarding it again would deliver it twice).
  std::function<void(pid_t child, int sig, bool from_terminal)> forward;
  // Runs once the child has started (while the engine creates its container).
  std::function<void()> on_started;
  // Runs when the child died by a signal, was stopped by a forwarded
  // terminating signal, or outlived its grace period.
  std::function<void()> cleanup;
  std::vector<Companion> companions;
};

struct SuperviseResult {
  int exit_code = 0;    // The child's status, 128+n for a signal.
  int start_errno = 0;  // Non-zero when the child could not be executed.
  long long duration_ms = 0;
};

// Runs the child to completion.
SuperviseResult Supervise(const SuperviseRequest& request);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_SUPERVISE_H_
