// Where an engine client sends its requests, as the client itself decides:
// docker's DOCKER_HOST, else the context DOCKER_CONTEXT or config.json's
// currentContext names (its meta.json endpoint); podman's CONTAINER_HOST or
// CONTAINER_CONNECTION. np-exec mounts this host's paths, so an engine that
// is not on this host would mount whatever sits at those paths over there:
// such an endpoint is named here, and spawns on it are refused
// (isolation-engine-remote). A tcp:// port on the loopback counts as this
// host. Reads the client's own configuration files.
#ifndef NP_EXEC_LAUNCHER_RUNTIME_ENGINE_LOCALITY_H_
#define NP_EXEC_LAUNCHER_RUNTIME_ENGINE_LOCALITY_H_

#include <optional>
#include <string>

#include "launcher/host.h"

namespace np {

struct EngineLocation {
  // The engine's local API socket, when the client will use one.
  std::optional<std::string> socket;
  // What the client would reach instead, for a person ("DOCKER_HOST
  // ssh://build", "docker context remote (tcp://10.0.0.5:2376)"); "" when
  // the endpoint is this host's socket.
  std::string remote;
};

// Docker's endpoint: DOCKER_HOST, else the current context's, else the
// default socket. A context np-exec cannot read counts as remote.
EngineLocation DockerLocation(const HostFacts& host);

// Podman's: CONTAINER_HOST, else CONTAINER_CONNECTION (a named connection
// is remote), else `fallback` (the client is the engine).
EngineLocation PodmanLocation(const HostFacts& host, const std::string& fallback);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_RUNTIME_ENGINE_LOCALITY_H_
