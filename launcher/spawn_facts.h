// The host facts a plan needs, gathered the same way for a run, for `wrap`
// and for `doctor --deep`, so all three plan the same spawn. Reads the
// environment's facts (already in HostFacts), the filesystem and randomness.
#ifndef NP_EXEC_LAUNCHER_SPAWN_FACTS_H_
#define NP_EXEC_LAUNCHER_SPAWN_FACTS_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "core/plan.h"
#include "core/settings.h"
#include "launcher/host.h"
#include "launcher/runtime/driver.h"
#include "nlohmann/json.hpp"

namespace np {

// What every plan needs: the working directory `cwd`, PATH and the program
// lookup (shim/'s FindRealProgram skipping np-exec by device and inode), the
// markers np-exec passes on, uid:gid and terminals.
SpawnFacts BaseFacts(const HostFacts& host, const std::string& cwd);

// The caller's home, its links resolved (HOME as it is when that fails; ""
// without HOME): what a container's project mount must not contain.
std::string RealHome(const HostFacts& host);

// Whether the forwarded variable `name` has a value to carry in `envp` (set,
// even to ""; never one of the interposer's): SpawnFacts::env_is_set.
bool ForwardedValueIsSet(char** envp, const std::string& name);

// Adds what a container plan needs: the caller's real home (RealHome), the
// probed runtime binary, a unique container name
// "<name_prefix>-<pid>-<random>", with `owned` the driver's owner label value
// (not for a plan np-exec will not run itself), and the runtime's
// own facts (its driver's AddSpawnFacts). With `has_mounts` (the config asks
// for extra mounts), the engine is also asked where it keeps its state, which
// joins the forbidden mount sources (one more engine request, only then), as
// do np-exec's own state store (StateStoreDir) and every directory under /run
// that holds a socket (a bounded walk, core/socket_walk.h).
void AddContainerFacts(const HostFacts& host, const RuntimeDriver& driver, const Endpoint& endpoint,
                       const ProbeResult& probe, absl::string_view name_prefix, bool owned,
                       bool has_mounts, SpawnFacts& facts);

// When the project file chose the container's user (core/container_user.h)
// on a runtime with images: asks the engine for the image's configured user
// (RuntimeDriver::InspectImageUser) and its passwd and group (the account
// view's cache by image ID, launcher/state/account_view.h, copied out on a miss),
// so the plan can resolve the ids and refuse root. Leaves
// `facts.image_user` unset when the engine does not answer (the plan then
// refuses a user it cannot resolve). Needs `facts.runtime_bin` and
// `facts.container_name` (AddContainerFacts).
void AddImageUserFacts(const Settings& settings, const HostFacts& host, const RuntimeDriver& driver,
                       const Endpoint& endpoint, SpawnFacts& facts);

// For `trust`: who the container would run as when the project file chose
// its user on a runtime with images ({"image", "ids": "uid:gid[,groups=..]"},
// or {"image", "refused": code, "why": message} when a spawn would refuse
// it); nullopt when the project did not choose (the caller's own ids, or the
// operator's choice). Asks the engine as a spawn does.
std::optional<nlohmann::json> DescribeProjectUser(const Settings& settings, const HostFacts& host);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_SPAWN_FACTS_H_
