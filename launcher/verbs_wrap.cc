// wrap: print the plan for a spawn; run nothing.
#include <limits.h>
#include <stdlib.h>
#include <sys/random.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/errors.h"
#include "core/plan.h"
#include "launcher/output.h"
#include "launcher/probe.h"
#include "launcher/run.h"
#include "launcher/verbs.h"

namespace np {

int VerbWrap(const CommandLine& cl, const HostFacts& host) {
  std::string cwd = host.cwd;
  if (!cl.workdir.empty()) {
    char real[PATH_MAX];
    if (realpath(cl.workdir.c_str(), real) == nullptr) {
      return VerbFail(MakeError(absl::StatusCode::kInvalidArgument, "invalid-path",
                                absl::StrCat("--workdir ", cl.workdir, " does not exist"),
                                {{"workdir", cl.workdir}}),
                      host);
    }
    cwd = real;
  }
  absl::StatusOr<Settings> settings =
      LoadSettings({cwd, OperatorConfigPath(host), host.env_tier, true});
  if (!settings.ok()) return VerbFail(settings.status(), host);
  const ContainerConfig& config = settings->config.container;
  const bool container = settings->resolved.tier == Tier::kContainer;

  SpawnFacts facts;
  facts.cwd = cwd;
  ProbeResult probe;
  Endpoint endpoint;
  if (container) {
    endpoint = ResolveEndpoint(config.runtime, host);
    probe = ProbeRuntime(config.runtime, host);
    char home[PATH_MAX];
    facts.home = !host.home.empty() && realpath(host.home.c_str(), home) != nullptr
                     ? std::string(home)
                     : host.home;
    facts.uid = host.uid;
    facts.gid = host.gid;
    facts.stdin_tty = host.stdin_tty;
    facts.stdout_tty = host.stdout_tty;
    uint32_t random = 0;
    if (getrandom(&random, sizeof(random), 0) != sizeof(random)) random = 0;
    facts.container_name = absl::StrFormat("np-exec-wrap-%d-%08x", host.pid, random);
    if (endpoint.socket.has_value()) facts.extra_forbidden.push_back(*endpoint.socket);
    if (config.runtime == Runtime::kPodman) facts.init_path = PodmanInitPath();
  }
  absl::StatusOr<SpawnPlan> plan =
      PlanSpawn(*settings, container ? &probe : nullptr, facts, cl.program, cl.env_names);
  if (!plan.ok()) return VerbFail(plan.status(), host);
  WriteJson(PlanToJson(*plan, plan->wrapped ? endpoint.bin : std::string()));
  return 0;
}

}  // namespace np
