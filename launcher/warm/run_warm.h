// The run path's last step for a plan that runs warm (core/warm.h): the spawn
// files and the ratchet as on the cold path, then the plan's key; the spawn
// goes to an idle warm sandbox of that key, or to a new one whose holder
// this spawn starts (launcher/warm/holder.h); the run and exit lines say
// "warm": true. Spawns.
#ifndef NP_EXEC_LAUNCHER_WARM_RUN_WARM_H_
#define NP_EXEC_LAUNCHER_WARM_RUN_WARM_H_

#include "absl/status/statusor.h"
#include "launcher/host.h"
#include "launcher/outcome.h"
#include "launcher/run_wrapped.h"
#include "launcher/spawn_lease.h"
#include "launcher/spawn_log.h"

namespace np {

absl::StatusOr<Outcome> RunWarm(const WrappedSpawn& spawn, SpawnLease& lease, const HostFacts& host,
                                const SpawnLog& log);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_WARM_RUN_WARM_H_
