#include "launcher/container_facts.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/random.h>
#include <unistd.h>

#include "absl/strings/str_format.h"

namespace np {
namespace {

// Debian's tini package; static, so it runs in any image.
constexpr char kStaticTini[] = "/usr/bin/tini-static";

std::string RealHome(const std::string& home) {
  if (home.empty()) return "";
  char buffer[PATH_MAX];
  return realpath(home.c_str(), buffer) != nullptr ? std::string(buffer) : home;
}

}  // namespace

std::string PodmanInitPath() {
  return access(kStaticTini, X_OK) == 0 ? std::string(kStaticTini) : std::string();
}

SpawnFacts ContainerFacts(const HostFacts& host, const std::string& cwd, Runtime runtime,
                          const Endpoint& endpoint, absl::string_view name_prefix,
                          std::string owner) {
  SpawnFacts facts;
  facts.cwd = cwd;
  facts.home = RealHome(host.home);
  facts.uid = host.uid;
  facts.gid = host.gid;
  facts.stdin_tty = host.stdin_tty;
  facts.stdout_tty = host.stdout_tty;
  uint32_t random = 0;
  if (getrandom(&random, sizeof(random), 0) != sizeof(random)) random = 0;
  facts.container_name = absl::StrFormat("%s-%d-%08x", name_prefix, host.pid, random);
  facts.owner = std::move(owner);
  if (endpoint.socket.has_value()) facts.extra_forbidden.push_back(*endpoint.socket);
  if (runtime == Runtime::kPodman) facts.init_path = PodmanInitPath();
  return facts;
}

}  // namespace np
