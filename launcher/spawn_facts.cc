#include "launcher/spawn_facts.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/random.h>
#include <unistd.h>

#include "absl/strings/str_format.h"
#include "core/paths.h"
#include "core/socket_walk.h"
#include "launcher/state_store.h"
#include "shim/find_real_program.h"

namespace np {
namespace {

// Where the host's daemons keep their endpoints.
constexpr char kRunDir[] = "/run";

std::string RealHome(const std::string& home) {
  if (home.empty()) return "";
  char buffer[PATH_MAX];
  return realpath(home.c_str(), buffer) != nullptr ? std::string(buffer) : home;
}

}  // namespace

SpawnFacts BaseFacts(const HostFacts& host, const std::string& cwd) {
  SpawnFacts facts;
  facts.cwd = cwd;
  facts.home = RealHome(host.home);
  facts.uid = host.uid;
  facts.gid = host.gid;
  facts.stdin_tty = host.stdin_tty;
  facts.stdout_tty = host.stdout_tty;
  facts.path = host.path;
  const FileId self = host.self;
  facts.find = [cwd, self](absl::string_view name, absl::string_view path_list, bool skip_self) {
    return FindRealProgram(name, path_list, cwd, skip_self ? self : FileId{}, StatFile);
  };
  facts.depth = host.depth;
  facts.pid = host.pid;
  facts.preload_names = std::string(GetEnv(host.envp, kPreloadNamesVar));
  facts.self_path = host.self_path;
  return facts;
}

void AddContainerFacts(const HostFacts& host, const RuntimeDriver& driver, const Endpoint& endpoint,
                       const ProbeResult& probe, absl::string_view name_prefix, std::string owner,
                       bool has_mounts, SpawnFacts& facts) {
  facts.runtime_bin = probe.bin.empty() ? endpoint.bin : probe.bin;
  uint32_t random = 0;
  if (getrandom(&random, sizeof(random), 0) != sizeof(random)) random = 0;
  facts.container_name = absl::StrFormat("%s-%d-%08x", name_prefix, host.pid, random);
  facts.owner = std::move(owner);
  driver.AddSpawnFacts(host, endpoint, facts);
  if (has_mounts) {
    for (std::string& path : driver.EngineStatePaths(endpoint)) {
      facts.extra_forbidden.push_back(std::move(path));
    }
    // Every directory under /run that holds a socket (and any the walk could
    // not finish): the next daemon's endpoint is found, not listed.
    for (std::string& path : FindSocketHolders(kRunDir)) {
      facts.extra_forbidden.push_back(std::move(path));
    }
    // np-exec's own state (every project's persistent home, trust records):
    // a mount of ~ or ~/.local would show it to the sandbox.
    absl::StatusOr<std::string> state = HostStateStoreDir(host);
    if (state.ok() && !HasDotDot(*state)) facts.extra_forbidden.push_back(*std::move(state));
  }
}

}  // namespace np
