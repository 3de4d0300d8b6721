// Removing containers whose owning np-exec is gone.
//
// Each container np-exec starts carries the label dev.nubos.np-exec.owner =
// "<pid>:<start time>". A SIGKILLed np-exec cannot clean up after itself, so
// every container run first (in parallel with the engine starting the new
// container) removes labelled containers whose owner no longer exists: the
// pid is gone, or now belongs to a process with another start time.
// Touches the engine socket; ForceRemoveContainer may run the runtime's client.
#ifndef NP_EXEC_LAUNCHER_RUNTIME_REAPER_H_
#define NP_EXEC_LAUNCHER_RUNTIME_REAPER_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace np {

// "<pid>:<start time>" for this process.
std::string OwnerLabelValue(int pid, unsigned long long start_time);

// True while the owner named by a label value is still running.
bool OwnerAlive(absl::string_view owner);

// Removes orphaned np-exec containers through the engine socket; returns how
// many were removed.
absl::StatusOr<int> ReapOrphans(const std::string& socket_path);

// Force-removes one container by name through the engine socket.
absl::Status RemoveContainer(const std::string& socket_path, absl::string_view name);

// Force-removes one container by name: through the engine socket when there
// is one, else with `bin rm -f NAME` (environment `env`). Nothing for an
// empty name (bubblewrap: nothing outlives it). Spawns.
void ForceRemoveContainer(const std::string& bin, const std::vector<std::string>& env,
                          const std::optional<std::string>& socket_path, const std::string& name);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_RUNTIME_REAPER_H_
