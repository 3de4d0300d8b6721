#include "launcher/runtime/podman_service.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/sha256.h"
#include "launcher/exec.h"
#include "launcher/runtime/engine_api.h"
#include "launcher/state/state_store.h"

namespace np {
namespace {

// What podman's client reads to find its configuration, storage and
// runtime directory; the rest of the caller's environment (an agent's key
// among it) never reaches the service.
constexpr const char* kPodmanVariables[] = {"PATH",
                                            "HOME",
                                            "USER",
                                            "LOGNAME",
                                            "TMPDIR",
                                            "XDG_RUNTIME_DIR",
                                            "XDG_CONFIG_HOME",
                                            "XDG_DATA_HOME",
                                            "CONTAINERS_CONF",
                                            "CONTAINERS_CONF_OVERRIDE",
                                            "CONTAINERS_STORAGE_CONF",
                                            "CONTAINERS_REGISTRIES_CONF",
                                            "STORAGE_DRIVER",
                                            "STORAGE_OPTS"};

// `podman system service` in a session of its own, its standard descriptors
// on /dev/null, holding `lock` (its only other descriptor) until it exits.
void StartService(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                  int lock) {
  std::vector<char*> args = CStrings(argv);
  std::vector<char*> envp = CStrings(env);
  const pid_t first = fork();
  if (first < 0) return;
  if (first == 0) {
    setsid();
    if (fork() != 0) _exit(0);
    const int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0) _exit(127);
    for (int fd = 0; fd < 3; ++fd) dup2(null, fd);
    syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
    fcntl(lock, F_SETFD, 0);
    execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(first, &status, 0) < 0 && errno == EINTR) {
  }
}

struct ServiceFiles {
  StateStore store;
  std::string socket;
  std::string lock_name;
};

// The socket and the lock of the service for `podman_bin` and the caller's
// podman variables; nullopt without a state store, or when the socket's
// path is too long for a unix socket.
std::optional<ServiceFiles> FilesFor(const HostFacts& host, const std::string& podman_bin) {
  absl::StatusOr<StateStore> store = OpenStateStore(host);
  if (!store.ok()) return std::nullopt;
  absl::StatusOr<int> dir = store->OpenSubdir("engines");
  if (!dir.ok()) return std::nullopt;
  close(*dir);
  const std::string key =
      Sha256Hex(
          absl::StrCat(podman_bin, "\n", absl::StrJoin(PodmanServiceEnvironment(host.envp), "\n")))
          .substr(0, 16);
  std::string socket = absl::StrCat(store->dir(), "/engines/podman-", key, ".sock");
  if (socket.size() >= sizeof(sockaddr_un::sun_path)) return std::nullopt;
  return ServiceFiles{*std::move(store), std::move(socket), absl::StrCat("podman-service-", key)};
}

}  // namespace

std::vector<std::string> PodmanServiceEnvironment(char** envp) {
  std::vector<std::string> env;
  for (const char* name : kPodmanVariables) {
    const absl::string_view value = GetEnv(envp, name);
    if (value.data() != nullptr) env.push_back(absl::StrCat(name, "=", value));
  }
  return env;
}

bool OwnPodmanServiceApplies(Runtime runtime, bool warm, const Endpoint& endpoint,
                             const HostFacts& host) {
  return runtime == Runtime::kPodman && warm && endpoint.remote.empty() &&
         !endpoint.socket.has_value() && !endpoint.bin.empty() && host.container_host.empty() &&
         GetEnv(host.envp, kPodmanServiceVariable) != "0";
}

std::optional<std::string> OwnPodmanService(const HostFacts& host, const std::string& podman_bin,
                                            int timeout_ms) {
  std::optional<ServiceFiles> files = FilesFor(host, podman_bin);
  if (!files.has_value()) return std::nullopt;
  absl::StatusOr<int> lock = files->store.OpenLockFile(files->lock_name);
  if (!lock.ok()) return std::nullopt;
  // Free: no service of this key lives. Held: one lives, or is starting.
  const bool lives = flock(*lock, LOCK_EX | LOCK_NB) != 0;
  close(*lock);
  if (lives && EngineAnswers(files->socket, timeout_ms)) return files->socket;
  return std::nullopt;
}

void StartOwnPodmanService(const HostFacts& host, const std::string& podman_bin, int idle_seconds) {
  std::optional<ServiceFiles> files = FilesFor(host, podman_bin);
  if (!files.has_value()) return;
  absl::StatusOr<int> lock = files->store.OpenLockFile(files->lock_name);
  if (!lock.ok()) return;
  if (flock(*lock, LOCK_EX | LOCK_NB) == 0) {
    // None lives: a socket left there is a dead one's.
    unlink(files->socket.c_str());
    StartService({podman_bin, "system", "service", absl::StrCat("--time=", idle_seconds),
                  absl::StrCat("unix://", files->socket)},
                 PodmanServiceEnvironment(host.envp), *lock);
  }
  close(*lock);
}

}  // namespace np
