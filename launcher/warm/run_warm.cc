#include "launcher/warm/run_warm.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <chrono>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/config_json.h"
#include "core/errors.h"
#include "core/tier.h"
#include "core/trust.h"
#include "core/warm.h"
#include "launcher/audit_log.h"
#include "launcher/environment.h"
#include "launcher/runtime/podman_service.h"
#include "launcher/spawn_facts.h"
#include "launcher/state/account_view.h"
#include "launcher/state/nofollow_path.h"
#include "launcher/state/state_store.h"
#include "launcher/trust_gate.h"
#include "launcher/warm/client.h"
#include "launcher/warm/holder.h"
#include "launcher/warm/registry.h"

namespace np {
namespace {

// What a bound descriptor points at: device, inode and type, as its pin's
// open found them (`pins`), else as it is now.
std::string FdIdentity(const std::optional<SourcePins>& pins, int fd) {
  const std::optional<SourcePin> pin = pins.has_value() ? pins->HandedAs(fd) : std::nullopt;
  if (pin.has_value()) return absl::StrCat(pin->dev, ":", pin->ino, ":", pin->type);
  struct stat st;
  if (fstat(fd, &st) != 0) return absl::StrCat("unreadable-", fd);
  return absl::StrCat(st.st_dev, ":", st.st_ino, ":", st.st_mode & S_IFMT);
}

// The account view's files as the sandbox would get them (their paths
// differ per spawn).
std::string AccountContent(const std::optional<AccountFiles>& files) {
  if (!files.has_value()) return "";
  return absl::StrCat(files->passwd.size(), ":", files->passwd, "\n", files->group.size(), ":",
                      files->group, "\n", files->gitconfig.size(), ":", files->gitconfig);
}

// What the caller is confined by, which a sandbox started by another caller
// would not carry over: its namespaces, cgroup, seccomp and no_new_privs
// state, groups. A caller confined otherwise gets a sandbox of its own.
std::string CallerContext() {
  std::string out;
  for (const char* ns : {"cgroup", "ipc", "mnt", "net", "pid", "user", "uts"}) {
    char target[256];
    const std::string link = absl::StrCat("/proc/self/ns/", ns);
    const ssize_t n = readlink(link.c_str(), target, sizeof(target));
    absl::StrAppend(&out, ns, "=", n > 0 ? absl::string_view(target, static_cast<size_t>(n)) : "?",
                    "\n");
  }
  SmallFile status = ReadSmallFileAt(AT_FDCWD, "/proc/self/status", 64 << 10);
  for (absl::string_view line : absl::StrSplit(status.text, '\n')) {
    for (absl::string_view field : {"Groups:", "NoNewPrivs:", "Seccomp:", "CapBnd:"}) {
      if (absl::StartsWith(line, field)) absl::StrAppend(&out, line, "\n");
    }
  }
  absl::StrAppend(&out, ReadSmallFileAt(AT_FDCWD, "/proc/self/cgroup", 64 << 10).text);
  return out;
}

// What trust decided on: its state, the content it judged, and for trusted
// content the record's trusted content and tier, so a sandbox serves only
// spawns that trust allowed on the same grounds. (A record the ratchet
// writes for content that needs no trust does not count: it changes nothing
// the sandbox holds.)
std::string TrustKeyPart(const TrustGate& trust) {
  const std::optional<TrustRecord>& record = trust.inputs.record;
  std::string part = absl::StrCat(TrustStateName(trust.decision.state), " ", trust.inputs.sha256);
  if (trust.decision.state == TrustState::kTrusted && record.has_value()) {
    absl::StrAppend(&part, " ", record->trusted_sha256.value_or("-"), " ",
                    TierName(record->trusted_tier));
  }
  return part;
}

std::string PlanKey(const WrappedSpawn& spawn, const SpawnLease& lease, const HostFacts& host,
                    const std::optional<AccountFiles>& account) {
  const SpawnPlan& plan = spawn.plan;
  // Whether np-exec's own podman service answered the questions does not
  // change the engine that runs the sandbox.
  Endpoint engine = spawn.endpoint;
  if (engine.own_service) engine.socket.reset();
  const std::vector<std::string> parts = {
      plan.exec_path,
      ContainerConfigToJson(spawn.settings.config.container).dump(),
      spawn.settings.raw_config.dump(),
      TrustKeyPart(spawn.trust),
      spawn.image_id,
      absl::StrCat(host.self.dev, ":", host.self.ino),
      absl::StrJoin(plan.env.set, "\n"),
      absl::StrJoin(plan.warm.pass, ","),
      absl::StrCat(plan.warm.idle_seconds),
      AccountContent(account),
      EngineEndpointJson(engine).dump(),
      CallerContext()};
  const auto identity = [&lease](int fd) { return FdIdentity(lease.pins, fd); };
  return WarmKey(WarmKeyMaterial(plan.argv, identity, plan.account_dir,
                                 {plan.warm.rendezvous_dir, plan.container_name}, parts));
}

// An idle sandbox of the plan's key, or a new one this spawn starts
// (`started_one`: with this spawn's lease, which it then holds).
absl::StatusOr<warm::Slot> SandboxFor(const WrappedSpawn& spawn, SpawnLease& lease,
                                      const HostFacts& host, const nlohmann::json& run_record,
                                      const std::optional<AccountFiles>& account,
                                      bool* started_one) {
  absl::StatusOr<StateStore> store = OpenStateStore(host);
  if (!store.ok()) return store.status();
  absl::StatusOr<warm::OwnedFd> warm_dir = warm::OpenWarmDir(*store);
  if (!warm_dir.ok()) return warm_dir.status();
  const std::string key = PlanKey(spawn, lease, host, account);
  std::optional<warm::Slot> idle = warm::ClaimIdle(warm_dir->get(), key);
  if (idle.has_value()) return *std::move(idle);
  *started_one = true;
  const nlohmann::json info = {{"key", key},
                               {"project", spawn.settings.project_root},
                               {"runtime", RuntimeName(spawn.plan.runtime)},
                               {"program", spawn.program.front()},
                               {"started", static_cast<long long>(time(nullptr))},
                               {"idle_seconds", spawn.plan.warm.idle_seconds}};
  // What the new sandbox binds, made only now: the rendezvous directory and
  // the account view (the holder keeps it while the sandbox lives).
  absl::StatusOr<warm::OwnedFd> rendezvous_lock =
      warm::MakeRendezvousDir(warm_dir->get(), spawn.plan.warm.rendezvous_dir);
  if (!rendezvous_lock.ok()) return rendezvous_lock.status();
  if (lease.rendezvous.has_value()) lease.rendezvous->Hold(*std::move(rendezvous_lock));
  if (account.has_value() && lease.account == nullptr) {
    absl::StatusOr<std::unique_ptr<AccountView>> view =
        WriteAccountView(host, *account, spawn.account_dir);
    if (!view.ok()) return view.status();
    lease.account = *std::move(view);
  }
  absl::StatusOr<warm::NewSlot> made = warm::MakeSlot(warm_dir->get(), key, info);
  if (!made.ok()) return made.status();
  const int rendezvous_dir = OpenSubdirNoFollow(AT_FDCWD, spawn.plan.warm.rendezvous_dir.c_str());
  warm::OwnedFd rendezvous_dir_fd(rendezvous_dir);
  absl::StatusOr<warm::OwnedFd> rendezvous =
      warm::ListenAt(rendezvous_dir, std::string(kRendezvousName));
  if (!rendezvous.ok()) {
    warm::RemoveSlot(warm_dir->get(), made->slot.name);
    return rendezvous.status();
  }
  return warm::StartHolder(
      {spawn, lease, host, warm_dir->get(), *std::move(made), *std::move(rendezvous), run_record});
}

WarmRequest RequestFor(const SpawnPlan& plan, const HostFacts& host) {
  WarmRequest request;
  request.argv = plan.warm.command;
  request.cwd = plan.warm.workdir;
  for (const std::string& name : plan.warm.pass) {
    if (ForwardedValueIsSet(host.envp, name)) {
      request.env.push_back(absl::StrCat(name, "=", GetEnv(host.envp, name)));
    }
  }
  return request;
}

}  // namespace

absl::StatusOr<Outcome> RunWarm(const WrappedSpawn& spawn, SpawnLease& lease, const HostFacts& host,
                                const SpawnLog& log) {
  std::optional<AccountFiles> account;
  absl::Status taken = TakeSpawnFiles(spawn, lease, host, &account);
  if (!taken.ok()) return log.Refuse(spawn.tier_record, taken);
  nlohmann::json run_record = RunRecord(host, spawn.settings, spawn.plan, spawn.program);
  log.Append(run_record);
  // Podman's client answered this spawn's questions: np-exec's own service
  // answers the next ones (podman_service.h).
  if (OwnPodmanServiceApplies(spawn.plan.runtime, /*warm=*/true, spawn.endpoint, host)) {
    StartOwnPodmanService(host, spawn.endpoint.bin, spawn.plan.warm.idle_seconds);
  }
  const auto started = std::chrono::steady_clock::now();
  // A sandbox that ends before it starts the program (its idle time ran out,
  // its keeper ended) ran nothing: the spawn goes to another, or to a new one.
  bool started_one = false;
  absl::StatusOr<WarmResult> result = absl::UnavailableError("no sandbox");
  for (int attempt = 0; attempt < 3; ++attempt) {
    absl::StatusOr<warm::Slot> slot =
        SandboxFor(spawn, lease, host, run_record, account, &started_one);
    if (!slot.ok()) return log.EndRun(std::move(run_record), slot.status(), started);
    result = warm::RunInSandbox(slot->connection.get(), RequestFor(spawn.plan, host), run_record);
    if (result.ok() || ErrorCode(result.status()) != "warm-sandbox-gone" || started_one) break;
  }
  const long long duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                    std::chrono::steady_clock::now() - started)
                                    .count();
  // A terminating signal before the sandbox started the program ends the
  // spawn as it ends a cold one's runtime then: 128+n, nothing ran.
  if (!result.ok() && ErrorCode(result.status()) == "warm-interrupted") {
    const int exit_status = 128 + ErrorDetails(result.status()).value("signal", SIGTERM);
    log.Append(ExitRecord(std::move(run_record), exit_status, duration_ms));
    return Outcome{exit_status};
  }
  if (!result.ok()) return log.EndRun(std::move(run_record), result.status(), started);
  log.Append(ExitRecord(std::move(run_record), result->exit_code, duration_ms));
  return Outcome{result->exit_code};
}

}  // namespace np
