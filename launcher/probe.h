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

// Probes one runtime. `for_run_path`: the caller is about to run bubblewrap
// under supervision with --info-fd, so the spawn's own sandbox is the check
// that the namespaces can be created (a sandbox that never reports itself set
// up is refused with exit 69); the probe then only finds the binary, instead of
// paying for a second, no-op sandbox on every spawn. Docker and podman are
// probed the same way either way.
ProbeResult ProbeRuntime(Runtime runtime, const HostFacts& host, bool for_run_path = false);

// The bubblewrap arguments of the no-op sandbox the probe runs.
std::vector<std::string> BwrapProbeArgs(const std::string& bin);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_PROBE_H_
