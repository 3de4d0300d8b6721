// wrap: print the plan for a spawn; run nothing. The plan is the run path's
// own (PlanSpawn with the same facts, the account view included), so what is
// printed is what a run would do, and it is safe to run as printed (plan.h,
// PrintedCommand): sandbox-exec runs it through the run path's executor.
#include "core/plan.h"
#include "launcher/output.h"
#include "launcher/runtime/driver.h"
#include "launcher/source_pins.h"
#include "launcher/spawn_facts.h"
#include "launcher/state/account_view.h"
#include "launcher/state/agent_home.h"
#include "launcher/trust_gate.h"
#include "launcher/verbs.h"

namespace np {

absl::StatusOr<Outcome> VerbWrap(const CommandLine& cl, const HostFacts& host) {
  absl::StatusOr<Settings> settings = LoadHostSettings(host);
  if (!settings.ok()) return settings.status();
  // The image the run path would pick for this program (`images`).
  if (!cl.program.empty()) {
    settings->config.container.image = ImageFor(settings->config.container, cl.program.front());
  }
  const bool container = settings->resolved.tier == Tier::kContainer;
  const RuntimeDriver& driver = DriverFor(settings->config.container.runtime);
  SpawnFacts facts = BaseFacts(host, host.cwd);
  facts.print_only = true;
  if (!cl.workdir.empty()) facts.mount_point = cl.workdir;
  // The printed plan binds the persistent home and the caller's account
  // view as a run does; sandbox-exec creates them.
  facts.agent_home = PlannedAgentHome(*settings, GetEnv(host.envp, "XDG_STATE_HOME"), host.home);
  const std::string account_dir = PlannedAccountViewDir(*settings, host, /*printed=*/true);
  if (!account_dir.empty()) {
    facts.passwd_file = AccountPasswdPath(account_dir);
    facts.group_file = AccountGroupPath(account_dir);
    if (!CallerGitConfig(host).empty()) facts.gitconfig_file = AccountGitConfigPath(account_dir);
  }
  ProbeResult probe;
  // A printed plan carries no descriptor: its entry point checks each mount's
  // identity inside (core/mount_pins.h).
  SourcePins pins(/*keep_descriptors=*/false);
  if (container) {
    facts.pin = pins.AsFunction();
    const Endpoint endpoint = driver.Resolve(host);
    probe = driver.Probe(host, endpoint, ProbeDepth::kForPlan);
    AddContainerFacts(host, driver, endpoint, probe, "np-exec-wrap", /*owned=*/false,
                      !settings->config.container.mounts.empty(), facts);
    AddImageUserFacts(*settings, host, driver, endpoint, facts);
  }
  absl::StatusOr<SpawnPlan> plan =
      PlanSpawn(*settings, container ? &probe : nullptr, facts, cl.program, cl.env_names);
  if (!plan.ok()) return plan.status();
  // A plan a run would refuse (an untrusted widening, a lowered tier) is not
  // printed either: wrap never yields a plan weaker than a run.
  absl::StatusOr<TrustGate> trust =
      EvaluateTrust(*settings, GetEnv(host.envp, "XDG_STATE_HOME"), host.home, host.uid);
  if (!trust.ok()) return trust.status();
  if (!trust->decision.status.ok()) return trust->decision.status;
  WriteJson(PlanToJson(*plan));
  return Outcome{0};
}

}  // namespace np
