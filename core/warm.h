// Warm sandboxes (isolation.container.warm): a spawn handed to a sandbox that
// already runs, built from an identical plan, instead of a sandbox of its own.
//
// The sandbox runs np-exec's own static binary as its PID 1, the keeper
// (launcher/warm/keeper.h). Its plan is the cold plan with the program taken
// out of the argv: the keeper starts in the project, and each spawn hands it
// the program, the working directory, the values of the forwarded variables
// and its three standard descriptors (WarmRequest). The keeper's channel is
// reached once, through the rendezvous directory bound at kWarmTarget, before
// any program runs, and then never again by path. Between two spawns the
// keeper kills every process, empties every writable scratch mount and
// removes the SysV IPC objects, so nothing of one spawn meets the next.
//
// A sandbox serves only plans whose key (WarmKeyMaterial) is the same: the
// runtime argv with what differs per spawn and not per sandbox (descriptor
// numbers, which are replaced by what they point at, np-exec's per-spawn
// file paths, replaced by their content, the rendezvous directory), the
// effective configuration, the image ID and np-exec's own build. Pure.
#ifndef NP_EXEC_CORE_WARM_H_
#define NP_EXEC_CORE_WARM_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace np {

inline constexpr absl::string_view kKeeperVerb = "keeper";
// Inside the sandbox: the rendezvous directory, empty once the keeper has its
// channel.
inline constexpr absl::string_view kWarmTarget = "/run/np-exec/warm";
inline constexpr absl::string_view kRendezvousName = "rendezvous.sock";
inline constexpr int kDefaultWarmIdleSeconds = 300;

// What a plan that may run warm adds (SpawnPlan::warm).
struct WarmPlan {
  bool warm = false;  // The argv starts a keeper; `command` is what it runs.
  // Asked for warm (isolation.container.warm) but planned cold: the code of
  // why (kWarmCold*); "" otherwise.
  std::string cold_reason;
  int idle_seconds = 0;
  std::vector<std::string> command;  // The program and its arguments, as the sandbox runs them.
  std::string workdir;               // The spawn's working directory inside.
  // The host directory bound at kWarmTarget (the launcher's, made before the plan).
  std::string rendezvous_dir;
  // The caller's variables handed over per spawn by name (TERM and the
  // forwarded names), never given to the sandbox itself.
  std::vector<std::string> pass;
};

inline constexpr absl::string_view kWarmColdRemote = "warm-engine-remote";
inline constexpr absl::string_view kWarmColdAllowlist = "warm-allowlist-unsupported";
inline constexpr absl::string_view kWarmColdPersistentHome = "warm-persistent-home-unsupported";
inline constexpr absl::string_view kWarmColdPrinted = "warm-printed-plan";

// Why a spawn asking for warm runs cold ("" when it can be warm): an engine
// on another host (`local_engine` false: the keeper is reached through this host
// only), the egress proxy (one per spawn), a persistent home (leased per
// spawn), a printed plan (no launcher to keep the sandbox: `has_rendezvous`
// false).
std::string WarmColdReason(bool local_engine, bool allowlist, bool persistent_home,
                           bool has_rendezvous);

inline constexpr absl::string_view kWarmColdImageUnknown = "warm-image-unknown";
inline constexpr absl::string_view kWarmColdImageVolumes = "warm-image-volumes";

// Why a spawn on an image runs cold ("" when the image allows warm): the
// engine did not tell the image's content ID and volumes (`volumes` nullopt:
// a sandbox kept for it could be another image's by now), or the image
// declares volumes (VOLUME in its Dockerfile): the engine mounts each as a
// volume of the container's own that outlives a spawn, which the keeper's
// reset does not empty, so a warm spawn would find what the one before it
// wrote there.
std::string WarmImageColdReason(const std::optional<std::vector<std::string>>& volumes);

// `warm-protocol`: a message of the warm sandbox's channel is malformed.
absl::Status WarmProtocolError(absl::string_view why);

// One spawn handed to a keeper.
struct WarmRequest {
  std::vector<std::string> argv;  // argv[0] is looked up on the request's PATH.
  std::string cwd;                // Absolute, inside the sandbox.
  std::vector<std::string> env;   // "NAME=value", added to the keeper's environment.
};
nlohmann::json WarmRequestToJson(const WarmRequest& request);
// Codes: `warm-protocol` (not an object of the expected shape, an empty
// argv, a relative cwd, an entry without '=' or with a NUL byte).
absl::StatusOr<WarmRequest> WarmRequestFromJson(const nlohmann::json& json);

// How the program ended: its exit status, or the signal that ended it.
struct WarmResult {
  int exit_code = 0;
  int signal = 0;  // Non-zero: killed by it (exit_code is then 128 + signal).
};
nlohmann::json WarmResultToJson(const WarmResult& result);
absl::StatusOr<WarmResult> WarmResultFromJson(const nlohmann::json& json);

// The text a warm sandbox's key is the SHA-256 of: `argv` (the runtime argv
// of the keeper plan) with each --bind-fd / --ro-bind-fd number replaced by
// `fd_identity` of it, and every occurrence of `per_spawn_dir` (the account
// view) and of each of `per_spawn` (the rendezvous directory, the
// container's name), whole or inside a value, replaced by a mark; then
// `parts` (the effective config, the image ID, the build, the per-spawn
// files' content), each on a line of its own, length-prefixed so no two
// inputs read the same.
std::string WarmKeyMaterial(const std::vector<std::string>& argv,
                            const std::function<std::string(int fd)>& fd_identity,
                            absl::string_view per_spawn_dir,
                            const std::vector<std::string>& per_spawn,
                            const std::vector<std::string>& parts);

// The key: the SHA-256 of the material, in hex.
std::string WarmKey(absl::string_view material);

}  // namespace np

#endif  // NP_EXEC_CORE_WARM_H_
