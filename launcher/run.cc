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
#include "launcher/audit_log.h"
#include "launcher/egress/session.h"
#include "launcher/environment.h"
#include "launcher/exec.h"
#include "launcher/output.h"
#include "launcher/protected_placeholders.h"
#include "launcher/run_wrapped.h"
#include "launcher/runtime/driver.h"
#include "launcher/source_pins.h"
#include "launcher/spawn_facts.h"
#include "launcher/spawn_lease.h"
#include "launcher/spawn_log.h"
#include "launcher/state/account_view.h"
#include "launcher/state/agent_home.h"
#include "launcher/trust_gate.h"
#include "launcher/warm/registry.h"
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
  absl::StatusOr<std::unique_ptr<egress::EgressSession>> session =
      egress::EgressSession::Create(host.xdg_runtime_dir, writable);
  if (!session.ok()) return session;
  // The credentials' keys, read here once and kept in the proxy alone.
  absl::Status served = (*session)->ServeCredentials(
      settings.config.container.credentials,
      [&host](const std::string& name) { return std::string(GetEnv(host.envp, name)); },
      egress::SystemRootsPem());
  if (!served.ok()) return served;
  return session;
}

// One spawn on the run path: what it read, what it decided and what it holds
// until it ends (the spawn lock, the pins, the placeholders, the egress
// session), filled in by the steps below in their order. Not moved once
// made: the plan's callbacks point into it.
struct RunSpawn {
  RunSpawn(const CommandLine& c, const HostFacts& h, const Reporter& r)
      : cl(c), host(h), reporter(r) {}
  RunSpawn(const RunSpawn&) = delete;
  RunSpawn& operator=(const RunSpawn&) = delete;

  // Records the refusal in the project's log (SpawnLog::Refuse) and hands it back.
  absl::Status Refuse(absl::Status error) const { return log->Refuse(tier_record, error); }

  const CommandLine& cl;
  const HostFacts& host;
  const Reporter& reporter;
  Settings settings;
  std::optional<SpawnLog> log;
  nlohmann::json tier_record;
  bool container = false;
  const RuntimeDriver* driver = nullptr;
  SpawnFacts facts;
  Endpoint endpoint;
  ProbeResult probe;
  // The engine's word on the image: its ID is the account view's cache key
  // (account_view.h) and part of a warm sandbox's key.
  SpawnImage image;
  std::string account_dir;
  std::string gitconfig;
  SpawnLease lease;  // The lock, the pins, the placeholders, the egress session.
  std::optional<SpawnPlan> plan;
  std::optional<TrustGate> trust;
};

// The settings and the effective tier; a refusal before they exist is
// logged where the working directory is (RefuseUnsettled).
absl::Status LoadRunSettings(RunSpawn& run) {
  const HostFacts& host = run.host;
  absl::Status recursion = CheckRecursion(run.cl, host);
  if (!recursion.ok()) return RefuseUnsettled(recursion, host, run.reporter, run.cl.program);
  if (host.cwd.empty()) {
    return MakeError(absl::StatusCode::kFailedPrecondition, "invalid-path",
                     "cannot read the working directory");
  }
  absl::StatusOr<Settings> settings = LoadHostSettings(host);
  if (!settings.ok()) return RefuseUnsettled(settings.status(), host, run.reporter, run.cl.program);
  run.settings = *std::move(settings);
  // This spawn's image, for everything below: `images` by the program's name.
  ContainerConfig& container = run.settings.config.container;
  container.image = ImageFor(container, run.cl.program.front());
  run.log.emplace(run.reporter, host, run.settings.project, run.settings.state_dir_fd);
  run.tier_record = TierRecord(host, run.settings, run.cl.program);
  run.container = run.settings.resolved.tier == Tier::kContainer;
  run.driver = &DriverFor(container.runtime);
  return absl::OkStatus();
}

// The runtime (container only): the gate in core refuses without a probe.
absl::Status ProbeRuntime(RunSpawn& run) {
  const HostFacts& host = run.host;
  const CommandLine& cl = run.cl;
  run.facts = BaseFacts(host, host.cwd);
  run.facts.bare_word = !cl.shim_mode && !cl.script_mode && !cl.explicit_program &&
                        cl.program.front().find('/') == std::string::npos;
  if (!run.container) return absl::OkStatus();
  const ContainerConfig& container = run.settings.config.container;
  run.endpoint = ResolveEndpoint(*run.driver, host, container);
  run.probe = run.driver->ProbeForSpawn(host, run.endpoint, container.image, &run.image);
  // np-exec's own podman service, ended between its ping and the question
  // (podman_service.h): podman's client answers, as without one.
  if (run.endpoint.own_service && !run.probe.available) {
    run.endpoint.socket.reset();
    run.endpoint.own_service = false;
    run.probe = run.driver->ProbeForSpawn(host, run.endpoint, container.image, &run.image);
  }
  run.facts.image_volumes = run.image.volumes;
  AddContainerFacts(host, *run.driver, run.endpoint, run.probe, "np-exec", /*owned=*/true,
                    !container.mounts.empty(), run.facts);
  AddImageUserFacts(run.settings, host, *run.driver, run.endpoint, run.facts);
  return absl::OkStatus();
}

