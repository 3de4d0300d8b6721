// The one executor of a container spawn: the run path's last step and the
// way a printed plan runs (sandbox-exec). Both hand it a complete plan and
// what was made for it before (the placeholders, under the project's spawn
// lock); it makes what the plan names and trust allowed (the persistent
// home, the account view), records the ratchet, starts the watchdog, writes
// the run and exit lines and has the runtime's driver run the plan under
// supervision (signals forwarded, the trusted PATH, the reaper). Spawns.
#ifndef NP_EXEC_LAUNCHER_RUN_WRAPPED_H_
#define NP_EXEC_LAUNCHER_RUN_WRAPPED_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/plan.h"
#include "core/settings.h"
#include "launcher/host.h"
#include "launcher/outcome.h"
#include "launcher/runtime/driver.h"
#include "launcher/spawn_lease.h"
#include "launcher/spawn_log.h"
#include "launcher/trust_gate.h"
#include "nlohmann/json.hpp"

namespace np {

// One wrapped spawn, from its plan to its end.
struct WrappedSpawn {
  const Settings& settings;
  const SpawnPlan& plan;
  // The command as the audit lines name it.
  const std::vector<std::string>& program;
  const RuntimeDriver& driver;
  const Endpoint& endpoint;
  const TrustGate& trust;  // Allowed: the ratchet records it before the run.
  nlohmann::json tier_record;
  // The account view the plan mounts (PlannedAccountViewDir; "" none), the
  // image's content ID it starts from, the caller's git identity.
  std::string account_dir;
  std::string image_id;
  std::string gitconfig;
};

// Runs `spawn` to its end, holding what it needs in `lease`: the
// placeholders the plan made (none is a refusal; finished when the runtime
// exits), the pins and the egress session already there; the home, the
// account view and the watchdog taken here.
absl::StatusOr<Outcome> RunWrapped(const WrappedSpawn& spawn, SpawnLease& lease,
                                   const HostFacts& host, const Reporter& reporter,
                                   const SpawnLog& log);

// RunWrapped's steps the warm path shares (launcher/warm/run_warm.h).
// What the plan names and trust allowed, made now (the persistent home, the
// account view), and the ratchet's record of the tier. With `deferred`, the
// account view is only composed, into it (a warm spawn writes it only when
// it starts a sandbox).
absl::Status TakeSpawnFiles(const WrappedSpawn& spawn, SpawnLease& lease, const HostFacts& host,
                            std::optional<AccountFiles>* deferred = nullptr);
// The plan as the driver runs it, with the watchdog started when the sandbox
// needs one (a named container, or placeholders to remove), which writes
// the exit line made from `run_record` if np-exec is killed.
absl::StatusOr<SpawnPlan> WatchSandbox(const WrappedSpawn& spawn, SpawnLease& lease,
                                       const HostFacts& host, const nlohmann::json& run_record);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_RUN_WRAPPED_H_
