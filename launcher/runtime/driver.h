// One room per runtime: the interface every container runtime's driver
// implements, and the table that picks the driver of a runtime.
//
// The run path, wrap, status and doctor never branch on which runtime they
// use: they ask its driver to resolve its binary and endpoint, probe it, add
// its facts to a spawn, run a plan under supervision, clean up after a run and
// reap what killed runs left behind. Core's runtime table (core/runtime.h) holds the runtime's
// plain traits and argv builder. Touches processes and sockets.
#ifndef NP_EXEC_LAUNCHER_RUNTIME_DRIVER_H_
#define NP_EXEC_LAUNCHER_RUNTIME_DRIVER_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/gate.h"
#include "core/plan.h"
#include "launcher/host.h"
#include "launcher/source_pins.h"
#include "launcher/supervise.h"
#include "nlohmann/json.hpp"

namespace np {

// How np-exec reaches a runtime.
struct Endpoint {
  std::optional<std::string> socket;  // Local engine API socket, when there is one.
  // `socket` is np-exec's own podman API service (podman_service.h): the
  // same engine as the client's, which still runs every container.
  bool own_service = false;
  // Where the client would send its requests instead, when that is not this
  // host (runtime/engine_locality.h); "" for a local engine.
  std::string remote;
  // How the client reaches it (core/runtime.h); kThisHost for a local engine.
  EngineReach reach = EngineReach::kThisHost;
  // The operator accepts this endpoint on another host (ssh or verified TLS,
  // and isolation.container.remote_engine): only then is it asked anything
  // (ResolveEndpoint).
  bool remote_allowed = false;
  std::string bin;                  // The runtime binary ("" if none was found).
  std::string bin_trusted_because;  // Why `bin` is trusted (trusted_binary.h).
  // Matches of the binary on PATH skipped as untrusted, each "PATH: why".
  std::vector<std::string> untrusted;
  int timeout_ms = 2000;  // Per engine API request (HostFacts.engine_timeout_ms).
  // Every call of the client runs with these set ("NAME=value") and removed,
  // so it reaches exactly the endpoint resolved here, whatever its own
  // configuration says by then (runtime/engine_locality.h).
  std::vector<std::string> client_set = {};
  std::vector<std::string> client_unset = {};
  // What replaces client_set once the operator accepts an engine on another
  // host (ResolveEndpoint); empty for every other endpoint.
  std::vector<std::string> accepted_client_set = {};
};

// How hard a probe looks. kFull proves the runtime works (bubblewrap builds
// a no-op sandbox); kForPlan is for `wrap`, which runs nothing: bubblewrap
// may answer with a full probe's success of the last kProbeCacheSeconds
// under the same key (runtime/bwrap_probe_cache.h); kForRun is for a caller
// about to run a spawn whose own start is the proof (bubblewrap's --info-fd
// report), so it only finds the binary. Docker and podman are asked their
// engine either way.
enum class ProbeDepth { kFull, kForPlan, kForRun };

// What an image's own config says about who runs in it.
// What the engine told of a spawn's image (RuntimeDriver::ProbeForSpawn).
struct SpawnImage {
  std::string id;  // The image's content ID ("" when not told).
  // The paths its config declares as volumes; nullopt when not told.
  std::optional<std::vector<std::string>> volumes;
};

struct ImageUserConfig {
  std::string id;    // The image's content ID ("" when not told).
  std::string user;  // Its configured user, as written ("": the default, root).
};

// An image's own account files, as read from it (nullopt: not there or
// not readable).
struct ImageAccountBases {
  std::optional<std::string> passwd;
  std::optional<std::string> group;
};

// What a supervised run ended with.
struct RunOutcome {
  SuperviseResult result;
  // Something worth saying after the run (the likely cause of a runtime's own
  // failure), reported on stderr; OK when there is nothing.
  absl::Status note;
};

class RuntimeDriver {
 public:
  virtual ~RuntimeDriver() = default;

  // Finds the runtime binary on the caller's PATH and the engine endpoint.
  // No I/O beyond stat.
  virtual Endpoint Resolve(const HostFacts& host) const = 0;

  // Is the runtime usable right now? Reasons are core's (gate.h).
  virtual ProbeResult Probe(const HostFacts& host, const Endpoint& endpoint,
                            ProbeDepth depth) const = 0;

  // The probe of a spawn about to run `image` (ProbeDepth::kForRun). An
  // engine answers it with the image's own entry (`GET /images/NAME/json`,
  // or `image inspect` where the client is the engine), which also names the
  // image's content ID and volumes in `told` (cleared: when absent or not
  // told), so a spawn learns them in the probe's one round trip. The
  // default: Probe.
  virtual ProbeResult ProbeForSpawn(const HostFacts& host, const Endpoint& endpoint,
                                    const std::string& /*image*/, SpawnImage* told) const {
    *told = SpawnImage();
    return Probe(host, endpoint, ProbeDepth::kForRun);
  }

  // Adds this runtime's facts to a container spawn's facts: forbidden mount
  // sources (the engine socket), podman's init, bubblewrap's host root.
  // The configured user of `image` (and its content ID), asked of the
  // engine: `GET /images/NAME/json` or the client's `image inspect`; nullopt
  // when the engine does not say (the image is missing, the engine is down)
  // or the runtime has no images.
  virtual std::optional<ImageUserConfig> InspectImageUser(const HostFacts& /*host*/,
                                                          const Endpoint& /*endpoint*/,
                                                          const std::string& /*image*/) const {
    return std::nullopt;
  }