// On an accepted engine on another host: the check file its entry point
// verifies (remote_check.h), instead of np-exec's own files.
absl::Status MakeRemoteCheck(RunSpawn& run) {
  if (!run.endpoint.remote_allowed) return absl::OkStatus();  // Planning refuses it.
  // Over ssh only through np-exec's own connection (the trusted ssh): a
  // client left to dial ssh itself would run the first `ssh` on the caller's
  // PATH (docker) or accept a host key it never saw (podman). Unless the
  // caller said so (NP_EXEC_ENGINE_TUNNEL=0), no connection is a refusal.
  if (run.endpoint.reach == EngineReach::kSsh && !run.endpoint.socket.has_value() &&
      GetEnv(run.host.envp, "NP_EXEC_ENGINE_TUNNEL") != "0") {
    return run.Refuse(MakeError(
        absl::StatusCode::kFailedPrecondition, "isolation-engine-remote-unsupported",
        absl::StrCat("np-exec could not open its ssh connection to the engine ",
                     run.endpoint.remote,
                     " (the trusted ssh, non-interactive: a known host key and a key that needs "
                     "no passphrase); nothing ran"),
        {{"reason", "no-connection"}, {"engine", run.endpoint.remote}}));
  }
  const ProjectLocation& project = run.settings.project;
  absl::StatusOr<RemoteNonce> nonce =
      RemoteNonce::Create(project.found() ? project.fd() : -1, run.settings.project_root);
  if (!nonce.ok()) return run.Refuse(nonce.status());
  run.lease.remote_nonce.emplace(*std::move(nonce));
  run.facts.remote_check = run.lease.remote_nonce->check();
  return absl::OkStatus();
}

// np-exec's own files the plan names: the egress session (it outlives the run
// and removes its directory however it ends), the caller's account and git
// identity (made once trust allowed the spawn), the persistent home.
absl::Status NameSpawnFiles(RunSpawn& run) {
  const HostFacts& host = run.host;
  absl::StatusOr<std::unique_ptr<egress::EgressSession>> session =
      MaybeEgressSession(run.settings, host);
  if (!session.ok()) return run.Refuse(session.status());
  run.lease.session = *std::move(session);
  if (run.lease.session != nullptr) {
    run.facts.egress_socket = run.lease.session->socket_path();
    run.facts.credential_ca = run.lease.session->ca_path();
    run.facts.credential_bundle = run.lease.session->bundle_path();
  }
  // The engine's host does not see this host's state store: no account view
  // there; the project proves itself by a check file instead.
  if (!run.endpoint.remote.empty()) return MakeRemoteCheck(run);
  run.account_dir = PlannedAccountViewDir(run.settings, host);
  if (!run.account_dir.empty()) {
    run.facts.passwd_file = AccountPasswdPath(run.account_dir);
    run.facts.group_file = AccountGroupPath(run.account_dir);
    run.gitconfig = CallerGitConfig(host);
  }
  if (!run.gitconfig.empty()) run.facts.gitconfig_file = AccountGitConfigPath(run.account_dir);
  run.facts.agent_home =
      PlannedAgentHome(run.settings, GetEnv(host.envp, "XDG_STATE_HOME"), host.home);
  // A spawn that may run warm: the private directory its keeper would reach
  // its holder through (launcher/warm/registry.h).
  const ContainerConfig& container = run.settings.config.container;
  if (run.container && container.warm_idle_seconds.has_value() &&
      WarmColdReason(/*local_engine=*/true, container.network == Network::kAllowlist,
                     container.persistent_home, /*has_rendezvous=*/true)
          .empty()) {
    absl::StatusOr<StateStore> store = OpenStateStore(host);
    absl::StatusOr<std::string> dir =
        store.ok() ? warm::NameRendezvousDir(*store) : absl::StatusOr<std::string>(store.status());
    if (!dir.ok()) return run.Refuse(dir.status());
    run.lease.rendezvous.emplace(*dir);
    run.facts.warm_dir = *dir;
  }
  return absl::OkStatus();
}

// The project's spawn lock before anything is pinned: a finishing spawn
// removes placeholders only while no other spawn holds it, so every node this
// plan sees (and pins) stays until this spawn's runtime has bound it. A lock
// that cannot be had refuses the spawn where the plan makes the placeholders,
// after the config's and the mounts' own errors. Every bind source is opened
// once after the plan's checks and held until the runtime is done with it.
absl::Status HoldProject(RunSpawn& run) {
  const Settings& settings = run.settings;
  run.lease.pins.emplace(
      /*keep_descriptors=*/TraitsOf(settings.config.container.runtime).binds_by_descriptor);
  if (!run.container) return absl::OkStatus();
  run.lease.spawn_lock.emplace(SpawnLock::Acquire(
      GetEnv(run.host.envp, "XDG_STATE_HOME"), run.host.home, run.host.uid,
      settings.project.found() ? settings.project_root : run.host.cwd, settings.git.get()));
  absl::Status adopted = AdoptProjectSnapshot(settings, *run.lease.pins);
  if (!adopted.ok()) return run.Refuse(adopted);
  run.facts.pin = run.lease.pins->AsFunction();
  // Made through the opened project folder, and only when the plan's
  // resolution of the project's path found that folder: never in a folder a
  // link swapped in meanwhile points to.
  run.facts.make_placeholders = [&run](const std::string& project_real,
                                       const std::vector<ProtectedBind>& binds) -> absl::Status {
    const ProjectLocation& project = run.settings.project;
    if (!run.lease.spawn_lock->ok()) return run.lease.spawn_lock->status();
    if (project.found() && project_real != project.root) {
      return ProjectMovedError(project.root, project_real);
    }
    absl::StatusOr<ProtectedPlaceholders> made = ProtectedPlaceholders::Create(
        *std::move(*run.lease.spawn_lock), project_real, binds, project.fd());
    if (!made.ok()) return made.status();
    run.lease.placeholders.emplace(*std::move(made));
    return absl::OkStatus();
  };
  return absl::OkStatus();
}

