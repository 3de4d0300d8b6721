#include "launcher/run_wrapped.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include "core/errors.h"
#include "launcher/account_view.h"
#include "launcher/agent_home.h"
#include "launcher/audit_log.h"
#include "launcher/egress/refusal_notice.h"
#include "launcher/environment.h"
#include "launcher/output.h"
#include "launcher/runtime/engine_locality.h"
#include "launcher/watchdog.h"

namespace np {
namespace {

// The egress proxy as a companion of the runtime: every connection attempt
// is one audit line (event "egress", with np-exec's pid to tie it to the run).
std::vector<Companion> EgressCompanions(egress::EgressSession* session, const Settings& settings,
                                        const HostFacts& host, const SpawnLog& log) {
  if (session == nullptr) return {};
  const pid_t pid = host.pid;
  // A refusal is also one line on stderr, while the program runs
  // (launcher/egress/refusal_notice.h); the calls come one at a time.
  auto notices = std::make_shared<egress::RefusalNotices>(settings.config.container.allow_hosts);
  return {session->ProxyCompanion(settings.config.container.allow_hosts,
                                  [&log, pid, notices](const egress::EgressRecord& record) {
                                    nlohmann::json line = egress::EgressRecordToJson(record);
                                    line["event"] = "egress";
                                    line["pid"] = pid;
                                    log.Append(std::move(line));
                                    std::optional<std::string> notice = notices->Notice(record);
                                    if (notice.has_value()) WriteAll(2, *notice);
                                  })};
}

// A named container outlives a SIGKILLed np-exec: a watchdog removes it then
// and writes the exit line (watchdog.h); it also removes the placeholders
// once the sandbox is gone. bubblewrap's sandbox dies with np-exec
// (--die-with-parent), so there it is needed only for placeholders, and
// learns the sandbox's end from bubblewrap's init (--sync-fd).
absl::StatusOr<std::optional<Watchdog>> MaybeWatchdog(const WrappedSpawn& spawn,
                                                      const ProtectedPlaceholders& placeholders,
                                                      const HostFacts& host,
                                                      const nlohmann::json& run_record,
                                                      bool has_placeholders, int sandbox_fd) {
  const SpawnPlan& plan = spawn.plan;
  if (plan.container_name.empty() && !has_placeholders) return std::optional<Watchdog>();
  WatchdogSpec watch;
  watch.self_path = host.self_path;
  watch.env = ClientEnvironment(spawn.endpoint, host.envp);
  watch.runtime = plan.runtime;
  watch.runtime_bin = plan.exec_path;
  watch.socket = spawn.endpoint.socket;
  watch.container_name = plan.container_name;
  for (const EnvSecret& secret : plan.env_secrets) watch.secrets.push_back(secret.secret);
  watch.project_root = spawn.settings.project_root;
  watch.run_record = run_record;
  watch.lock_fd = placeholders.lock_fd();
  // The folder the placeholders were made in, the opened project's.
  watch.project_fd =
      placeholders.project_fd() >= 0 ? placeholders.project_fd() : spawn.settings.project.fd();
  watch.project_real = plan.project_real;
  watch.binds = plan.protected_binds;
  watch.sandbox_fd = sandbox_fd;
  absl::StatusOr<Watchdog> started = Watchdog::Start(watch);
  if (!started.ok()) return started.status();
  return std::optional<Watchdog>(*std::move(started));
}

}  // namespace

absl::StatusOr<Outcome> RunWrapped(const WrappedSpawn& spawn,
                                   std::optional<ProtectedPlaceholders>& placeholders,
                                   const HostFacts& host, const Reporter& reporter,
                                   const SpawnLog& log) {
  const SpawnPlan& plan = spawn.plan;
  // The plan made the placeholders of missing protected paths for exactly
  // this spawn and bound them like every other source; they are held until
  // it ends (the last spawn of the project removes them).
  if (!placeholders.has_value()) {
    return log.Refuse(
        spawn.tier_record,
        MakeError(absl::StatusCode::kInternal, "spawn-failed",
                  "the plan made no placeholders for its protected paths; nothing ran"));
  }
  SpawnPlan run_plan = plan;
  // A persistent home is created (and seeded) only now that trust allowed
  // the config asking for it, and held until the spawn ends.
  absl::StatusOr<std::optional<AgentHomeLease>> home =
      AcquireHomeForSpawn(spawn.settings, GetEnv(host.envp, "XDG_STATE_HOME"), host.home, host.uid);
  if (!home.ok()) return log.Refuse(spawn.tier_record, home.status());
  // Removed with the view when the spawn ends.
  absl::StatusOr<std::unique_ptr<AccountView>> account =
      MaybeAccountView(spawn.settings, plan, host, spawn.driver, spawn.endpoint, spawn.account_dir,
                       spawn.image_id, spawn.gitconfig);
  if (!account.ok()) return log.Refuse(spawn.tier_record, account.status());
  // The ratchet remembers the tier before the program starts, so even a run
  // whose np-exec is killed counts.
  absl::Status recorded = RecordSpawnRan(spawn.trust, host.uid);
  if (!recorded.ok()) return log.Refuse(spawn.tier_record, recorded);
  nlohmann::json run_record = RunRecord(host, spawn.settings, plan, spawn.program);
  const bool has_placeholders =
      std::any_of(plan.protected_binds.begin(), plan.protected_binds.end(),
                  [](const ProtectedBind& bind) { return bind.placeholder && !bind.writable; });
  SandboxPipe sandbox_pipe;
  if (plan.container_name.empty() && has_placeholders) {
    absl::Status piped = sandbox_pipe.Open();
    if (!piped.ok()) return log.Refuse(spawn.tier_record, piped);
    run_plan.sandbox_sync_fd = sandbox_pipe.write_end();
  }
  absl::StatusOr<std::optional<Watchdog>> watchdog = MaybeWatchdog(
      spawn, *placeholders, host, run_record, has_placeholders, sandbox_pipe.read_end());
  if (!watchdog.ok()) return log.Refuse(spawn.tier_record, watchdog.status());
  log.Append(run_record);
  const auto started = std::chrono::steady_clock::now();
  absl::StatusOr<RunOutcome> ran = spawn.driver.Run(
      run_plan, spawn.endpoint, host, EgressCompanions(spawn.session, spawn.settings, host, log));
  if (watchdog->has_value()) (*watchdog)->Disarm();
  sandbox_pipe.Close();
  placeholders->Finish();
  if (spawn.session != nullptr && !spawn.session->start_error().ok()) {
    return log.EndRun(std::move(run_record), spawn.session->start_error(), started);
  }
  if (!ran.ok()) return log.EndRun(std::move(run_record), ran.status(), started);
  if (!ran->note.ok()) reporter.Warn(ran->note);
  log.Append(ExitRecord(std::move(run_record), ran->result.exit_code, ran->result.duration_ms));
  return Outcome{ran->result.exit_code};
}

}  // namespace np
