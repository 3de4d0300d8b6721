// Running the container runtime's client as np-exec's child.
//
// A killed `docker run` client leaves its container running, and nubos-pilot
// kills timed-out spawns with SIGKILL. So on the container tier np-exec stays
// as the client's parent: it forwards SIGTERM, SIGINT, SIGHUP, SIGQUIT,
// SIGUSR1 and SIGUSR2 to it (the client proxies them into the container, where
// --init's tini hands them to the program); the client runs with a
// parent-death signal, so a SIGKILLed np-exec still takes its container down
// (bubblewrap forwards nothing: there `forward` hands the signal to the
// program inside, see sandbox_signals.h);
// and when the client dies abnormally, or does not exit within a grace period
// after a terminating signal, the container is force-removed. Spawns.
#ifndef NP_EXEC_LAUNCHER_SUPERVISE_H_
#define NP_EXEC_LAUNCHER_SUPERVISE_H_

#include <signal.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace np {

struct SuperviseRequest {
  std::string bin;                // Absolute path of the runtime client.
  std::vector<std::string> argv;  // argv[0] is the runtime's name.
  std::vector<std::string> env;   // The client's environment.
  std::string container_name;
  std::optional<std::string> socket;  // Engine API socket, when local.
  bool tty = false;                   // -t: docker does not proxy signals then.
  int grace_ms = 10000;
  int keep_fd = -1;  // Left open across exec in the child (bubblewrap's --info-fd).
  // Sent to the child when np-exec dies. SIGTERM lets a docker or podman
  // client stop its container; bubblewrap forwards nothing, so it gets SIGKILL
  // and its --die-with-parent child goes with it.
  int parent_death_signal = SIGTERM;
  // Delivers a forwarded signal in place of kill(client, sig) when set
  // (bubblewrap: to the program inside, see sandbox_signals.h).
  std::function<void(pid_t client, int sig)> forward;
  // Puts the client in a process group of its own, so the terminal's signals
  // (Ctrl-C) reach np-exec alone, which then forwards them like any other.
  // For bubblewrap, which would die of them and take the program along.
  bool own_process_group = false;
};

struct SuperviseResult {
  int exit_code = 0;    // The client's status, 128+n for a signal.
  int start_errno = 0;  // Non-zero when the client could not be executed.
  long long duration_ms = 0;
};

// Runs the client to completion. Reaps orphaned containers of earlier,
// killed np-exec processes while the engine starts this one.
SuperviseResult Supervise(const SuperviseRequest& request);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_SUPERVISE_H_