// Exactly one of exec-in-place or a runtime argv.
absl::Status PlanRun(RunSpawn& run) {
  absl::StatusOr<SpawnPlan> plan = PlanSpawn(run.settings, run.container ? &run.probe : nullptr,
                                             run.facts, run.cl.program, run.cl.env_names);
  if (!plan.ok()) {
    if (run.facts.bare_word && HasErrorCode(plan.status(), "program-not-found")) {
      return UnknownVerb(run.cl.program.front());
    }
    return run.Refuse(plan.status());
  }
  run.plan.emplace(*std::move(plan));
  return absl::OkStatus();
}

// Trust and the ratchet, on every tier: a project that once ran on a
// stronger tier cannot silently ask for less, and a project file that widens
// the container tier needs the operator's `np-exec trust`. After the plan, so
// a config's own errors are named first. Then the folder that was judged
// must still be the project: renamed or swapped for a link since it was
// opened is refused, and so is a plan whose resolution of the project's path
// found another folder (a link swapped in for that moment).
absl::Status JudgeRun(RunSpawn& run) {
  const Settings& settings = run.settings;
  absl::StatusOr<TrustGate> trust =
      EvaluateTrust(settings, GetEnv(run.host.envp, "XDG_STATE_HOME"), run.host.home, run.host.uid);
  if (!trust.ok()) return run.Refuse(trust.status());
  if (!trust->decision.status.ok()) return run.Refuse(trust->decision.status);
  run.trust.emplace(*std::move(trust));
  absl::Status still_there = CheckProjectStillAt(settings.project);
  if (!still_there.ok()) return run.Refuse(still_there);
  if (run.plan->wrapped && settings.project.found() &&
      run.plan->project_real != settings.project.root) {
    return run.Refuse(ProjectMovedError(settings.project.root, run.plan->project_real));
  }
  return absl::OkStatus();
}

// The one plan, carried out: through the driver's Run, or exec'd in place.
absl::StatusOr<Outcome> CarryOut(RunSpawn& run) {
  const HostFacts& host = run.host;
  const SpawnPlan& plan = *run.plan;
  if (plan.wrapped) {
    // A variable the program reads, set here and not forwarded, is named
    // (core/env_notice.h).
    // A credential's variable reaches the program as its placeholder.
    std::vector<std::string> reaching = plan.env_names;
    if (!plan.egress_socket.empty()) {
      for (const Credential& credential : run.settings.config.container.credentials) {
        reaching.push_back(credential.env);
      }
    }
    const std::string notice = UnforwardedVariablesNotice(
        run.cl.program.front(), reaching,
        [&host](const std::string& name) { return !GetEnv(host.envp, name).empty(); });
    if (!notice.empty()) WriteAll(2, notice);
    const WrappedSpawn spawn{run.settings, plan,         run.cl.program,  *run.driver,
                             run.endpoint, *run.trust,   run.tier_record, run.account_dir,
                             run.image.id, run.gitconfig};
    return RunWrapped(spawn, run.lease, host, run.reporter, *run.log);
  }
  absl::Status recorded = RecordSpawnRan(*run.trust, host.uid);
  if (!recorded.ok()) return run.Refuse(recorded);
  run.log->Append(RunRecord(host, run.settings, plan, run.cl.program));
  // Returns only when the exec failed.
  absl::Status failed =
      ExecInPlace(plan.exec_path, plan.argv, BuildEnvironment(plan.env, host.envp));
  return failed.ok() ? absl::InternalError("exec returned") : failed;
}

using RunStep = absl::Status (*)(RunSpawn&);
constexpr RunStep kRunSteps[] = {LoadRunSettings, ProbeRuntime, NameSpawnFiles,
                                 HoldProject,     PlanRun,      JudgeRun};

}  // namespace

absl::StatusOr<Outcome> RunProgram(const CommandLine& cl, const HostFacts& host,
                                   const Reporter& reporter) {
  RunSpawn run(cl, host, reporter);
  for (RunStep step : kRunSteps) {
    absl::Status done = step(run);
    if (!done.ok()) return done;
  }
  return CarryOut(run);
}

}  // namespace np
