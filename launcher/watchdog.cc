#include "launcher/watchdog.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "launcher/audit_log.h"
#include "launcher/environment.h"
#include "launcher/exec.h"
#include "launcher/protected_placeholders.h"
#include "launcher/runtime/driver.h"

extern char** environ;

namespace np {
namespace {

constexpr int kWatchFd = 3;
constexpr int kLockFd = 4;     // The spawn lock, when --lock is given.
constexpr int kSandboxFd = 5;  // bubblewrap's --sync-fd pipe, when --sandbox is given.
constexpr int kProjectFd = 6;  // The opened project folder, when --project-fd is given.
constexpr char kDisarm = 'D';
// How long a killed np-exec's sandbox may take to end before the
// placeholders are left for the next spawn instead.
constexpr int kSandboxEndMs = 30000;

long long NowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

absl::Status CannotStart(int err) {
  return MakeError(
      absl::StatusCode::kInternal, "spawn-failed",
      absl::StrCat("cannot start np-exec's container watchdog: ", strerror(err), "; nothing ran"));
}

// True once `fd` (a pipe's read end) reports its writers gone, false after
// `timeout_ms`.
bool WaitForEof(int fd, int timeout_ms) {
  const long long until = NowMs() + timeout_ms;
  for (long long left = timeout_ms; left > 0; left = until - NowMs()) {
    pollfd end{fd, POLLIN, 0};
    const int ready = poll(&end, 1, static_cast<int>(left));
    if (ready < 0 && errno != EINTR) return false;
    if (ready <= 0) continue;
    char drain[64];
    const ssize_t n = read(fd, drain, sizeof(drain));
    if (n == 0) return true;
    if (n < 0 && errno != EINTR && errno != EAGAIN) return false;
  }
  return false;
}

// The watchdog's command line (ParseWatchdogArgs reads it); the flags say
// which descriptors it inherits.
std::vector<std::string> WatchdogArgv(const WatchdogSpec& spec, bool lock, bool sandbox,
                                      bool project) {
  std::vector<std::string> argv = {
      "np-exec",   std::string(kWatchdogVerb),
      "--runtime", std::string(RuntimeName(spec.runtime)),
      "--bin",     spec.runtime_bin,
      "--name",    spec.container_name,
      "--project", spec.project_root,
      "--started", absl::StrCat(NowMs()),
      "--record",  spec.run_record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)};
  if (spec.socket.has_value()) argv.insert(argv.end(), {"--socket", *spec.socket});
  for (const std::string& secret : spec.secrets) argv.insert(argv.end(), {"--secret", secret});
  if (lock) {
    argv.insert(argv.end(), {"--lock", "--project-real", spec.project_real, "--placeholders",
                             PlaceholderBindsToJson(spec.binds).dump()});
  }
  if (sandbox) argv.push_back("--sandbox");
  if (project) argv.push_back("--project-fd");
  return argv;
}

}  // namespace

absl::StatusOr<Watchdog> Watchdog::Start(const WatchdogSpec& spec) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return CannotStart(errno);
  // Copies above the targets, so that no dup2 below overwrites a source.
  auto high = [](int fd) { return fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 10); };
  const int lock = spec.binds.empty() ? -1 : high(spec.lock_fd);
  const int sandbox = high(spec.sandbox_fd);
  // The opened project folder: its audit log (and its placeholders, with
  // the lock) are reached through it, never by the project's path again.
  const int project = high(spec.project_fd);
  const std::vector<std::string> argv = WatchdogArgv(spec, lock >= 0, sandbox >= 0, project >= 0);
  std::vector<char*> c_argv = CStrings(argv);
  std::vector<char*> c_env = CStrings(spec.env);
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  // Its own session: the terminal's signals and a kill of np-exec's process
  // group do not reach it. Only the pipe's read end and /dev/null for stdio.
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawn_file_actions_adddup2(&actions, fds[0], kWatchFd);
  if (lock >= 0) posix_spawn_file_actions_adddup2(&actions, lock, kLockFd);
  if (sandbox >= 0) posix_spawn_file_actions_adddup2(&actions, sandbox, kSandboxFd);
  if (project >= 0) posix_spawn_file_actions_adddup2(&actions, project, kProjectFd);
  for (int fd = 0; fd < 3; ++fd) {
    posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
  }
  posix_spawn_file_actions_addclosefrom_np(&actions, kProjectFd + 1);
  pid_t pid = -1;
  const int rc =
      posix_spawn(&pid, spec.self_path.c_str(), &actions, &attr, c_argv.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(fds[0]);
  for (int fd : {lock, sandbox, project}) {
    if (fd >= 0) close(fd);
  }
  if (rc != 0) {
    close(fds[1]);
    return CannotStart(rc);
  }
  return Watchdog(fds[1], pid);
}

Watchdog::Watchdog(Watchdog&& other) noexcept : fd_(other.fd_), pid_(other.pid_) {
  other.fd_ = -1;
  other.pid_ = -1;
}

Watchdog::~Watchdog() { Disarm(); }

void Watchdog::Disarm() {
  if (fd_ >= 0) {
    while (write(fd_, &kDisarm, 1) < 0 && errno == EINTR) {
    }
    close(fd_);
    fd_ = -1;
  }
  if (pid_ > 0) {
    while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
}

absl::Status SandboxPipe::Open() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return MakeError(absl::StatusCode::kInternal, "spawn-failed",
                     absl::StrCat("pipe: ", strerror(errno), "; nothing ran"));
  }
  read_end_ = fds[0];
  write_end_ = fds[1];
  return absl::OkStatus();
}

