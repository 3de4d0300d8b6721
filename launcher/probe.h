// The runtime probe: is the configured container runtime usable right now?
//
// Docker and podman are asked through their API socket (GET /version, short
// timeout); the `docker version` / `podman version` command is the fallback
// only when the endpoint is not a local socket, or for podman when no API
// service runs. Bubblewrap is asked to build a no-op sandbox. Reasons are
// core's: runtime-not-installed (no binary on PATH) and daemon-unreachable
// (binary present, engine not answering), with a detail saying which. Touches
// sockets and spawns.
#ifndef NP_EXEC_LAUNCHER_PROBE_H_
#define NP_EXEC_LAUNCHER_PROBE_H_

#include <optional>
#include <string>

#include "core/gate.h"
#include "launcher/host.h"

namespace np {

// How np-exec reaches the engine of a runtime.
struct Endpoint {
  std::optional<std::string> socket;  // Local API socket, when there is one.
  std::string bin;                    // Runtime binary on PATH ("" if none).
};

// Works out the endpoint from DOCKER_HOST / CONTAINER_HOST and PATH. No I/O
// beyond stat.
Endpoint ResolveEndpoint(Runtime runtime, const HostFacts& host);

// Probes one runtime. `with_version`: also ask bubblewrap for its version (one
// more spawn), which the run path does not need.
ProbeResult ProbeRuntime(Runtime runtime, const HostFacts& host, bool with_version = true);

// The bubblewrap arguments of the no-op sandbox the probe runs.
std::vector<std::string> BwrapProbeArgs(const std::string& bin);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_PROBE_H_