  // The label value that names this np-exec as the owner of a container it
  // starts (pid and start time), so the reaper can tell a container whose
  // np-exec is gone; "" for a runtime whose sandbox cannot outlive np-exec.
  virtual std::string OwnerLabel(const HostFacts& /*host*/) const { return ""; }

  virtual void AddSpawnFacts(const HostFacts& host, const Endpoint& endpoint,
                             SpawnFacts& facts) const = 0;

  // Where the engine keeps its state, as the engine itself reports it (its
  // root directory), to add to the forbidden mount sources; empty when the
  // runtime has no engine or it does not say.
  virtual std::vector<std::string> EngineStatePaths(const Endpoint& endpoint) const = 0;

  // Runs the plan to completion as np-exec's supervised child, with
  // `companions` (the egress proxy) alive beside it. An error means the
  // program did not run (the runtime could not be executed or did not come
  // up, or its image is missing: the client's own failure tells, and only
  // then is the engine asked).
  virtual absl::StatusOr<RunOutcome> Run(const SpawnPlan& plan, const Endpoint& endpoint,
                                         const HostFacts& host,
                                         const std::vector<Companion>& companions) const = 0;

  // Pins a printed plan's placeholders in its runtime argv `argv` once
  // sandbox-exec made them (ForEachPinnedPlaceholder), as the run path's plan
  // pins every source: by descriptor (appended to `bind_fds`; `pins` keeps
  // them) or by an identity the sandbox's entry point checks. The one thing
  // added to a printed argv, because a placeholder does not exist before.
  // Codes: Pin's; `spawn-failed` (PrintedArgvLacks).
  virtual absl::Status PinPrintedPlaceholders(const std::vector<ProtectedBind>& binds,
                                              const std::string& project_real,
                                              const std::string& project_mount, SourcePins& pins,
                                              std::vector<std::string>& argv,
                                              std::vector<int>& bind_fds) const = 0;

  // Whether `image` is present; nullopt when it cannot be told or the runtime
  // has no images.
  virtual std::optional<bool> ImagePresent(const std::string& image, const Endpoint& endpoint,
                                           const HostFacts& host) const = 0;

  // Removes what a run named `name` may have left behind: its container and
  // the runtime's secrets it was given (SpawnPlan::env_secrets' names). The
  // trial run of doctor and the watchdog of a killed np-exec call it.
  virtual void Cleanup(const Endpoint& endpoint, const std::string& name,
                       const std::vector<std::string>& secrets, const HostFacts& host) const = 0;

  // The image's own /etc/passwd and /etc/group (the base of the caller's
  // account view), read without running the image, through the client `bin`
  // and a created container named after `container_name`; nullopt when it
  // cannot be told, and for a runtime without images.
  virtual std::optional<ImageAccountBases> ImageAccounts(
      const HostFacts& /*host*/, const Endpoint& /*endpoint*/, const std::string& /*bin*/,
      const std::string& /*image*/, const std::string& /*container_name*/) const {
    return std::nullopt;
  }
};

// Probe results, for drivers.
ProbeResult ProbeAvailable(Runtime runtime, std::string bin, std::string version);
// `cause` (a kCause*, when the driver could tell) picks the fix the
// refusal names (ProbeResult::fix).
inline constexpr absl::string_view kCausePermissionDenied = "permission-denied";
inline constexpr absl::string_view kCauseNoDaemon = "no-daemon";
inline constexpr absl::string_view kCauseRootlessIdMap = "rootless-id-map";
ProbeResult ProbeUnavailable(Runtime runtime, absl::string_view reason, std::string detail,
                             std::string bin = "", absl::string_view cause = "");

// Resolves `name` on the caller's PATH into `endpoint` from trusted locations
// only (trusted_binary.h), for the drivers' Resolve.
void ResolveTrustedBinary(absl::string_view name, const HostFacts& host, Endpoint& endpoint);

// The probe of an endpoint whose binary was not found: untrusted matches
// only (kReasonUntrusted, listing them), or none at all (kReasonNotInstalled).
ProbeResult ProbeMissingBinary(Runtime runtime, const Endpoint& endpoint);

// The runtime's binary was found but could not be executed (69: nothing ran).
absl::Status RuntimeNotExecutable(const std::string& bin, int err);

// Where the runtime's client goes, for status and doctor:
// {"on_this_host": bool, "socket": path or null, "remote": what or null,
// "reach": EngineReachName, "remote_allowed": bool}.
nlohmann::json EngineEndpointJson(const Endpoint& endpoint);

// The driver of `runtime` (launcher/runtime/drivers.cc).
const RuntimeDriver& DriverFor(Runtime runtime);

// The driver's Resolve, with `remote_allowed` set from the operator's
// `container.remote_engine` for an endpoint on another host it may accept.
Endpoint ResolveEndpoint(const RuntimeDriver& driver, const HostFacts& host,
                         const ContainerConfig& container);

// Resolve and probe in one step (probe, status, doctor, the gate).
// `remote_engine`: the operator's isolation.container.remote_engine, so an
// engine on another host it accepts is asked too.
ProbeResult ProbeRuntime(Runtime runtime, const HostFacts& host, ProbeDepth depth,
                         bool remote_engine = false);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_RUNTIME_DRIVER_H_
