#include "launcher/warm/keeper.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "core/warm.h"
#include "launcher/warm/channel.h"
#include "launcher/warm/client.h"
#include "launcher/warm/sandbox_reset.h"
#include "launcher/warm/spawn_exec.h"

namespace np::warm {
namespace {

constexpr int kRequestTimeoutMs = 10000;
constexpr int kKillTimeoutMs = 5000;

void WriteError(const std::string& text) {
  const std::string line = absl::StrCat("np-exec: ", text, "\n");
  (void)!write(2, line.data(), line.size());
}

// Waits for the program, forwarding the client's signals; returns its
// wait status, or nullopt when the client went away first.
std::optional<int> Supervise(pid_t child, int client, int signals) {
  pollfd watched[2] = {{client, POLLIN, 0}, {signals, POLLIN, 0}};
  for (;;) {
    if (poll(watched, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return std::nullopt;
    }
    if (watched[1].revents != 0) {
      signalfd_siginfo info;
      (void)!read(signals, &info, sizeof(info));
      int status = 0;
      if (waitpid(child, &status, WNOHANG) == child) return status;
    }
    if (watched[0].revents != 0) {
      absl::StatusOr<Message> message = Receive(client, kRequestTimeoutMs);
      if (!message.ok()) return std::nullopt;
      const nlohmann::json& body = message->body;
      if (body.value("op", "") == "signal" && body.contains("signal") &&
          body["signal"].is_number_integer() && ForwardedToWarmSpawn(body["signal"].get<int>())) {
        const int signal = body["signal"].get<int>();
        if (kill(-child, signal) != 0) kill(child, signal);
      }
    }
  }
}

std::string ReadMountInfo() {
  std::ifstream in("/proc/self/mountinfo");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The sandbox as the keeper found it: what it empties, and what it checks.
struct Baseline {
  std::vector<std::string> scratch;
  SandboxFingerprint fingerprint;
};

// What a spawn may have left once its processes are gone: scratch files,
// IPC objects; then what a reset does not undo must be as it was.
absl::Status ResetFiles(const Baseline& baseline) {
  for (const std::string& mount : baseline.scratch) {
    absl::Status emptied = EmptyMount(mount);
    if (!emptied.ok()) return emptied;
  }
  absl::Status removed = RemoveSysvIpc();
  if (!removed.ok()) return removed;
  const std::string changed = FingerprintDifference(
      baseline.fingerprint, TakeFingerprint(ReadMountInfo(), baseline.scratch));
  if (changed.empty()) return absl::OkStatus();
  return MakeError(absl::StatusCode::kInternal, "warm-reset-failed",
                   absl::StrCat("a spawn changed what the warm sandbox's reset does not undo (",
                                changed, "); the sandbox ends"));
}

// Everything a spawn may have left: processes, then the rest.
absl::Status Reset(const Baseline& baseline) {
  absl::Status killed = KillAllOthers(kKillTimeoutMs);
  return killed.ok() ? ResetFiles(baseline) : killed;
}

// How a spawn ended for the keeper: whether the client went away before it
// learned how the program ended (its np-exec was killed), and the reset,
// which when it failed ends the keeper.
struct Served {
  bool abandoned = false;
  absl::Status reset;
};

// One spawn: the client's connection (for its signals and the result) and
// the spawn's three descriptors, as the holder handed them over.
Served ServeSpawn(Message& message, char** envp, int signals, const Baseline& baseline) {
  const int client = message.fds[0].get();
  absl::StatusOr<WarmRequest> request =
      WarmRequestFromJson(message.body.value("spawn", nlohmann::json()));
  if (!request.ok()) {
    (void)Send(client, {{"error", std::string(request.status().message())}});
    return {};
  }
  std::vector<OwnedFd> stdio;
  for (size_t i = 1; i < 4; ++i) stdio.push_back(std::move(message.fds[i]));
  // A client that gave up while the sandbox came up (Ctrl-C) has called the
  // spawn off (its only message before "started") or hung up: its program
  // is never started.
  pollfd hung{client, POLLIN | POLLRDHUP, 0};
  if (poll(&hung, 1, 0) > 0 && (hung.revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR)) != 0) {
    (void)Send(client, {{"cancelled", true}});
    return {};
  }
  PreparedExec exec = PrepareExec(*request, envp);
  // From here on the spawn counts as run: a client that loses the sandbox
  // now must not run it again elsewhere. Said before the keeper waits in
  // vfork for the program's exec, so the client forwards its signals from
  // the program's first instruction on.
  (void)Send(client, {{"started", true}});
  const int fds[3] = {stdio[0].get(), stdio[1].get(), stdio[2].get()};
  const pid_t child = StartPrepared(exec, fds);
  if (child < 0) {
    (void)Send(client, {{"error", "the keeper could not fork"}});
    return {false, Reset(baseline)};
  }
  stdio.clear();
  for (std::string& entry : request->env) std::fill(entry.begin(), entry.end(), '\0');
  for (std::string& entry : exec.env) std::fill(entry.begin(), entry.end(), '\0');
  const std::optional<int> status = Supervise(child, client, signals);
  // Every process is killed before the client learns the status; the
  // scratch and the IPC objects are emptied, and the sandbox checked, after
  // it has (nothing runs in the sandbox meanwhile, and the keeper reads the
  // next spawn only then). A reset that fails ends the sandbox.
  const absl::Status killed = KillAllOthers(kKillTimeoutMs);
  bool abandoned = !status.has_value();
  if (status.has_value()) {
    WarmResult result;
    if (WIFSIGNALED(*status)) {
      result.signal = WTERMSIG(*status);
      result.exit_code = 128 + result.signal;
    } else {
      result.exit_code = WEXITSTATUS(*status);
    }
    abandoned = !Send(client, {{"result", WarmResultToJson(result)}}).ok();
  }
  return {abandoned, killed.ok() ? ResetFiles(baseline) : killed};
}

}  // namespace

int RunKeeper(char** envp) {
  // As the namespace's init, no process inside can signal it; not dumpable,
  // none can trace it or read its memory and descriptors.
  if (getpid() != 1 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
    WriteError("the warm sandbox's keeper must be its PID 1, not dumpable; the sandbox ends");
    return 125;
  }
  signal(SIGPIPE, SIG_IGN);
  const std::string mountinfo = ReadMountInfo();
  Baseline baseline;
  baseline.scratch = ScratchMounts(mountinfo);
  std::vector<std::string>& scratch = baseline.scratch;
  scratch.erase(std::remove(scratch.begin(), scratch.end(), "/dev"), scratch.end());
  if (access("/dev/shm", F_OK) == 0 &&
      std::find(scratch.begin(), scratch.end(), "/dev/shm") == scratch.end()) {
    scratch.push_back("/dev/shm");
  }
  // Fail closed: a keeper that cannot see /tmp among its scratch mounts
  // cannot tell what a spawn leaves.
  if (std::find(scratch.begin(), scratch.end(), "/tmp") == scratch.end()) {
    WriteError("the warm sandbox's keeper finds no /tmp to empty; the sandbox ends");
    return 125;
  }
  baseline.fingerprint = TakeFingerprint(mountinfo, scratch);
  sigset_t child_signals;
  sigemptyset(&child_signals);
  sigaddset(&child_signals, SIGCHLD);
  sigprocmask(SIG_BLOCK, &child_signals, nullptr);
  OwnedFd signals(signalfd(-1, &child_signals, SFD_CLOEXEC | SFD_NONBLOCK));
  absl::StatusOr<OwnedFd> control = ConnectPath(absl::StrCat(kWarmTarget, "/", kRendezvousName));
  if (signals.get() < 0 || !control.ok()) {
    WriteError("the warm sandbox's keeper could not reach its holder");
    return 125;
  }
  for (;;) {
    absl::StatusOr<Message> message = Receive(control->get());
    if (!message.ok()) break;
    const std::string op = message->body.value("op", "");
    if (op == "exit") break;
    if (op != "spawn" || message->fds.size() != 4) continue;
    const Served served = ServeSpawn(*message, envp, signals.get(), baseline);
    message->fds.clear();
    const bool told = Send(control->get(), {{"op", "done"}, {"abandoned", served.abandoned}}).ok();
    if (!served.reset.ok()) {
      WriteError(std::string(served.reset.message()));
      return 125;
    }
    if (!told) break;
  }
  (void)KillAllOthers(kKillTimeoutMs);
  return 0;
}

}  // namespace np::warm
