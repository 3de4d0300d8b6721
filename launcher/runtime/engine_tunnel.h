// One connection per engine on another host, reused: an ssh master of its own
// (ControlMaster, ControlPersist) forwards a unix-domain endpoint in np-exec's
// state store (`engines/`, 0700) to the engine's API on that host, so the
// probe, the image checks, the run, the watchdog's cleanup and every later
// spawn talk to the engine over that one connection instead of an ssh
// handshake per client call. The master outlives np-exec (a SIGKILLed
// np-exec's watchdog still reaches the engine through it) and exits after
// kTunnelIdleSeconds without a connection. Touches processes and sockets.
#ifndef NP_EXEC_LAUNCHER_RUNTIME_ENGINE_TUNNEL_H_
#define NP_EXEC_LAUNCHER_RUNTIME_ENGINE_TUNNEL_H_

#include <optional>
#include <string>

#include "launcher/host.h"

namespace np {

inline constexpr int kTunnelIdleSeconds = 300;

// The engine API socket on the host `ssh_url` names: the URL's path
// (podman's ssh://user@host/run/user/1000/podman/podman.sock), else docker's
// default there.
std::string RemoteEngineSocket(const std::string& ssh_url);

// The forwarded endpoint's path for `ssh_url`, answering the engine API's
// ping, made (or reused) with the trusted `ssh` binary; nullopt when it
// cannot be had (no state store, no trusted ssh, the forward failed): the
// client then dials ssh itself on every call, as without it.
std::optional<std::string> EngineTunnel(const HostFacts& host, const std::string& ssh_bin,
                                        const std::string& ssh_url, int timeout_ms);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_RUNTIME_ENGINE_TUNNEL_H_
