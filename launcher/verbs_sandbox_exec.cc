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
#include "launcher/audit_log.h"
#include "launcher/environment.h"
#include "launcher/protected_placeholders.h"
#include "launcher/run_wrapped.h"
#include "launcher/runtime/driver.h"
#include "launcher/source_pins.h"
#include "launcher/spawn_facts.h"
#include "launcher/spawn_lease.h"
#include "launcher/spawn_log.h"
#include "launcher/state/account_view.h"
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

// Where an engine argv's options end: at its image, the word after
// `-w WORKDIR` (core's builder writes them together), so an option's value
// equal to the image's name (`--network none`) is never taken for it; the
// argv's end when it has no `-w`.
std::vector<std::string>::const_iterator OptionsEnd(const std::vector<std::string>& argv) {
  const auto w = std::find(argv.begin(), argv.end(), "-w");
  return argv.end() - w < 3 ? argv.end() : w + 2;
}

// The container's name in an engine's argv: the value of its own `--name`
// among its options; "" when absent.
std::string ContainerName(const std::vector<std::string>& argv) {
  const auto end = OptionsEnd(argv);
  const auto found = std::find(argv.begin(), end, "--name");
  return found == end || found + 1 == end ? "" : *(found + 1);
}

// The forwarded values the printed argv takes as the runtime's secrets, each
// `--secret SECRET,type=env,target=NAME` among its options: the plan as wrap
// made it (core's argv builder), read here, never rewritten.
std::vector<EnvSecret> PrintedEnvSecrets(const std::vector<std::string>& argv) {
  std::vector<EnvSecret> secrets;
  const auto end = OptionsEnd(argv);
  for (auto at = argv.begin(); at != end && at + 1 != end; ++at) {
    if (*at != "--secret") continue;
    const std::string& spec = *(at + 1);
    const size_t comma = spec.find(",type=env,target=");
    if (comma == std::string::npos) continue;
    secrets.push_back({spec.substr(0, comma), spec.substr(comma + 17)});
  }
  return secrets;
}

// Which forwarded value goes in as a secret was decided by the environment
// the plan was printed in; run in another, a variable set now but printed as
// a plain `-e NAME` would go in as a value the runtime keeps in its state,
// and a secret's variable unset now has nothing to carry. Either is
// `printed-plan-stale`: nothing ran, print the plan again.
absl::Status CheckPrintedEnv(const std::vector<std::string>& argv,
                             const std::vector<EnvSecret>& secrets, char** envp) {
  auto set = [envp](const std::string& name) { return ForwardedValueIsSet(envp, name); };
  auto stale = [](const std::string& name, absl::string_view why) {
    return MakeError(absl::StatusCode::kFailedPrecondition, "printed-plan-stale",
                     absl::StrCat("the printed plan forwards ", name, ", which ", why,
                                  "; nothing ran. Print the plan again with np-exec wrap in the "
                                  "environment it is to run in"),
                     {{"name", name}});
  };
  const auto end = OptionsEnd(argv);
  for (auto at = argv.begin(); at != end && at + 1 != end; ++at) {
    if (*at == "-e" && (at + 1)->find('=') == std::string::npos && set(*(at + 1))) {
      return stale(*(at + 1), "was not set when it was printed and is set now");
    }
  }
  for (const EnvSecret& secret : secrets) {
    if (!set(secret.name)) return stale(secret.name, "was set when it was printed and is not now");
  }
  return absl::OkStatus();
}

// The protected paths the printed plan binds by path, the worktree's git
// directories among them, where the project is inside.
absl::StatusOr<std::vector<ProtectedBind>> PrintedProtectedBinds(const Settings& settings,
                                                                 const HostFacts& host,
                                                                 const MountPolicy& policy,
                                                                 const std::string& mount_point) {
  const int project_fd = settings.project.FdFor(policy.project_real);
  absl::StatusOr<std::vector<std::string>> list = ProtectedList(
      policy.project_real, settings.config.container.protect, settings.git.get(), project_fd);
  if (!list.ok()) return list.status();
  absl::StatusOr<std::vector<ProtectedBind>> binds =
      PlanProtectedBinds(policy.project_real, *list, project_fd);
  if (!binds.ok()) return binds.status();
  absl::StatusOr<GitMounts> git =
      PlanGitMounts(policy.project_real, mount_point, policy, RealHome(host),
                    {"/tmp", std::string(kContainerHome)});
  if (!git.ok()) return git.status();
  binds->insert(binds->end(), git->binds.begin(), git->binds.end());
  return binds;
}

// One printed plan being carried out: what sandbox-exec read and decided,
// and what it holds until the runtime exits, filled in by the steps below.
struct PrintedSpawn {
  PrintedSpawn(const CommandLine& c, const HostFacts& h, const Reporter& r)
      : cl(c), host(h), reporter(r) {}
  PrintedSpawn(const PrintedSpawn&) = delete;
  PrintedSpawn& operator=(const PrintedSpawn&) = delete;

  // Records the refusal in the project's log (SpawnLog::Refuse) and hands it back.
  absl::Status Refuse(absl::Status error) const { return log->Refuse(tier_record, error); }

