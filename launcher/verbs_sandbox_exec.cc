// sandbox-exec: the internal verb every printed plan runs.
//
// `np-exec sandbox-exec --runtime R --project P [--mount-point M] [--env NAMES] -- BIN ARGS...`
// does for a caller who runs a printed plan what the run path does around the
// runtime: it checks trust and the ratchet for project P, creates the
// placeholders of P's missing protected paths (held until the runtime exits,
// as on the run path), builds the runtime's environment by name exactly as the
// run path does (bubblewrap: core's SandboxEnvPlan, so only the forwarded
// names reach the sandbox; a runtime client: the caller's environment without
// the interposer's variables), and supervises the runtime (signals forwarded,
// only 0 to 2 inherited, and for bubblewrap the same system-call filter as
// a run, bwrap_seccomp.h). So a printed plan, run as printed by a caller whose
// environment holds anything at all, is as strict as a run.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "core/git_mounts.h"
#include "core/plan.h"
#include "core/protected_paths.h"
#include "launcher/agent_home.h"
#include "launcher/environment.h"
#include "launcher/protected_placeholders.h"
#include "launcher/runtime/argv_handoff.h"
#include "launcher/runtime/bwrap_seccomp.h"
#include "launcher/runtime/driver.h"
#include "launcher/runtime/podman_secrets.h"
#include "launcher/source_pins.h"
#include "launcher/spawn_facts.h"
#include "launcher/supervise.h"
#include "launcher/trust_gate.h"
#include "launcher/verbs.h"

