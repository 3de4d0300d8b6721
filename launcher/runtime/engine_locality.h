// Where an engine client sends its requests, as the client itself decides:
// docker's DOCKER_HOST, else the context DOCKER_CONTEXT or config.json's
// currentContext names (its meta.json endpoint); podman's CONTAINER_HOST or
// CONTAINER_CONNECTION. np-exec mounts this host's paths, so an engine that
// is not on this host would mount whatever sits at those paths over there:
// such an endpoint is named here with how it is reached: over ssh, over tcp
// with TLS the client verifies (docker's DOCKER_TLS_VERIFY, or a context
// with a CA and no SkipTLSVerify), over plain tcp, or in a way np-exec cannot
// vouch for; core's CheckEngineLocality decides. A tcp:// port on the
// loopback counts as this host. Reads the client's own configuration files. Every call of the
// client (the run, image inspects, the account copy-out, cleanup, the watchdog's) gets the endpoint
// checked here pinned in its environment (ClientEnvironment), so a context switched since cannot
// move it.
#ifndef NP_EXEC_LAUNCHER_RUNTIME_ENGINE_LOCALITY_H_
#define NP_EXEC_LAUNCHER_RUNTIME_ENGINE_LOCALITY_H_

#include <optional>
#include <string>
#include <vector>

#include "launcher/host.h"
#include "launcher/runtime/driver.h"

namespace np {

struct EngineLocation {
  // The engine's local API socket, when the client will use one.
  std::optional<std::string> socket;
  // What the client would reach instead, for a person ("DOCKER_HOST
  // ssh://build", "docker context remote (tcp://10.0.0.5:2376)"); "" when
  // the endpoint is this host's.
  std::string remote;
  // The endpoint as the client is told it (DOCKER_HOST or CONTAINER_HOST's
  // value); "" when the client's own default is this engine.
  std::string url;
  // How the client reaches it: kThisHost exactly when `remote` is "".
  EngineReach reach = EngineReach::kUnvouched;
  // kTls: the directory of the CA and client certificate the client
  // verifies with (DOCKER_CERT_PATH, pinned).
  std::string tls_cert_path = {};
  // The client's variables as np-exec pins them on every call (copied into
  // Endpoint): docker's DOCKER_HOST set to `url` (a remote endpoint's place
  // taken by the default socket, so no call can reach it) and DOCKER_CONTEXT
  // removed; podman's CONTAINER_CONNECTION removed and CONTAINER_HOST kept
  // only as the checked `url`.
  std::vector<std::string> client_set = {};
  std::vector<std::string> client_unset = {};
  // An ssh or verified-TLS endpoint on another host: the pins once the
  // operator accepts it (ResolveEndpoint), naming it (and its certificates).
  std::vector<std::string> accepted_client_set = {};
};

// Docker's endpoint: DOCKER_HOST, else the current context's, else the
// default socket. A context np-exec cannot read, a DOCKER_CONFIG that is
// relative or lies in a project (whose sandboxes could write a context), and
// a socket in a project count as remote.
EngineLocation DockerLocation(const HostFacts& host);

// Podman's: CONTAINER_HOST, else `fallback` (the client is the engine). Set
// at all, CONTAINER_CONNECTION (a named connection) and an empty
// CONTAINER_HOST make the client a remote one: remote.
EngineLocation PodmanLocation(const HostFacts& host, const std::string& fallback);

// `env` (a runtime client's environment) with `endpoint`'s pins applied.
std::vector<std::string> PinClientEnvironment(std::vector<std::string> env,
                                              const Endpoint& endpoint);

// The environment of a client call made outside a spawn's run: the
// caller's `envp`, without the interposer's variables, pinned as above.
std::vector<std::string> ClientEnvironment(const Endpoint& endpoint, char** envp);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_RUNTIME_ENGINE_LOCALITY_H_
