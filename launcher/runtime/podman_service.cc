#include "launcher/runtime/podman_service.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/sha256.h"
#include "launcher/exec.h"
#include "launcher/runtime/engine_api.h"
#include "launcher/runtime/trusted_binary.h"
#include "launcher/state/state_store.h"

namespace np {
namespace {

constexpr int kOwnServicePingMs = 250;

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

// `podman system service` in a session of its own, from `/`, its standard
// descriptors on /dev/null, no signal blocked or ignored, holding `lock` (its
// only other descriptor) until it exits.
void StartService(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                  int lock) {
  std::vector<char*> args = CStrings(argv);
  std::vector<char*> envp = CStrings(env);
  const pid_t first = fork();
  if (first < 0) return;
  if (first == 0) {
    setsid();
    if (fork() != 0) _exit(0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGTERM, SIGCHLD}) signal(sig, SIG_DFL);
    if (chdir("/") != 0) _exit(127);
    // Not close-on-exec: it may itself land on 0, 1 or 2.
    const int null = open("/dev/null", O_RDWR);
    if (null < 0) _exit(127);
    for (int fd = 0; fd < 3; ++fd) {
      if (fd != null) dup2(null, fd);
    }
    CloseOnExecFrom(3);
    fcntl(lock, F_SETFD, 0);
    execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(first, &status, 0) < 0 && errno == EINTR) {
  }
}

// What the engine answers depends on besides its variables: the binary and
// the configuration files podman reads, by identity and change time, so an
// upgrade or an edit gets a service of its own key.
std::string ConfigurationIdentity(const std::string& podman_bin, char** envp) {
  std::vector<std::string> files = {
      podman_bin, "/etc/containers/containers.conf", "/etc/containers/storage.conf",
      "/usr/share/containers/containers.conf", "/usr/share/containers/storage.conf"};
  for (const char* name :
       {"CONTAINERS_CONF", "CONTAINERS_CONF_OVERRIDE", "CONTAINERS_STORAGE_CONF"}) {
    const absl::string_view value = GetEnv(envp, name);
    if (!value.empty()) files.emplace_back(value);
  }
  std::string out;
  for (const std::string& file : files) {
    struct stat st;
    if (stat(file.c_str(), &st) != 0) {
      absl::StrAppend(&out, file, " -\n");
      continue;
    }
    absl::StrAppend(&out, file, " ", st.st_dev, ":", st.st_ino, ":", st.st_mtim.tv_sec, ".",
                    st.st_mtim.tv_nsec, ":", st.st_size, "\n");
  }
  return out;
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
      Sha256Hex(absl::StrCat(ConfigurationIdentity(podman_bin, host.envp), "\n",
                             absl::StrJoin(PodmanServiceEnvironment(host), "\n")))
          .substr(0, 16);
  std::string socket = absl::StrCat(store->dir(), "/engines/podman-", key, ".sock");
  if (socket.size() >= sizeof(sockaddr_un::sun_path)) return std::nullopt;
  return ServiceFiles{*std::move(store), std::move(socket), absl::StrCat("podman-service-", key)};
}

}  // namespace

std::vector<std::string> PodmanServiceEnvironment(const HostFacts& host) {
  std::vector<std::string> env;
  for (const char* name : kPodmanVariables) {
    const absl::string_view value = GetEnv(host.envp, name);
    if (value.data() == nullptr) continue;
    // What it execs in turn (conmon, the OCI runtime, network helpers) comes
    // from trusted directories only, as for the runtime client.
    env.push_back(absl::StrCat(name, "=",
                               absl::string_view(name) == "PATH"
                                   ? TrustedPathList(value, HostProjectRoot(host), LstatOwner)
                                   : std::string(value)));
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
  // Its own: a service that no longer answers at once is not waited for.
  if (lives && EngineAnswers(files->socket, std::min(timeout_ms, kOwnServicePingMs))) {
    return files->socket;
  }
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
                 PodmanServiceEnvironment(host), *lock);
  }
  close(*lock);
}

}  // namespace np
