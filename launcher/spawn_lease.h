// What one container spawn holds from its plan to its end, in one place: the
// project's spawn lock and the placeholders made under it, the bind sources
// pinned after the plan's checks, the egress session, the persistent home,
// the caller's account view, the watchdog and the pipe that tells it the
// sandbox ended. The run path's steps and sandbox-exec's fill in the first
// four before the plan is final; the executor (run_wrapped.h) the rest just
// before the run. Everything is released when the lease goes, in the reverse
// of the order below: the watchdog and the views first, the lock last.
#ifndef NP_EXEC_LAUNCHER_SPAWN_LEASE_H_
#define NP_EXEC_LAUNCHER_SPAWN_LEASE_H_

#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "launcher/egress/session.h"
#include "launcher/protected_placeholders.h"
#include "launcher/remote_check.h"
#include "launcher/runtime/bwrap_data.h"
#include "launcher/source_pins.h"
#include "launcher/state/account_view.h"
#include "launcher/state/agent_home.h"
#include "launcher/warm/registry.h"
#include "launcher/watchdog.h"

namespace np {

struct SpawnLease {
  SpawnLease() = default;
  SpawnLease(const SpawnLease&) = delete;
  SpawnLease& operator=(const SpawnLease&) = delete;

  // Held before anything is pinned; handed to the placeholders once they
  // are made (a lock that could not be had refuses the spawn there).
  std::optional<absl::StatusOr<SpawnLock>> spawn_lock;
  std::optional<SourcePins> pins;
  // Made by the plan for exactly this spawn; none is a refusal.
  std::optional<ProtectedPlaceholders> placeholders;
  // network "allowlist" only; it removes its directory however the run ends.
  std::unique_ptr<egress::EgressSession> session;
  // isolation.container.warm: this spawn's rendezvous directory
  // (SpawnFacts::warm_dir), removed when the spawn ends.
  std::optional<warm::RendezvousDir> rendezvous;
  std::optional<AgentHomeLease> home;
  std::unique_ptr<AccountView> account;
  // bubblewrap's cold run: the view as data, never written to the store.
  std::unique_ptr<BwrapAccountData> account_data;
  SandboxPipe sandbox_pipe;
  std::optional<Watchdog> watchdog;
  // On an engine on another host: the check file in the project, removed
  // when the spawn ends (remote_check.h).
  std::optional<RemoteNonce> remote_nonce;
};

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_SPAWN_LEASE_H_
