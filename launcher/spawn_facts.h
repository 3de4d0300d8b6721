// The host facts a plan needs, gathered the same way for a run, for `wrap`
// and for `doctor --deep`, so all three plan the same spawn. Reads the
// environment's facts (already in HostFacts), the filesystem and randomness.
#ifndef NP_EXEC_LAUNCHER_SPAWN_FACTS_H_
#define NP_EXEC_LAUNCHER_SPAWN_FACTS_H_

#include <string>

#include "absl/strings/string_view.h"
#include "core/plan.h"
#include "launcher/host.h"
#include "launcher/runtime/driver.h"

namespace np {

// What every plan needs: the working directory `cwd`, PATH and the program
// lookup (shim/'s FindRealProgram skipping np-exec by device and inode), the
// markers np-exec passes on, the caller's real home, uid:gid and terminals.
SpawnFacts BaseFacts(const HostFacts& host, const std::string& cwd);

// Adds what a container plan needs: the probed runtime binary, a unique
// container name "<name_prefix>-<pid>-<random>", the owner label value
// (empty: none, for a plan np-exec will not run itself), and the runtime's
// own facts (its driver's AddSpawnFacts). With `has_mounts` (the config asks
// for extra mounts), the engine is also asked where it keeps its state, which
// joins the forbidden mount sources (one more engine request, only then), as
// do np-exec's own state store (StateStoreDir) and every directory under /run
// that holds a socket (a bounded walk, core/socket_walk.h).
void AddContainerFacts(const HostFacts& host, const RuntimeDriver& driver, const Endpoint& endpoint,
                       const ProbeResult& probe, absl::string_view name_prefix, std::string owner,
                       bool has_mounts, SpawnFacts& facts);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_SPAWN_FACTS_H_
