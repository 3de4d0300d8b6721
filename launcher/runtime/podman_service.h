// np-exec's own podman API service, for warm sandboxes on podman.
//
// A warm spawn's plan names the image's content ID (the warm key), so every
// spawn asks the engine for its image. Podman has no daemon: without its API
// service that question is a `podman image inspect`, about 30 ms of CPU,
// which a warm spawn (a few ms) cannot afford. When warm sandboxes are on for
// podman on this host and no API service of the caller's answers (neither
// CONTAINER_HOST nor podman's own socket), a warm spawn that runs (never one
// that is refused) starts `podman system service` on a socket in np-exec's
// state store (`engines/podman-<key>.sock`, 0700 folder), keyed by the podman
// binary and the variables that choose podman's configuration and storage
// (PodmanServiceEnvironment, FilesFor's configuration identity), so it always
// answers for the same engine the caller's client would run on. It outlives
// np-exec (a session of its own, no terminal, nothing of the caller's
// environment but those variables), exits after the warm idle time without a
// request, and holds a lock in the store for as long as it lives, so one
// runs per key. Only the questions (probe, image, info, cleanup) go to it:
// the run itself stays with podman's client, as before. Touches processes
// and sockets.
#ifndef NP_EXEC_LAUNCHER_RUNTIME_PODMAN_SERVICE_H_
#define NP_EXEC_LAUNCHER_RUNTIME_PODMAN_SERVICE_H_

#include <optional>
#include <string>
#include <vector>

#include "core/runtime.h"
#include "launcher/host.h"
#include "launcher/runtime/driver.h"

namespace np {

// NP_EXEC_PODMAN_SERVICE=0: np-exec never starts one (every question goes
// through podman's client).
inline constexpr char kPodmanServiceVariable[] = "NP_EXEC_PODMAN_SERVICE";

// The variables podman's client obeys for where its configuration and
// storage are, and PATH (its trusted directories only), HOME, TMPDIR and the
// user's names: all the service gets; with the identity of the podman binary
// and its configuration files they key its socket.
std::vector<std::string> PodmanServiceEnvironment(const HostFacts& host);

// Whether a spawn may ask np-exec's own service: warm sandboxes on podman on
// this host, no API socket of the caller's (CONTAINER_HOST, podman's own),
// and not NP_EXEC_PODMAN_SERVICE=0.
bool OwnPodmanServiceApplies(Runtime runtime, bool warm, const Endpoint& endpoint,
                             const HostFacts& host);

// The socket of np-exec's service for `podman_bin` and the caller's podman
// variables when one lives and answers; nullopt otherwise (the client then
// answers). Never starts one.
std::optional<std::string> OwnPodmanService(const HostFacts& host, const std::string& podman_bin,
                                            int timeout_ms);

// Starts that service (detached, `--time idle_seconds`) unless one lives:
// called by a warm spawn that runs, never by one that is refused, so the
// next spawns ask it.
void StartOwnPodmanService(const HostFacts& host, const std::string& podman_bin, int idle_seconds);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_RUNTIME_PODMAN_SERVICE_H_
