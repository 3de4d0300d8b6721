#include "launcher/run.h"

#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/config_file.h"
#include "core/env_notice.h"
#include "core/errors.h"
#include "core/plan.h"
#include "core/project_location.h"
#include "launcher/account_view.h"
#include "launcher/agent_home.h"
#include "launcher/audit_log.h"
#include "launcher/egress/session.h"
#include "launcher/environment.h"
#include "launcher/exec.h"
#include "launcher/output.h"
#include "launcher/protected_placeholders.h"
#include "launcher/run_wrapped.h"
#include "launcher/runtime/driver.h"
#include "launcher/runtime/reaper.h"
#include "launcher/source_pins.h"
#include "launcher/spawn_facts.h"
#include "launcher/spawn_log.h"
#include "launcher/trust_gate.h"
#include "shim/find_real_program.h"

namespace np {
namespace {

absl::Status Recursion(absl::string_view why) {
  return MakeError(absl::StatusCode::kFailedPrecondition, "recursive-invocation",
                   absl::StrCat("recursive invocation of np-exec refused: ", why));
}

// A refusal before the settings exist (a broken config or operator file, a
// recursion): logged in the project the working directory is in, if any.
absl::Status RefuseUnsettled(absl::Status error, const HostFacts& host, const Reporter& reporter,
                             const std::vector<std::string>& program) {
  ProjectLocation project;
  if (host.project_located && host.project.ok()) {
    project = *host.project;
  } else if (!host.project_located && !host.cwd.empty()) {
    absl::StatusOr<ProjectLocation> found = LocateProjectFrom(host.cwd);
    if (found.ok()) project = *std::move(found);
  }
  // A project that could not be located at all (changed while it was
  // walked): the refusal goes to the operator's store, never nowhere.
  if (host.project_located && !host.project.ok()) {
    absl::StatusOr<StateStore> store = OpenStateStore(host);
    if (store.ok()) {
      (void)AppendOperatorAudit(store->dir(), host.cwd,
                                RefusalRecord(SpawnRecord(host, program), error));
    }
    return error;
  }
  SpawnLog log(reporter, host, std::move(project));
  return log.Refuse(SpawnRecord(host, program), std::move(error));
}

// Step 1: np-exec exec'd straight into np-exec (same pid), or a chain of
// wrappers that keeps re-entering. Only when the very file np-exec exec'd in
// place is this binary: a shebang or `exec` chain in between (env, sh) is a
// legitimate spawn.
absl::Status CheckRecursion(const CommandLine& cl, const HostFacts& host) {
  if (host.exec_pid == host.pid && !host.exec_target.empty() &&
      StatFile(host.exec_target).id == host.self) {
    return Recursion(
        absl::StrCat("\"", cl.program.front(), "\" resolved to another copy of np-exec"));
  }
  if (host.depth >= kMaxDepth) {
    return Recursion(absl::StrCat(kDepthVar, " is ", host.depth, "; the limit is ", kMaxDepth,
                                  " nested invocations"));
  }
  return absl::OkStatus();
}

// `np-exec WORD` (no --, not a path) that names no program is most likely a
// mistyped verb.
absl::Status UnknownVerb(const std::string& word) {
  return MakeError(absl::StatusCode::kInvalidArgument, "isolation-unknown-verb",
                   absl::StrCat("\"", word, "\" is neither a verb nor a program on PATH. Verbs: ",
                                absl::StrJoin(VerbNames(), ", "),
                                ". To run a program that exists only inside the container, "
                                "write np-exec -- PROGRAM"),
                   {{"verb", word}, {"verbs", VerbNames()}});
}

// Step 3b, network "allowlist": this spawn's private socket directory, made
// before the plan names the socket; nullptr on any other network.
absl::StatusOr<std::unique_ptr<egress::EgressSession>> MaybeEgressSession(const Settings& settings,
                                                                          const HostFacts& host) {
  if (settings.resolved.tier != Tier::kContainer ||
      settings.config.container.network != Network::kAllowlist) {
    return std::unique_ptr<egress::EgressSession>();
  }
  // Everything the sandboxed program can write: the directory must not be
  // there (an unresolvable root also sends it to /tmp).
  std::vector<std::string> writable = {settings.project_root};
  for (const MountSpec& mount : settings.config.container.mounts) {
    if (mount.writable) writable.push_back(mount.source);
  }
  return egress::EgressSession::Create(host.xdg_runtime_dir, writable);
}

}  // namespace

absl::StatusOr<Outcome> RunProgram(const CommandLine& cl, const HostFacts& host,
                                   const Reporter& reporter) {
  // 1. Recursion.
  absl::Status recursion = CheckRecursion(cl, host);
  if (!recursion.ok()) return RefuseUnsettled(recursion, host, reporter, cl.program);
  if (host.cwd.empty()) {
    return MakeError(absl::StatusCode::kFailedPrecondition, "invalid-path",
                     "cannot read the working directory");
  }

  // 2. Settings and the effective tier.
  absl::StatusOr<Settings> settings = LoadHostSettings(host);
  if (!settings.ok()) return RefuseUnsettled(settings.status(), host, reporter, cl.program);
  // This spawn's image, for everything below: `images` by the program's name.
  settings->config.container.image = ImageFor(settings->config.container, cl.program.front());
  const SpawnLog log(reporter, host, settings->project);
  const nlohmann::json tier_record = TierRecord(host, *settings, cl.program);
  const bool container = settings->resolved.tier == Tier::kContainer;

  // 3. Runtime (container only): the gate in core refuses without a probe.
  const Runtime runtime = settings->config.container.runtime;
  const RuntimeDriver& driver = DriverFor(runtime);
  SpawnFacts facts = BaseFacts(host, host.cwd);
  facts.bare_word = !cl.shim_mode && !cl.script_mode && !cl.explicit_program &&
                    cl.program.front().find('/') == std::string::npos;
  Endpoint endpoint;
  ProbeResult probe;
  std::string image_id;  // The account view's cache key (account_view.h).
  if (container) {
    endpoint = driver.Resolve(host);
    probe = driver.ProbeForSpawn(host, endpoint, settings->config.container.image, &image_id);
    AddContainerFacts(host, driver, endpoint, probe, "np-exec",
                      OwnerLabelValue(host.pid, ProcessStartTime(host.pid)),
                      !settings->config.container.mounts.empty(), facts);
    AddImageUserFacts(*settings, host, driver, endpoint, facts);
  }

  // The session outlives the run and removes its directory however it ends.
  absl::StatusOr<std::unique_ptr<egress::EgressSession>> session =
      MaybeEgressSession(*settings, host);
  if (!session.ok()) return log.Refuse(tier_record, session.status());
  if (*session != nullptr) facts.egress_socket = (*session)->socket_path();
  // The caller's account inside: named now, made once trust allowed the spawn.
  const std::string account_dir = PlannedAccountViewDir(*settings, host);
  if (!account_dir.empty()) {
    facts.passwd_file = AccountPasswdPath(account_dir);
    facts.group_file = AccountGroupPath(account_dir);
  }
  // The caller's git identity, beside the account (core/git_identity.h).
  const std::string gitconfig = account_dir.empty() ? "" : CallerGitConfig(host);
  if (!gitconfig.empty()) facts.gitconfig_file = AccountGitConfigPath(account_dir);
  facts.agent_home = PlannedAgentHome(*settings, GetEnv(host.envp, "XDG_STATE_HOME"), host.home);
  // The project's spawn lock before anything is pinned: a finishing spawn
  // removes placeholders only while no other spawn holds it, so every node
  // this plan sees (and pins) stays until this spawn's runtime has bound it.
  // A lock that cannot be had refuses the spawn where the plan makes the
  // placeholders, after the config's and the mounts' own errors.
  absl::StatusOr<SpawnLock> spawn_lock =
      container ? SpawnLock::Acquire(GetEnv(host.envp, "XDG_STATE_HOME"), host.home, host.uid,
                                     settings->project.found() ? settings->project_root : host.cwd,
                                     settings->git.get())
                : absl::StatusOr<SpawnLock>(
                      absl::FailedPreconditionError("a wrapped plan outside the container tier"));
  // Every bind source opened once after the plan's checks and held until the
  // runtime is done with it: bubblewrap binds the descriptors.
  SourcePins pins(/*keep_descriptors=*/TraitsOf(runtime).binds_by_descriptor);
  // The placeholders the plan makes, under the lock, held until the spawn ends.
  std::optional<ProtectedPlaceholders> placeholders;
  if (container) {
    absl::Status adopted = AdoptProjectSnapshot(*settings, pins);
    if (!adopted.ok()) return log.Refuse(tier_record, adopted);
    facts.pin = pins.AsFunction();
    // Made through the opened project folder, and only when the plan's
    // resolution of the project's path found that folder: never in a folder
    // a link swapped in meanwhile points to.
    facts.make_placeholders = [&spawn_lock, &placeholders, &project = settings->project](
                                  const std::string& project_real,
                                  const std::vector<ProtectedBind>& binds) -> absl::Status {
      if (!spawn_lock.ok()) return spawn_lock.status();
      if (project.found() && project_real != project.root) {
        return ProjectMovedError(project.root, project_real);
      }
      absl::StatusOr<ProtectedPlaceholders> made =
          ProtectedPlaceholders::Create(*std::move(spawn_lock), project_real, binds, project.fd());
      if (!made.ok()) return made.status();
      placeholders.emplace(*std::move(made));
      return absl::OkStatus();
    };
  }

  // 4. Plan: exactly one of exec-in-place or a runtime argv.
  absl::StatusOr<SpawnPlan> plan =
      PlanSpawn(*settings, container ? &probe : nullptr, facts, cl.program, cl.env_names);
  if (!plan.ok()) {
    if (facts.bare_word && HasErrorCode(plan.status(), "program-not-found")) {
      return UnknownVerb(cl.program.front());
    }
    return log.Refuse(tier_record, plan.status());
  }

  // 5. Trust and the ratchet, on every tier: a project that once ran on a
  //    stronger tier cannot silently ask for less, and a project file that
  //    widens the container tier needs the operator's `np-exec trust`.
  //    After the plan, so a config's own errors are named first.
  absl::StatusOr<TrustGate> trust =
      EvaluateTrust(*settings, GetEnv(host.envp, "XDG_STATE_HOME"), host.home, host.uid);
  if (!trust.ok()) return log.Refuse(tier_record, trust.status());
  if (!trust->decision.status.ok()) return log.Refuse(tier_record, trust->decision.status);

  // 6. Record and carry it out, on the folder that was judged: a project
  //    renamed or swapped for a link since it was opened is refused.
  absl::Status still_there = CheckProjectStillAt(settings->project);
  if (!still_there.ok()) return log.Refuse(tier_record, still_there);
  // The plan resolved the project's path once more for its mounts: it must
  // have found the folder that was opened, or the sandbox would get another
  // (a link swapped in for that moment, to a folder above the project).
  if (plan->wrapped && settings->project.found() && plan->project_real != settings->project.root) {
    return log.Refuse(tier_record, ProjectMovedError(settings->project.root, plan->project_real));
  }
  if (plan->wrapped) {
    // A variable the program reads, set here and not forwarded, is named
    // (core/env_notice.h).
    const std::string notice = UnforwardedVariablesNotice(
        cl.program.front(), plan->env_names,
        [&host](const std::string& name) { return !GetEnv(host.envp, name).empty(); });
    if (!notice.empty()) WriteAll(2, notice);
    const WrappedSpawn spawn{*settings,   *plan,          cl.program,  driver,   endpoint, *trust,
                             tier_record, session->get(), account_dir, image_id, gitconfig};
    return RunWrapped(spawn, placeholders, host, reporter, log);
  }
  absl::Status recorded = RecordSpawnRan(*trust, host.uid);
  if (!recorded.ok()) return log.Refuse(tier_record, recorded);
  log.Append(RunRecord(host, *settings, *plan, cl.program));
  // Returns only when the exec failed.
  absl::Status failed =
      ExecInPlace(plan->exec_path, plan->argv, BuildEnvironment(plan->env, host.envp));
  return failed.ok() ? absl::InternalError("exec returned") : failed;
}

}  // namespace np
