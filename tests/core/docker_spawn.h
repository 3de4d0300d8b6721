// The facts and probe of a container spawn on docker, as a plan test starts
// from: the caller uid 1000 in `project` below `home`, docker found at
// /usr/bin/docker, every program found in /usr/bin. Test-only.
#ifndef NP_EXEC_TESTS_CORE_DOCKER_SPAWN_H_
#define NP_EXEC_TESTS_CORE_DOCKER_SPAWN_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/plan.h"

namespace np::testing {

inline SpawnFacts DockerSpawnFacts(const std::string& project, const std::string& home) {
  SpawnFacts facts;
  facts.cwd = project;
  facts.home = home;
  facts.uid = 1000;
  facts.gid = 1000;
  facts.container_name = "np-exec-7";
  facts.runtime_bin = "/usr/bin/docker";
  facts.path = "/usr/bin";
  facts.self_path = "/usr/local/bin/np-exec";
  facts.find = [](absl::string_view name, absl::string_view, bool) -> absl::StatusOr<std::string> {
    return absl::StrCat("/usr/bin/", name);
  };
  return facts;
}

inline ProbeResult DockerAvailable() {
  ProbeResult probe;
  probe.runtime = Runtime::kDocker;
  probe.available = true;
  probe.bin = "/usr/bin/docker";
  return probe;
}

}  // namespace np::testing

#endif  // NP_EXEC_TESTS_CORE_DOCKER_SPAWN_H_
