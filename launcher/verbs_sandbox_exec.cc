// sandbox-exec: the internal verb every printed plan runs.
//
// `np-exec sandbox-exec --runtime R --project P [--mount-point M] [--image I]
// [--account-view DIR] [--env NAMES] -- BIN ARGS...` carries out a printed
// plan the way the run path carries out its own: it checks trust and the
// ratchet for project P, creates the placeholders of P's missing protected
// paths (bound by path in a printed plan, pinned here), and hands the plan to
// the run path's executor (run_wrapped.h): the persistent home and the
// caller's account view the argv binds, the ratchet, the watchdog, the audit
// lines, the runtime's environment by name (bubblewrap: core's
// SandboxEnvPlan; a runtime client: the caller's environment without the
// interposer's variables, with a trusted PATH), signals forwarded, podman's
// secrets, bubblewrap's system-call filter. So a printed plan, run as printed
// by a caller whose environment holds anything at all, is as strict as a run.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "core/git_mounts.h"
#include "core/plan.h"
#include "core/protected_paths.h"
#include "launcher/account_view.h"
#include "launcher/audit_log.h"
#include "launcher/environment.h"
#include "launcher/protected_placeholders.h"
#include "launcher/run_wrapped.h"
#include "launcher/runtime/driver.h"
#include "launcher/source_pins.h"
#include "launcher/spawn_facts.h"
#include "launcher/spawn_log.h"
#include "launcher/trust_gate.h"
#include "launcher/verbs.h"