  const CommandLine& cl;
  const HostFacts& host;
  const Reporter& reporter;
  Runtime runtime{};  // Parsed from --runtime.
  const RuntimeTraits* traits = nullptr;
  Settings settings;
  std::optional<SpawnLog> log;
  nlohmann::json tier_record;
  std::optional<TrustGate> trust;
  MountPolicy policy;
  std::string mount_point;
  SpawnPlan plan;
  SpawnLease lease;  // The placeholders and their pins.
  const RuntimeDriver* driver = nullptr;
  Endpoint endpoint;
  SpawnImage image;
  std::string gitconfig;
};

// The plan was printed for exactly this project and runtime: a project found
// elsewhere (its .nubos-pilot/ removed meanwhile, so the walk went on to an
// enclosing one) or another runtime is not what was judged. The project's
// settings are read as the run path reads them, from its own root.
absl::Status LoadPrintedSettings(PrintedSpawn& s) {
  const CommandLine& cl = s.cl;
  if (cl.program.empty() || cl.program.front().empty() || cl.program.front().front() != '/') {
    return Usage("needs the runtime's absolute path after --");
  }
  if (cl.runtime.empty() || cl.sandbox_project.empty()) {
    return Usage("needs --runtime and --project");
  }
  absl::StatusOr<Runtime> runtime = ParseRuntime(cl.runtime);
  if (!runtime.ok()) return runtime.status();
  s.runtime = *runtime;
  s.traits = &TraitsOf(s.runtime);
  absl::StatusOr<Settings> settings =
      LoadSettings({cl.sandbox_project, OperatorConfigPath(s.host), s.host.env_tier, false});
  if (!settings.ok()) return settings.status();
  s.settings = *std::move(settings);
  const ProjectLocation& project = s.settings.project;
  if (project.root != cl.sandbox_project) {
    return MakeError(
        absl::StatusCode::kFailedPrecondition, "project-moved",
        absl::StrCat("the printed plan's project ", cl.sandbox_project, " is now found as ",
                     project.found() ? project.root : std::string("no project"),
                     "; nothing ran. Print the plan again with np-exec wrap"),
        {{"project", cl.sandbox_project}, {"found", project.root}});
  }
  if (s.runtime != s.settings.config.container.runtime) {
    return Usage(absl::StrCat("--runtime ", cl.runtime, " is not the project's runtime"));
  }
  s.log.emplace(s.reporter, s.host, project);
  s.tier_record = TierRecord(s.host, s.settings, cl.program);
  return absl::OkStatus();
}

// Trust and the ratchet, as on the run path; then where the project is
// inside: the printed plan's (`wrap --workdir`), else the configured
// workdir, else its own path.
absl::Status JudgePrinted(PrintedSpawn& s) {
  const HostFacts& host = s.host;
  absl::StatusOr<TrustGate> trust =
      EvaluateTrust(s.settings, GetEnv(host.envp, "XDG_STATE_HOME"), host.home, host.uid);
  if (!trust.ok()) return s.Refuse(trust.status());
  if (!trust->decision.status.ok()) return s.Refuse(trust->decision.status);
  s.trust.emplace(*std::move(trust));
  // The folder judged must still be the project at its path, as on the run path.
  absl::Status still_there = CheckProjectStillAt(s.settings.project);
  if (!still_there.ok()) return s.Refuse(still_there);
  absl::StatusOr<MountPolicy> policy = MakeMountPolicy(s.settings.project_root, {});
  if (!policy.ok()) return s.Refuse(policy.status());
  s.policy = *std::move(policy);
  const std::optional<std::string>& workdir = s.settings.config.container.workdir;
  s.mount_point = !s.cl.sandbox_mount_point.empty() ? s.cl.sandbox_mount_point
                  : workdir.has_value()             ? *workdir
                                                    : s.policy.project_real;
  if (s.mount_point.empty() || s.mount_point.front() != '/') {
    return Usage("needs an absolute --mount-point");
  }
  if (!s.cl.sandbox_account_view.empty() &&
      !IsPrintedAccountViewDir(s.settings, host, s.cl.sandbox_account_view)) {
    return Usage("--account-view names no printed plan's view in this account's state store");
  }
  return absl::OkStatus();
}

