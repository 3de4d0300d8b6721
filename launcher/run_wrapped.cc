#include "launcher/run_wrapped.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include "core/errors.h"
#include "launcher/audit_log.h"
#include "launcher/egress/refusal_notice.h"
#include "launcher/environment.h"
#include "launcher/output.h"
#include "launcher/runtime/engine_locality.h"
#include "launcher/state/account_view.h"
#include "launcher/state/agent_home.h"
#include "launcher/warm/run_warm.h"
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
absl::Status MaybeWatchdog(const WrappedSpawn& spawn, SpawnLease& lease, const HostFacts& host,
                           const nlohmann::json& run_record, bool has_placeholders) {
  const SpawnPlan& plan = spawn.plan;
  if (plan.container_name.empty() && !has_placeholders) return absl::OkStatus();
  const ProtectedPlaceholders& placeholders = *lease.placeholders;
  WatchdogSpec watch;
  // The binary this process runs, by /proc's link: no path read, and the
  // same binary even if the package replaced it since this spawn started.
  watch.self_path = "/proc/self/exe";
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
  watch.sandbox_fd = lease.sandbox_pipe.read_end();
  absl::StatusOr<Watchdog> started = Watchdog::Start(watch);
  if (!started.ok()) return started.status();
  lease.watchdog.emplace(*std::move(started));
  return absl::OkStatus();
}

}  // namespace

// What the plan names and trust allowed, made now: the persistent home
// (created and seeded only now that trust allowed the config asking for it),
// the caller's account view; then the ratchet remembers the tier before the
// program starts, so even a run whose np-exec is killed counts.
absl::Status TakeSpawnFiles(const WrappedSpawn& spawn, SpawnLease& lease, const HostFacts& host,
                            std::optional<AccountFiles>* deferred) {
  absl::StatusOr<std::optional<AgentHomeLease>> home =
      AcquireHomeForSpawn(spawn.settings, GetEnv(host.envp, "XDG_STATE_HOME"), host.home, host.uid);
  if (!home.ok()) return home.status();
  if (home->has_value()) lease.home.emplace(std::move(**home));
  absl::StatusOr<std::optional<AccountFiles>> files =
      MaybeAccountFiles(spawn.settings, spawn.plan, host, spawn.driver, spawn.endpoint,
                        spawn.account_dir, spawn.image_id, spawn.gitconfig);
  if (!files.ok()) return files.status();
  if (deferred != nullptr) {
    *deferred = *std::move(files);
  } else if (files->has_value() && TraitsOf(spawn.plan.runtime).binds_by_descriptor) {
    // A runtime that takes its sources by descriptor (bubblewrap) copies the
    // files in from descriptors too: nothing is written to the store.
    absl::StatusOr<std::unique_ptr<BwrapAccountData>> data =
        BwrapAccountData::Create(**files, spawn.account_dir);
    if (!data.ok()) return data.status();
    lease.account_data = *std::move(data);
  } else if (files->has_value()) {
    absl::StatusOr<std::unique_ptr<AccountView>> account =
        WriteAccountView(host, **files, spawn.account_dir);
    if (!account.ok()) return account.status();
    lease.account = *std::move(account);
  }
  return RecordSpawnRan(spawn.trust, host.uid);
}

absl::StatusOr<SpawnPlan> WatchSandbox(const WrappedSpawn& spawn, SpawnLease& lease,
                                       const HostFacts& host, const nlohmann::json& run_record) {
  const SpawnPlan& plan = spawn.plan;
  const bool has_placeholders =
      std::any_of(plan.protected_binds.begin(), plan.protected_binds.end(),
                  [](const ProtectedBind& bind) { return bind.placeholder && !bind.writable; });
  SpawnPlan run_plan = plan;
  if (plan.container_name.empty() && has_placeholders) {
    absl::Status piped = lease.sandbox_pipe.Open();
    if (!piped.ok()) return piped;
    run_plan.sandbox_sync_fd = lease.sandbox_pipe.write_end();
  }
  absl::Status watched = MaybeWatchdog(spawn, lease, host, run_record, has_placeholders);
  if (!watched.ok()) return watched;
  return run_plan;
}

absl::StatusOr<Outcome> RunWrapped(const WrappedSpawn& spawn, SpawnLease& lease,
                                   const HostFacts& host, const Reporter& reporter,
                                   const SpawnLog& log) {
  const SpawnPlan& plan = spawn.plan;
  if (!lease.placeholders.has_value()) {
    return log.Refuse(
        spawn.tier_record,
        MakeError(absl::StatusCode::kInternal, "spawn-failed",
                  "the plan made no placeholders for its protected paths; nothing ran"));
  }
  if (plan.warm.warm) return RunWarm(spawn, lease, host, log);
  absl::Status taken = TakeSpawnFiles(spawn, lease, host);
  if (!taken.ok()) return log.Refuse(spawn.tier_record, taken);
  nlohmann::json run_record = RunRecord(host, spawn.settings, plan, spawn.program);
  absl::StatusOr<SpawnPlan> run_plan = WatchSandbox(spawn, lease, host, run_record);
  if (!run_plan.ok()) return log.Refuse(spawn.tier_record, run_plan.status());
  if (lease.account_data != nullptr) run_plan->data_files = lease.account_data->files();
  log.Append(run_record);
  const auto started = std::chrono::steady_clock::now();
  egress::EgressSession* session = lease.session.get();
  absl::StatusOr<RunOutcome> ran = spawn.driver.Run(
      *run_plan, spawn.endpoint, host, EgressCompanions(session, spawn.settings, host, log));
  if (lease.watchdog.has_value()) lease.watchdog->Disarm();
  lease.sandbox_pipe.Close();
  lease.placeholders->Finish();
  if (session != nullptr && !session->start_error().ok()) {
    return log.EndRun(std::move(run_record), session->start_error(), started);
  }
  if (!ran.ok()) return log.EndRun(std::move(run_record), ran.status(), started);
  if (!ran->note.ok()) reporter.Warn(ran->note);
  log.Append(ExitRecord(std::move(run_record), ran->result.exit_code, ran->result.duration_ms));
  return Outcome{ran->result.exit_code};
}

}  // namespace np
