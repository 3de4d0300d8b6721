// The holder of a warm sandbox (core/warm.h): a process of np-exec's own on
// the host, forked by the spawn that found no idle sandbox for its plan, that
// keeps what the sandbox needs for as long as it lives (the project's spawn
// lock and placeholders, the pinned sources, the account view, the watchdog)
// and runs it through the runtime's driver like a cold spawn, with the
// keeper in place of the program.
//
// It listens on the rendezvous socket until the keeper has connected, then
// removes it; it listens on the slot's ctl.sock (launcher/warm/registry.h)
// for spawns, one at a time: each request and its descriptors go to the
// keeper with the client's connection, over which the keeper answers the
// client itself. It ends the sandbox when it has been idle for the plan's
// idle time (and no client has claimed it meanwhile), when asked to (`warm
// --stop`), or when the keeper's channel closes; then it releases what it
// held and removes the slot. If the holder itself is killed, the sandbox
// goes with it (bubblewrap's --die-with-parent) and the watchdog removes the
// placeholders. Spawns; touches sockets and signals.
#ifndef NP_EXEC_LAUNCHER_WARM_HOLDER_H_
#define NP_EXEC_LAUNCHER_WARM_HOLDER_H_

#include <string>

#include "absl/status/statusor.h"
#include "launcher/host.h"
#include "launcher/run_wrapped.h"
#include "launcher/spawn_lease.h"
#include "launcher/warm/registry.h"
#include "nlohmann/json.hpp"

namespace np::warm {

struct HolderStart {
  const WrappedSpawn& spawn;
  SpawnLease& lease;  // Taken over by the holder; abandoned here.
  const HostFacts& host;
  int warm_dir = -1;
  NewSlot slot;               // Claimed for the spawn that starts the holder.
  OwnedFd rendezvous;         // Listening in spawn.plan.warm.rendezvous_dir.
  nlohmann::json run_record;  // The watchdog's, for a killed holder.
};

// Forks the holder. In np-exec, returns the slot, still claimed, connected
// to the holder, and the lease's placeholders and account view abandoned to
// it. Codes: `spawn-failed` (no fork), the watchdog's.
absl::StatusOr<Slot> StartHolder(HolderStart start);

}  // namespace np::warm

#endif  // NP_EXEC_LAUNCHER_WARM_HOLDER_H_