namespace np {
namespace {

absl::Status Usage(absl::string_view why) {
  return MakeError(
      absl::StatusCode::kInvalidArgument, "usage",
      absl::StrCat("sandbox-exec ", why,
                   "; it takes --runtime R --project P [--mount-point M] [--env NAMES] -- BIN "
                   "ARGS..."));
}

}  // namespace

absl::StatusOr<Outcome> VerbSandboxExec(const CommandLine& cl, const HostFacts& host) {
  if (cl.program.empty() || cl.program.front().empty() || cl.program.front().front() != '/') {
    return Usage("needs the runtime's absolute path after --");
  }
  if (cl.runtime.empty() || cl.sandbox_project.empty())
    return Usage("needs --runtime and --project");
  absl::StatusOr<Runtime> runtime = ParseRuntime(cl.runtime);
  if (!runtime.ok()) return runtime.status();

  // The project's settings as the run path reads them, from its own root.
  absl::StatusOr<Settings> settings =
      LoadSettings({cl.sandbox_project, OperatorConfigPath(host), host.env_tier, false});
  if (!settings.ok()) return settings.status();
  const absl::string_view state_home = GetEnv(host.envp, "XDG_STATE_HOME");
  absl::StatusOr<TrustGate> trust = EvaluateTrust(*settings, state_home, host.home, host.uid);
  if (!trust.ok()) return trust.status();
  if (!trust->decision.status.ok()) return trust->decision.status;
  absl::StatusOr<MountPolicy> policy = MakeMountPolicy(settings->project_root, {});
  if (!policy.ok()) return policy.status();
  absl::StatusOr<std::vector<std::string>> list =
      ProtectedList(policy->project_real, settings->config.container.protect);
  if (!list.ok()) return list.status();
  absl::StatusOr<std::vector<ProtectedBind>> binds =
      PlanProtectedBinds(policy->project_real, *list);
  if (!binds.ok()) return binds.status();
  // The git directories of a worktree as the plan mounted them: their
  // placeholders too must exist before the runtime binds them.
  // Where the project is inside: the printed plan's (`wrap --workdir`), else
  // the configured workdir, else its own path.
  const std::optional<std::string>& workdir = settings->config.container.workdir;
  const std::string mount_point = !cl.sandbox_mount_point.empty() ? cl.sandbox_mount_point
                                  : workdir.has_value()           ? *workdir
                                                                  : policy->project_real;
  if (mount_point.empty() || mount_point.front() != '/') {
    return Usage("needs an absolute --mount-point");
  }
  absl::StatusOr<GitMounts> git = PlanGitMounts(policy->project_real, mount_point, *policy,
                                                BaseFacts(host, policy->project_real).home,
                                                {"/tmp", std::string(kContainerHome)});
  if (!git.ok()) return git.status();
  binds->insert(binds->end(), git->binds.begin(), git->binds.end());
  absl::StatusOr<ProtectedPlaceholders> placeholders =
      CreatePlaceholdersForSpawn(state_home, host.home, host.uid, policy->project_real, *binds);
  if (!placeholders.ok()) return placeholders.status();
  // The plan binds the persistent home: created (and seeded) here, as on
  // the run path, and held until the runtime exits.
  absl::StatusOr<std::optional<AgentHomeLease>> home =
      AcquireHomeForSpawn(*settings, state_home, host.home, host.uid);
  if (!home.ok()) return home.status();
  absl::Status recorded = RecordSpawnRan(*trust, host.uid);
  if (!recorded.ok()) return recorded;

  const RuntimeTraits& traits = TraitsOf(*runtime);
  EnvPlan env;
  if (traits.sandbox_env_from_runtime) {
    env = SandboxEnvPlan(cl.env_names);
  } else {
    env.inherit = true;
    env.unset = kInterposerVars;
  }
  SuperviseRequest request;
  request.grace_ms = host.grace_ms;
  request.bin = cl.program.front();
  request.argv = cl.program;
  request.argv.front() = std::string(traits.name);
  request.env = BuildEnvironment(env, host.envp);
  // The placeholders, made just now, pinned like the plan's other sources
  // (source_pins.h): bubblewrap binds their descriptors.
  SourcePins pins(/*keep_descriptors=*/TraitsOf(*runtime).binds_by_descriptor);
  std::vector<int> bind_fds;
  absl::Status pinned = PinPlaceholderBinds(*runtime, *binds, policy->project_real, mount_point,
                                            pins, request.argv, bind_fds);
  if (!pinned.ok()) return pinned;
  if (traits.sandbox_env_from_runtime) {
    // As on the run path: bubblewrap dies with np-exec and takes the
    // program along; it has a process group of its own; and it gets the
    // same system-call filter, or nothing runs.
    request.parent_death_signal = SIGKILL;
    request.own_process_group = true;
    absl::StatusOr<int> seccomp = BuildSeccompFilterFd();
    if (!seccomp.ok()) return seccomp.status();
    absl::Status filtered = AddSeccompArg(request.argv, *seccomp);
    if (!filtered.ok()) return filtered;
    request.keep_fds = {*seccomp};
    request.keep_fds.insert(request.keep_fds.end(), bind_fds.begin(), bind_fds.end());
    // Past bubblewrap's argument limit, as on the run path.
    absl::StatusOr<int> handed = HandOffArgv(request.argv);
    if (!handed.ok()) return handed.status();
    if (*handed >= 0) request.keep_fds.push_back(*handed);
  }
  // podman keeps -e values in its state database: forwarded values go in as
  // podman secrets, removed when the runtime exits, as on the run path.
  std::vector<std::string> secrets;
  if (traits.forwards_as_secrets && !cl.env_names.empty()) {
    const auto name = std::find(request.argv.begin(), request.argv.end(), "--name");
    if (name == request.argv.end() || name + 1 == request.argv.end()) {
      return Usage("needs the plan's --name to forward values as the runtime's secrets");
    }
    absl::StatusOr<std::vector<std::string>> moved =
        MoveEnvToPodmanSecrets(request.bin, request.env, *(name + 1),
                               ForwardedNamesSet(cl.env_names, host.envp), request.argv);
    if (!moved.ok()) return moved.status();
    secrets = *std::move(moved);
  }
  SuperviseResult result = Supervise(request);
  RemovePodmanSecrets(request.bin, request.env, secrets);
  placeholders->Finish();
  if (result.start_errno != 0) return RuntimeNotExecutable(request.bin, result.start_errno);
  return Outcome{result.exit_code};
}

}  // namespace np
