#include "launcher/watchdog.h"

#include <errno.h>
#include <fcntl.h>
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
#include "launcher/runtime/podman_secrets.h"
#include "launcher/runtime/reaper.h"

extern char** environ;

namespace np {
namespace {

constexpr int kWatchFd = 3;
constexpr char kDisarm = 'D';

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

}  // namespace

absl::StatusOr<Watchdog> Watchdog::Start(const WatchdogSpec& spec) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return CannotStart(errno);
  std::vector<std::string> argv = {
      "np-exec",   std::string(kWatchdogVerb),
      "--bin",     spec.runtime_bin,
      "--name",    spec.container_name,
      "--project", spec.project_root,
      "--started", absl::StrCat(NowMs()),
      "--record",  spec.run_record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)};
  if (spec.socket.has_value()) argv.insert(argv.end(), {"--socket", *spec.socket});
  for (const std::string& secret : spec.secrets) argv.insert(argv.end(), {"--secret", secret});
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
  for (int fd = 0; fd < 3; ++fd) {
    posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
  }
  posix_spawn_file_actions_addclosefrom_np(&actions, kWatchFd + 1);
  pid_t pid = -1;
  const int rc =
      posix_spawn(&pid, spec.self_path.c_str(), &actions, &attr, c_argv.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(fds[0]);
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

int RunWatchdog(absl::Span<const std::string> args) {
  std::string bin, name, project, record_text;
  std::optional<std::string> socket;
  std::vector<std::string> secrets;
  long long started = 0;
  for (size_t i = 0; i + 1 < args.size(); i += 2) {
    const std::string& key = args[i];
    const std::string& value = args[i + 1];
    if (key == "--bin") {
      bin = value;
    } else if (key == "--name") {
      name = value;
    } else if (key == "--project") {
      project = value;
    } else if (key == "--record") {
      record_text = value;
    } else if (key == "--socket") {
      socket = value;
    } else if (key == "--secret") {
      secrets.push_back(value);
    } else if (key == "--started") {
      if (!absl::SimpleAtoi(value, &started)) return 2;
    } else {
      return 2;
    }
  }
  char byte = 0;
  ssize_t n;
  while ((n = read(kWatchFd, &byte, 1)) < 0 && errno == EINTR) {
  }
  if (n == 1 && byte == kDisarm) return 0;
  // np-exec is gone without saying its runtime ended. The client may still be
  // creating the container when np-exec died, so it is removed again a little
  // later (removing a container that does not exist is harmless).
  if (!name.empty()) {
    const std::vector<std::string> env = EditEnvironment(environ, {}, {});
    for (int delay_ms : {0, 1000, 3000}) {
      usleep(static_cast<useconds_t>(delay_ms) * 1000);
      ForceRemoveContainer(bin, env, socket, name);
    }
    RemovePodmanSecrets(bin, env, secrets);
  }
  nlohmann::json record = nlohmann::json::parse(record_text, nullptr, false);
  if (!record.is_object() || project.empty()) return 1;
  record.erase("decision");
  record["event"] = "exit";
  record["exit_status"] = nullptr;
  record["np_exec"] = "killed";
  record["duration_ms"] = started > 0 ? NowMs() - started : 0;
  return AppendAudit(project, std::move(record)).ok() ? 0 : 1;
}

}  // namespace np
