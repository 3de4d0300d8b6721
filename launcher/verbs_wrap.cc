// wrap: print the plan for a spawn; run nothing.
#include <limits.h>
#include <stdlib.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/errors.h"
#include "core/plan.h"
#include "launcher/container_facts.h"
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
    facts = ContainerFacts(host, cwd, config.runtime, endpoint, "np-exec-wrap", /*owner=*/"");
  }
  absl::StatusOr<SpawnPlan> plan =
      PlanSpawn(*settings, container ? &probe : nullptr, facts, cl.program, cl.env_names);
  if (!plan.ok()) return VerbFail(plan.status(), host);
  WriteJson(PlanToJson(*plan, plan->wrapped ? endpoint.bin : std::string()));
  return 0;
}

}  // namespace np
