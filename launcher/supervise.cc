#include "launcher/supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launcher/exec.h"

namespace np {
namespace {

// The longest the loop waits without looking whether the child ended.
constexpr long long kReapPollMs = 500;

long long NowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

bool IsTerminating(int sig) {
  return sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT;
}

void StopCompanions(const std::vector<Companion>& companions, size_t count) {
  for (size_t i = count; i > 0; --i) {
    if (companions[i - 1].stop) companions[i - 1].stop();
  }
}

// Between fork and exec, in the child: async-signal-safe calls only.
[[noreturn]] void ExecChild(const SuperviseRequest& request, pid_t parent, int report_fd,
                            const sigset_t& original, char* const* argv, char* const* env) {
  prctl(PR_SET_PDEATHSIG, request.parent_death_signal);
  // np-exec may have died before prctl took effect; then nobody would
  // deliver the parent-death signal, so act on it now.
  if (getppid() != parent) _exit(128 + request.parent_death_signal);
  // Only 0, 1, 2 and what the request keeps on purpose reach the child: a
  // descriptor the caller left open (a directory of the host's, say) must
  // not reach a sandbox. Marked close-on-exec rather than closed, so the
  // report pipe still tells of a failed exec; older kernels without
  // CLOSE_RANGE_CLOEXEC get the same, one descriptor at a time.
  CloseOnExecFrom(3);
  for (int fd : request.keep_fds) fcntl(fd, F_SETFD, 0);
  if (request.own_process_group) setpgid(0, 0);
  sigprocmask(SIG_SETMASK, &original, nullptr);
  execve(request.bin.c_str(), argv, env);
  int err = errno;
  (void)!write(report_fd, &err, sizeof(err));
  _exit(127);
}

// Starts the child (the watched signals are blocked, `original` is what the
// child restores before it execs); returns its pid, or -1 with
// `*start_errno` when it could not be executed.
pid_t StartChild(const SuperviseRequest& request, const sigset_t& original, int* start_errno) {
  signal(SIGCHLD, SIG_DFL);
  std::vector<char*> argv = CStrings(request.argv);
  std::vector<char*> env = CStrings(request.env);
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) {
    *start_errno = errno;
    return -1;
  }
  const pid_t parent = getpid();
  // vfork: the child shares np-exec's memory until its execve, so neither
  // side copies page tables or faults pages in copy-on-write (about 40 page
  // faults a spawn). Safe here: ExecChild never returns, makes system calls
  // only, and np-exec installs no signal handler that could run in it.
  pid_t child = vfork();
  if (child < 0) {
    *start_errno = errno;
    close(report[0]);
    close(report[1]);
    return -1;
  }
  if (child == 0) ExecChild(request, parent, report[1], original, argv.data(), env.data());
  // Also from this side, so no terminal signal slips in before the child's own call.
  if (request.own_process_group) setpgid(child, child);
  close(report[1]);
  int child_errno = 0;
  ssize_t got;
  do {
    got = read(report[0], &child_errno, sizeof(child_errno));
  } while (got < 0 && errno == EINTR);
  close(report[0]);
  if (got == static_cast<ssize_t>(sizeof(child_errno))) {
    int status;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    *start_errno = child_errno;
    return -1;
  }
  return child;
}

// Waits for the child, forwarding the watched signals and enforcing the
// grace period after a terminating one. The child is reaped whatever woke
// the loop (a signal or the periodic timeout), so its end is seen even if its
// SIGCHLD never reaches this thread.
SuperviseResult SuperviseChild(const SuperviseRequest& request, const sigset_t& watched,
                               const sigset_t& original) {
  SuperviseResult result;
  const pid_t child = StartChild(request, original, &result.start_errno);
  if (child < 0) return result;

  // The engine is now creating the container: the driver's work meanwhile
  // (reaping what killed np-exec processes left) costs no wall time.
  if (request.on_started) request.on_started();

  long long deadline = -1;
  bool stopping = false;  // A terminating signal was forwarded.
  int status = 0;
  auto reaped = [&] {
    pid_t done;
    while ((done = waitpid(child, &status, WNOHANG)) < 0 && errno == EINTR) {
    }
    return done == child;
  };
  while (!reaped()) {
    siginfo_t info;
    long long left = kReapPollMs;
    if (deadline >= 0) {
      left = deadline - NowMs();
      if (left <= 0) {
        // The client did not stop after a terminating signal: take the
        // container down and the client with it.
        if (request.cleanup) request.cleanup();
        kill(child, SIGKILL);
        deadline = -1;
        continue;
      }
      if (left > kReapPollMs) left = kReapPollMs;
    }
    timespec timeout{static_cast<time_t>(left / 1000), static_cast<long>((left % 1000) * 1000000)};
    const int sig = sigtimedwait(&watched, &info, &timeout);
    // Timed out, interrupted or SIGCHLD: the loop's reap and deadline decide.
    if (sig < 0 || sig == SIGCHLD) continue;
    // A signal the terminal sent to the foreground group reached the client
    // too; forwarding it again would deliver it twice.
    // (A client in its own process group did not get it: forward it then.)
    const bool from_terminal = info.si_code == SI_KERNEL && !request.own_process_group;
    if (request.forward) {
      request.forward(child, sig, from_terminal);
    } else if (!from_terminal) {
      kill(child, sig);
    }
    if (IsTerminating(sig) && !stopping) {
      stopping = true;
      deadline = NowMs() + request.grace_ms;
    }
  }
  result.exit_code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
  // A client killed by a signal never told the engine to stop; --rm alone
  // does not remove a container whose client vanished. A client stopped by a
  // terminating signal while it was still creating the container may even
  // exit 0 and leave it behind (podman does), so then remove it too.
  if ((WIFSIGNALED(status) || stopping) && request.cleanup) request.cleanup();
  return result;
}

}  // namespace

SuperviseResult Supervise(const SuperviseRequest& request) {
  SuperviseResult result;
  const long long started = NowMs();
  // Blocked before any companion starts, so that every thread a companion
  // starts (the egress proxy's) inherits the mask and this thread alone takes
  // the watched signals: a SIGCHLD delivered to another thread is discarded
  // (its default is to ignore it), and a SIGTERM would kill np-exec unseen.
  // Never unblocked: a signal that comes after the child ended waits, and
  // np-exec still writes its exit line and exits with the child's status.
  sigset_t watched, original;
  sigemptyset(&watched);
  for (int sig : kForwardedSignals) sigaddset(&watched, sig);
  sigaddset(&watched, SIGCHLD);
  pthread_sigmask(SIG_BLOCK, &watched, &original);
  for (size_t i = 0; i < request.companions.size(); ++i) {
    absl::Status up =
        request.companions[i].start ? request.companions[i].start() : absl::OkStatus();
    if (!up.ok()) {
      StopCompanions(request.companions, i);
      result.start_errno = EAGAIN;
      return result;
    }
  }
  SuperviseResult run = SuperviseChild(request, watched, original);
  StopCompanions(request.companions, request.companions.size());
  run.duration_ms = NowMs() - started;
  return run;
}

}  // namespace np