// The printed argv as the run path's plan: the runtime's environment by
// name, the project, the image, the container's name, the account view.
absl::Status DescribePrintedPlan(PrintedSpawn& s) {
  const CommandLine& cl = s.cl;
  SpawnPlan& plan = s.plan;
  plan.resolved = s.settings.resolved;
  plan.runtime = s.runtime;
  plan.wrapped = true;
  plan.exec_path = cl.program.front();
  plan.argv = cl.program;
  plan.argv.front() = std::string(s.traits->name);
  plan.env_names = cl.env_names;
  if (s.traits->sandbox_env_from_runtime) {
    plan.env = SandboxEnvPlan(cl.env_names);
  } else {
    plan.env.inherit = true;
    plan.env.unset = kInterposerVars;
    plan.env.forward = cl.env_names;
  }
  plan.project_real = s.policy.project_real;
  plan.project_mount = s.mount_point;
  plan.image = cl.sandbox_image;
  plan.pull_missing = s.settings.config.container.pull_missing;
  if (s.traits->named_containers) plan.container_name = ContainerName(cl.program);
  plan.account_dir = cl.sandbox_account_view;
  plan.self_path = SelfPath();
  // podman keeps -e values in its state database: forwarded values go in as
  // podman secrets named after the container, as on the run path.
  if (s.traits->forwards_as_secrets) {
    if (!cl.env_names.empty() && plan.container_name.empty()) {
      return Usage("needs the plan's --name to forward values as the runtime's secrets");
    }
    plan.env_secrets = PrintedEnvSecrets(cl.program);
    absl::Status same = CheckPrintedEnv(cl.program, plan.env_secrets, s.host.envp);
    if (!same.ok()) return s.Refuse(same);
  }
  return absl::OkStatus();
}

// The placeholders of the project's missing protected paths, made through
// the opened project folder (as on the run path, and only when its path
// still names it), then pinned like the plan's other sources
// (source_pins.h): bubblewrap binds their descriptors.
absl::Status MakePrintedPlaceholders(PrintedSpawn& s) {
  const ProjectLocation& project = s.settings.project;
  const std::string& project_real = s.policy.project_real;
  absl::StatusOr<std::vector<ProtectedBind>> binds =
      PrintedProtectedBinds(s.settings, s.host, s.policy, s.mount_point);
  if (!binds.ok()) return s.Refuse(binds.status());
  s.plan.protected_binds = *binds;
  if (project.found() && project_real != project.root) {
    return s.Refuse(ProjectMovedError(project.root, project_real));
  }
  absl::StatusOr<ProtectedPlaceholders> made =
      CreatePlaceholdersForSpawn(GetEnv(s.host.envp, "XDG_STATE_HOME"), s.host.home, s.host.uid,
                                 project_real, *binds, project.fd());
  if (!made.ok()) return s.Refuse(made.status());
  s.lease.placeholders.emplace(*std::move(made));
  s.lease.pins.emplace(/*keep_descriptors=*/s.traits->binds_by_descriptor);
  absl::Status pinned = s.lease.pins->ReadBelow(project_real, project.fd());
  if (!pinned.ok()) return s.Refuse(pinned);
  pinned = DriverFor(s.runtime).PinPrintedPlaceholders(*binds, project_real, s.mount_point,
                                                       *s.lease.pins, s.plan.argv, s.plan.bind_fds);
  if (!pinned.ok()) return s.Refuse(pinned);
  return absl::OkStatus();
}

// The caller's account the argv binds: the image's own accounts are the
// view's base (its content ID, as the run path learns it), and the identity
// file is written whatever the caller's configuration says now (a bind of a
// missing file would fail the run).
absl::Status PrepareAccount(PrintedSpawn& s) {
  const SpawnPlan& plan = s.plan;
  s.driver = &DriverFor(s.runtime);
  s.endpoint = s.driver->Resolve(s.host);
  // A printed plan carries no per-spawn check of the project: never on an
  // engine on another host, whatever the operator accepts for the run path.
  ContainerConfig printed;
  printed.runtime = s.runtime;
  absl::Status here = CheckEngineLocality(printed, s.endpoint.remote, s.endpoint.reach);
  if (!here.ok()) return s.Refuse(here);
  if (!plan.account_dir.empty() && !plan.image.empty()) {
    (void)s.driver->ProbeForSpawn(s.host, s.endpoint, plan.image, &s.image);
  }
  const std::string gitconfig_path = AccountGitConfigPath(plan.account_dir);
  const bool binds_gitconfig =
      !plan.account_dir.empty() &&
      std::any_of(s.cl.program.begin(), s.cl.program.end(), [&](const std::string& arg) {
        return arg.find(gitconfig_path) != std::string::npos;
      });
  if (!binds_gitconfig) return absl::OkStatus();
  s.gitconfig = CallerGitConfig(s.host);
  if (s.gitconfig.empty())
    s.gitconfig = "# np-exec: the caller's git configuration names no identity\n";
  return absl::OkStatus();
}

using PrintedStep = absl::Status (*)(PrintedSpawn&);
constexpr PrintedStep kPrintedSteps[] = {LoadPrintedSettings, JudgePrinted, DescribePrintedPlan,
                                         MakePrintedPlaceholders, PrepareAccount};

}  // namespace

absl::StatusOr<Outcome> VerbSandboxExec(const CommandLine& cl, const HostFacts& host,
                                        const Reporter& reporter) {
  PrintedSpawn s(cl, host, reporter);
  for (PrintedStep step : kPrintedSteps) {
    absl::Status done = step(s);
    if (!done.ok()) return done;
  }
  const WrappedSpawn spawn{s.settings, s.plan,        cl.program,         *s.driver,  s.endpoint,
                           *s.trust,   s.tier_record, s.plan.account_dir, s.image.id, s.gitconfig};
  return RunWrapped(spawn, s.lease, host, reporter, *s.log);
}

}  // namespace np