void SandboxPipe::Close() {
  for (int* fd : {&read_end_, &write_end_}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
}

namespace {

// The watchdog's command line (what Watchdog::Start passes).
struct WatchdogArgs {
  Runtime runtime = kDefaultRuntime;
  std::string bin, name, project, record_text;
  std::optional<std::string> socket;
  std::vector<std::string> secrets;
  long long started = 0;
  bool lock = false;     // kLockFd holds the project's spawn lock.
  bool sandbox = false;  // kSandboxFd ends when the sandbox does.
  // kProjectFd is the opened project folder: the placeholders were made in
  // it, and the exit line goes to its audit log.
  bool project_fd = false;
  std::string project_real;
  std::vector<ProtectedBind> binds;  // The spawn's placeholders.
};

std::optional<WatchdogArgs> ParseWatchdogArgs(absl::Span<const std::string> args) {
  WatchdogArgs out;
  for (size_t i = 0; i < args.size();) {
    const std::string& key = args[i];
    // The descriptors' flags take no value.
    if (key == "--lock" || key == "--sandbox" || key == "--project-fd") {
      (key == "--lock" ? out.lock : key == "--sandbox" ? out.sandbox : out.project_fd) = true;
      ++i;
      continue;
    }
    if (i + 1 >= args.size()) return std::nullopt;
    const std::string& value = args[i + 1];
    i += 2;
    if (key == "--project-real") {
      out.project_real = value;
    } else if (key == "--placeholders") {
      out.binds = PlaceholderBindsFromJson(nlohmann::json::parse(value, nullptr, false));
    } else if (key == "--runtime") {
      absl::StatusOr<Runtime> runtime = ParseRuntime(value);
      if (!runtime.ok()) return std::nullopt;
      out.runtime = *runtime;
    } else if (key == "--bin") {
      out.bin = value;
    } else if (key == "--name") {
      out.name = value;
    } else if (key == "--project") {
      out.project = value;
    } else if (key == "--record") {
      out.record_text = value;
    } else if (key == "--socket") {
      out.socket = value;
    } else if (key == "--secret") {
      out.secrets.push_back(value);
    } else if (key != "--started" || !absl::SimpleAtoi(value, &out.started)) {
      return std::nullopt;
    }
  }
  return out;
}

// The client may still be creating the container when np-exec died, so it is
// removed again a little later (removing a container that does not exist is
// harmless).
void RemoveContainerOf(const WatchdogArgs& a) {
  if (a.name.empty()) return;
  // Its environment is the runtime client's (WatchdogSpec::env).
  HostFacts host;
  host.envp = environ;
  Endpoint endpoint;
  endpoint.bin = a.bin;
  endpoint.socket = a.socket;
  // A container still being created when np-exec died appears later: the
  // removal is tried again; its secrets go with the last try.
  const RuntimeDriver& driver = DriverFor(a.runtime);
  for (int delay_ms : {0, 1000}) {
    usleep(static_cast<useconds_t>(delay_ms) * 1000);
    driver.Cleanup(endpoint, a.name, {}, host);
  }
  usleep(3000 * 1000);
  driver.Cleanup(endpoint, a.name, a.secrets, host);
}

// On bubblewrap, its init closes its end of the pipe as it exits, and the
// kernel kills what is left of the sandbox right then; the pause covers
// that. A sandbox that does not end keeps its placeholders (the next spawn
// of the project removes them); otherwise no mount rests on one any more.
void RemovePlaceholdersOf(const WatchdogArgs& a) {
  bool sandbox_gone = true;
  if (a.sandbox) {
    sandbox_gone = WaitForEof(kSandboxFd, kSandboxEndMs);
    if (sandbox_gone) usleep(200 * 1000);
  }
  if (a.lock && sandbox_gone && !a.project_real.empty()) {
    // Through the folder np-exec opened: its path may name another one by
    // now (renamed, a link swapped in), whose look-alike nodes stay.
    RemovePlaceholdersIfAlone(kLockFd, a.project_real, a.binds, a.project_fd ? kProjectFd : -1);
  }
}

// The spawn's exit line: np_exec "killed", no exit status.
int WriteKilledLine(const WatchdogArgs& a) {
  nlohmann::json record = nlohmann::json::parse(a.record_text, nullptr, false);
  if (!record.is_object() || a.project.empty()) return 1;
  record.erase("decision");
  record["event"] = "exit";
  record["exit_status"] = nullptr;
  record["np_exec"] = "killed";
  record["duration_ms"] = a.started > 0 ? NowMs() - a.started : 0;
  const absl::Status written = a.project_fd
                                   ? AppendAuditAt(kProjectFd, a.project, std::move(record))
                                   : AppendAudit(a.project, std::move(record));
  return written.ok() ? 0 : 1;
}

}  // namespace

int RunWatchdog(absl::Span<const std::string> args) {
  const std::optional<WatchdogArgs> parsed = ParseWatchdogArgs(args);
  if (!parsed.has_value()) return 2;
  char byte = 0;
  ssize_t n;
  while ((n = read(kWatchFd, &byte, 1)) < 0 && errno == EINTR) {
  }
  if (n == 1 && byte == kDisarm) return 0;
  // np-exec is gone without saying its runtime ended.
  RemoveContainerOf(*parsed);
  RemovePlaceholdersOf(*parsed);
  return WriteKilledLine(*parsed);
}

}  // namespace np
