#include "core/plan.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/bwrap_argv.h"
#include "core/errors.h"

namespace np {
namespace {

// The config's names first, then --env's, each once.
std::vector<std::string> MergeEnvNames(const std::vector<std::string>& configured,
                                       const std::vector<std::string>& requested) {
  std::vector<std::string> names = configured;
  for (const std::string& name : requested) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

}  // namespace

absl::StatusOr<SpawnPlan> PlanSpawn(const Settings& settings, const ProbeResult* probe,
                                    const SpawnFacts& facts,
                                    const std::vector<std::string>& program,
                                    const std::vector<std::string>& env_names) {
  if (program.empty() || program.front().empty()) {
    return MakeError(absl::StatusCode::kInvalidArgument, "isolation-wrap-no-command",
                     "no program to run: give one after --");
  }
  for (const std::string& name : env_names) {
    absl::Status valid = ValidateEnvName(name);
    if (!valid.ok()) return valid;
  }
  const ContainerConfig& container = settings.config.container;
  SpawnPlan plan;
  plan.resolved = settings.resolved;
  plan.runtime = container.runtime;
  plan.env_names = MergeEnvNames(container.env, env_names);
  absl::Status gate = AssertTierAvailable(settings.resolved, container.runtime, probe);
  if (!gate.ok()) return gate;
  if (settings.resolved.tier != Tier::kContainer) {
    plan.argv = program;
    return plan;
  }

  // Container: validate everything before any argv exists.
  if (settings.project_root.empty()) {
    return MakeError(absl::StatusCode::kFailedPrecondition, "not-in-project",
                     absl::StrCat("the container tier needs a project to mount, and ", facts.cwd,
                                  " is not inside one (no .nubos-pilot/ directory above it)"),
                     {{"startedFrom", facts.cwd}});
  }
  absl::StatusOr<MountPolicy> policy =
      MakeMountPolicy(settings.project_root, facts.extra_forbidden);
  if (!policy.ok()) return policy.status();
  absl::Status project_ok = ValidateProjectMount(*policy, facts.home);
  if (!project_ok.ok()) return project_ok;

  ContainerSpawn spawn;
  spawn.project_root = policy->project_real;
  spawn.cwd = facts.cwd;
  spawn.uid = facts.uid;
  spawn.gid = facts.gid;
  spawn.stdin_tty = facts.stdin_tty;
  spawn.stdout_tty = facts.stdout_tty;
  spawn.name = facts.container_name;
  spawn.owner = facts.owner;
  spawn.init_path = facts.init_path;
  spawn.env_names = plan.env_names;
  spawn.program = program;
  plan.project_mount = ProjectTarget(container, spawn);
  plan.project_real = policy->project_real;

  absl::StatusOr<std::vector<ValidatedMount>> mounts = ValidateMounts(
      container.mounts, *policy, {plan.project_mount, "/tmp", std::string(kContainerHome)});
  if (!mounts.ok()) return mounts.status();
  plan.mounts = *std::move(mounts);
  absl::StatusOr<std::vector<ProtectedBind>> protected_binds =
      ProtectedBindsForSpawn(policy->project_real, container.protect, plan.mounts);
  if (!protected_binds.ok()) return protected_binds.status();
  spawn.protected_binds = plan.protected_binds = *std::move(protected_binds);

  absl::StatusOr<std::string> workdir = MapWorkingDirectory(container, spawn);
  if (!workdir.ok()) return workdir.status();
  plan.workdir = *std::move(workdir);

  if (container.runtime == Runtime::kBwrap) plan.root_layout = ReadHostRootLayout();
  absl::StatusOr<std::vector<std::string>> argv =
      container.runtime == Runtime::kBwrap
          ? BuildBwrapArgv(container, plan.mounts, spawn, plan.root_layout)
          : BuildContainerArgv(container, plan.mounts, spawn);
  if (!argv.ok()) return argv.status();
  plan.argv = *std::move(argv);
  plan.wrapped = true;
  if (container.runtime != Runtime::kBwrap) plan.image = container.image;
  return plan;
}

nlohmann::json PlanToJson(const SpawnPlan& plan, const std::string& runtime_bin) {
  nlohmann::json out;
  out["tier"] = TierName(plan.resolved.tier);
  out["effective_from"] = TierSourceName(plan.resolved.from);
  out["wrapped"] = plan.wrapped;
  if (plan.wrapped) {
    out["runtime"] = RuntimeName(plan.runtime);
    out["bin"] = runtime_bin;
    out["args"] = std::vector<std::string>(plan.argv.begin() + 1, plan.argv.end());
    out["workdir"] = plan.workdir;
    out["project_mount"] = plan.project_mount;
    out["env"] = plan.env_names;
    return out;
  }
  out["bin"] = plan.argv.front();
  out["args"] = std::vector<std::string>(plan.argv.begin() + 1, plan.argv.end());
  out["note"] = absl::StrCat(
      "tier ", TierName(plan.resolved.tier),
      " does not wrap: the program runs in place with the host's own rights (your whole "
      "account)",
      plan.resolved.tier == Tier::kWorktree
          ? "; version isolation comes from the worktree it runs in"
          : "");
  return out;
}

}  // namespace np
