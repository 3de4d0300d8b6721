#include "launcher/runtime/engine_tunnel.h"

#include <sys/file.h>
#include <unistd.h>

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "core/sha256.h"
#include "launcher/environment.h"
#include "launcher/exec.h"
#include "launcher/runtime/engine_api.h"
#include "launcher/state/state_store.h"
#include "launcher/subprocess.h"

namespace np {
namespace {

constexpr char kDockerSocket[] = "/var/run/docker.sock";
constexpr int kStartTimeoutMs = 20000;

struct SshTarget {
  std::string user, host, port;
};

// ssh://[user@]host[:port][/path], already checked as plain by the locality.
SshTarget ParseSshUrl(absl::string_view url) {
  absl::ConsumePrefix(&url, "ssh://");
  absl::string_view authority = url.substr(0, url.find('/'));
  SshTarget target;
  const size_t at = authority.find('@');
  if (at != absl::string_view::npos) {
    target.user = std::string(authority.substr(0, at));
    authority.remove_prefix(at + 1);
  }
  const size_t colon = authority.find(':');
  if (colon != absl::string_view::npos) target.port = std::string(authority.substr(colon + 1));
  target.host = std::string(authority.substr(0, colon));
  return target;
}

// The master: authenticates, binds `socket` to the engine's, goes to the
// background (-f) only once the forward stands (ExitOnForwardFailure).
bool StartMaster(const std::string& ssh_bin, const std::string& ssh_url, const std::string& socket,
                 const std::string& control, char** envp) {
  const SshTarget target = ParseSshUrl(ssh_url);
  std::vector<std::string> argv = {ssh_bin, "-f",
                                   "-N",    "-T",
                                   "-o",    "BatchMode=yes",
                                   "-o",    "ExitOnForwardFailure=yes",
                                   "-o",    "StreamLocalBindUnlink=yes",
                                   "-o",    "StreamLocalBindMask=0177",
                                   "-o",    "ControlMaster=yes",
                                   "-o",    absl::StrCat("ControlPath=", control),
                                   "-o",    absl::StrCat("ControlPersist=", kTunnelIdleSeconds),
                                   "-L",    absl::StrCat(socket, ":", RemoteEngineSocket(ssh_url))};
  if (!target.user.empty()) argv.insert(argv.end(), {"-l", target.user});
  if (!target.port.empty()) argv.insert(argv.end(), {"-p", target.port});
  argv.insert(argv.end(), {"--", target.host});
  // The master outlives this spawn: it keeps what ssh needs, never the
  // caller's other values (an agent's key among them).
  std::vector<std::string> env;
  for (const char* name : {"PATH", "HOME", "USER", "LOGNAME", "LANG", "SSH_AUTH_SOCK"}) {
    const absl::string_view value = GetEnv(envp, name);
    if (value.data() != nullptr) env.push_back(absl::StrCat(name, "=", value));
  }
  std::vector<char*> env_ptrs = CStrings(env);
  absl::StatusOr<CaptureResult> started = RunAndCapture(argv, env_ptrs.data(), kStartTimeoutMs);
  return started.ok() && !started->timed_out && started->exit_code == 0;
}

}  // namespace

std::string RemoteEngineSocket(const std::string& ssh_url) {
  absl::string_view rest = ssh_url;
  absl::ConsumePrefix(&rest, "ssh://");
  const size_t slash = rest.find('/');
  return slash == absl::string_view::npos ? kDockerSocket : std::string(rest.substr(slash));
}

std::optional<std::string> EngineTunnel(const HostFacts& host, const std::string& ssh_bin,
                                        const std::string& ssh_url, int timeout_ms) {
  if (ssh_bin.empty()) return std::nullopt;
  absl::StatusOr<StateStore> store = OpenStateStore(host);
  if (!store.ok()) return std::nullopt;
  absl::StatusOr<int> dir = store->OpenSubdir("engines");
  if (!dir.ok()) return std::nullopt;
  close(*dir);
  const std::string stem = Sha256Hex(ssh_url).substr(0, 16);
  const std::string base = absl::StrCat(store->dir(), "/engines/", stem);
  const std::string socket = absl::StrCat(base, ".sock");
  if (EngineAnswers(socket, timeout_ms)) return socket;
  // One master per engine: parallel spawns wait for the first to make it.
  absl::StatusOr<int> lock = store->OpenLockFile(absl::StrCat("engine-", stem));
  if (!lock.ok()) return std::nullopt;
  std::optional<std::string> made;
  if (flock(*lock, LOCK_EX) == 0) {
    if (EngineAnswers(socket, timeout_ms) ||
        (StartMaster(ssh_bin, ssh_url, socket, absl::StrCat(base, ".ctl"), host.envp) &&
         EngineAnswers(socket, timeout_ms))) {
      made = socket;
    }
  }
  close(*lock);
  return made;
}

}  // namespace np