namespace np {
namespace {

absl::Status Usage(absl::string_view why) {
  return MakeError(absl::StatusCode::kInvalidArgument, "usage",
                   absl::StrCat("sandbox-exec ", why,
                                "; it takes --runtime R --project P [--mount-point M] [--image I] "
                                "[--account-view DIR] [--env NAMES] -- BIN ARGS..."));
}

// The container's name in an engine's argv: the value of its own `--name`,
// before the image (what follows is the program's); "" when absent.
std::string ContainerName(const std::vector<std::string>& argv, const std::string& image) {
  const auto end = image.empty() ? argv.end() : std::find(argv.begin(), argv.end(), image);
  const auto found = std::find(argv.begin(), end, "--name");
  return found == end || found + 1 == end ? "" : *(found + 1);
}

// The protected paths the printed plan binds by path, the worktree's git
// directories among them, where the project is inside.
absl::StatusOr<std::vector<ProtectedBind>> PrintedProtectedBinds(const Settings& settings,
                                                                 const HostFacts& host,
                                                                 const MountPolicy& policy,
                                                                 const std::string& mount_point) {
  absl::StatusOr<std::vector<std::string>> list =
      ProtectedList(policy.project_real, settings.config.container.protect);
  if (!list.ok()) return list.status();
  absl::StatusOr<std::vector<ProtectedBind>> binds = PlanProtectedBinds(policy.project_real, *list);
  if (!binds.ok()) return binds.status();
  absl::StatusOr<GitMounts> git = PlanGitMounts(policy.project_real, mount_point, policy,
                                                BaseFacts(host, policy.project_real).home,
                                                {"/tmp", std::string(kContainerHome)});
  if (!git.ok()) return git.status();
  binds->insert(binds->end(), git->binds.begin(), git->binds.end());
  return binds;
}

}  // namespace

absl::StatusOr<Outcome> VerbSandboxExec(const CommandLine& cl, const HostFacts& host,
                                        const Reporter& reporter) {
  if (cl.program.empty() || cl.program.front().empty() || cl.program.front().front() != '/') {
    return Usage("needs the runtime's absolute path after --");
  }
  if (cl.runtime.empty() || cl.sandbox_project.empty())
    return Usage("needs --runtime and --project");
  absl::StatusOr<Runtime> runtime = ParseRuntime(cl.runtime);
  if (!runtime.ok()) return runtime.status();
  const RuntimeTraits& traits = TraitsOf(*runtime);

  // The project's settings as the run path reads them, from its own root.
  absl::StatusOr<Settings> settings =
      LoadSettings({cl.sandbox_project, OperatorConfigPath(host), host.env_tier, false});
  if (!settings.ok()) return settings.status();
  // The plan was printed for exactly this project and runtime: a project
  // found elsewhere (its .nubos-pilot/ removed meanwhile, so the walk went on
  // to an enclosing one) or another runtime is not what was judged.
  if (settings->project.root != cl.sandbox_project) {
    return MakeError(
        absl::StatusCode::kFailedPrecondition, "project-moved",
        absl::StrCat("the printed plan's project ", cl.sandbox_project, " is now found as ",
                     settings->project.found() ? settings->project.root : std::string("no project"),
                     "; nothing ran. Print the plan again with np-exec wrap"),
        {{"project", cl.sandbox_project}, {"found", settings->project.root}});
  }
  if (*runtime != settings->config.container.runtime) {
    return Usage(absl::StrCat("--runtime ", cl.runtime, " is not the project's runtime"));
  }
  const SpawnLog log(reporter, host, settings->project);
  const nlohmann::json tier_record = TierRecord(host, *settings, cl.program);
  const absl::string_view state_home = GetEnv(host.envp, "XDG_STATE_HOME");
  absl::StatusOr<TrustGate> trust = EvaluateTrust(*settings, state_home, host.home, host.uid);
  if (!trust.ok()) return log.Refuse(tier_record, trust.status());
  if (!trust->decision.status.ok()) return log.Refuse(tier_record, trust->decision.status);
  absl::StatusOr<MountPolicy> policy = MakeMountPolicy(settings->project_root, {});
  if (!policy.ok()) return log.Refuse(tier_record, policy.status());
  // Where the project is inside: the printed plan's (`wrap --workdir`), else
  // the configured workdir, else its own path.
  const std::optional<std::string>& workdir = settings->config.container.workdir;
  const std::string mount_point = !cl.sandbox_mount_point.empty() ? cl.sandbox_mount_point
                                  : workdir.has_value()           ? *workdir
                                                                  : policy->project_real;
  if (mount_point.empty() || mount_point.front() != '/') {
    return Usage("needs an absolute --mount-point");
  }
  if (!cl.sandbox_account_view.empty() &&
      !IsPrintedAccountViewDir(*settings, host, cl.sandbox_account_view)) {
    return Usage("--account-view names no printed plan's view in this account's state store");
  }

  SpawnPlan plan;
  plan.resolved = settings->resolved;
  plan.runtime = *runtime;
  plan.wrapped = true;
  plan.exec_path = cl.program.front();
  plan.argv = cl.program;
  plan.argv.front() = std::string(traits.name);
  plan.env_names = cl.env_names;
  if (traits.sandbox_env_from_runtime) {
    plan.env = SandboxEnvPlan(cl.env_names);
  } else {
    plan.env.inherit = true;
    plan.env.unset = kInterposerVars;
    plan.env.forward = cl.env_names;
  }
  plan.project_real = policy->project_real;
  plan.project_mount = mount_point;
  plan.image = cl.sandbox_image;
  plan.pull_missing = settings->config.container.pull_missing;
  if (traits.named_containers) plan.container_name = ContainerName(cl.program, plan.image);
  plan.account_dir = cl.sandbox_account_view;
  plan.self_path = host.self_path;
  // podman keeps -e values in its state database: forwarded values go in as
  // podman secrets named after the container, as on the run path.
  if (traits.forwards_as_secrets && !cl.env_names.empty() && plan.container_name.empty()) {
    return Usage("needs the plan's --name to forward values as the runtime's secrets");
  }
  absl::StatusOr<std::vector<ProtectedBind>> binds =
      PrintedProtectedBinds(*settings, host, *policy, mount_point);
  if (!binds.ok()) return log.Refuse(tier_record, binds.status());
  plan.protected_binds = *binds;
  // Through the opened project folder, as on the run path, and only when its
  // path still names it.
  if (settings->project.found() && policy->project_real != settings->project.root) {
    return log.Refuse(tier_record, ProjectMovedError(settings->project.root, policy->project_real));
  }
  std::optional<ProtectedPlaceholders> placeholders;
  {
    absl::StatusOr<ProtectedPlaceholders> made = CreatePlaceholdersForSpawn(
        state_home, host.home, host.uid, policy->project_real, *binds, settings->project.fd());
    if (!made.ok()) return log.Refuse(tier_record, made.status());
    placeholders.emplace(*std::move(made));
  }
  // The placeholders, made just now, pinned like the plan's other sources
  // (source_pins.h): bubblewrap binds their descriptors.
  SourcePins pins(/*keep_descriptors=*/traits.binds_by_descriptor);
  absl::Status pinned = PinPlaceholderBinds(*runtime, *binds, policy->project_real, mount_point,
                                            pins, plan.argv, plan.bind_fds);
  if (!pinned.ok()) return log.Refuse(tier_record, pinned);

  const RuntimeDriver& driver = DriverFor(*runtime);
  const Endpoint endpoint = driver.Resolve(host);
  // The image's own accounts are the view's base: its content ID, as the
  // run path learns it.
  std::string image_id;
  if (!plan.account_dir.empty() && !plan.image.empty()) {
    (void)driver.ProbeForSpawn(host, endpoint, plan.image, &image_id);
  }
  // The identity file the argv binds is written whatever the caller's
  // configuration says now (a bind of a missing file would fail the run).
  const std::string gitconfig_path = AccountGitConfigPath(plan.account_dir);
  const bool binds_gitconfig =
      !plan.account_dir.empty() &&
      std::any_of(cl.program.begin(), cl.program.end(), [&gitconfig_path](const std::string& arg) {
        return arg.find(gitconfig_path) != std::string::npos;
      });
  std::string gitconfig = binds_gitconfig ? CallerGitConfig(host) : "";
  if (binds_gitconfig && gitconfig.empty()) {
    gitconfig = "# np-exec: the caller's git configuration names no identity\n";
  }
  const WrappedSpawn spawn{*settings,        plan,     cl.program,  driver,
                           endpoint,         *trust,   tier_record, /*session=*/nullptr,
                           plan.account_dir, image_id, gitconfig};
  return RunWrapped(spawn, placeholders, host, reporter, log);
}

}  // namespace np
