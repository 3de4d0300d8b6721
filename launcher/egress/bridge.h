// The in-sandbox side of the egress proxy: a listener on
// 127.0.0.1:PORT whose every connection is forwarded, byte for byte, to the
// proxy's unix socket bind-mounted into the sandbox.
//
// np-exec runs it as its own entry point inside the sandbox, then execs the
// program, so it needs nothing but the static binary: StartBridge binds the
// listener in the calling process (so a busy port or a bad path is an error
// the caller sees), forks one background process that serves it, and returns
// the bound port. The bridge process:
//   - dies with its parent (PR_SET_PDEATHSIG, SIGKILL), and the parent may
//     exec: the program it becomes stays the bridge's parent, so the bridge
//     ends when the program does. It is the program's child, which a program
//     that waits for any child (wait(-1)) may notice;
//   - leaves the terminal's process group (setsid), so a Ctrl-C meant for
//     the program does not cut its network first;
//   - holds no descriptor of the caller's but its listener: stdio is
//     /dev/null, everything else is closed; the listener is close-on-exec in
//     the caller and closed there before StartBridge returns.
// The socket path is connected to afresh for each connection, nothing is
// parsed: the proxy is where every check is made. Forks; touches sockets.
#ifndef NP_EXEC_LAUNCHER_EGRESS_BRIDGE_H_
#define NP_EXEC_LAUNCHER_EGRESS_BRIDGE_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace np::egress {

struct BridgeProcess {
  pid_t pid = -1;
  uint16_t port = 0;  // the bound port (the one asked for, or the kernel's choice for 0)
};

inline constexpr int kMaxBridgeConnections = 256;

// Listens on 127.0.0.1:listen_port (0: any free port) and forks the bridge.
// Codes: egress-socket-path-too-long, egress-bridge-listen-failed,
// egress-bridge-fork-failed.
absl::StatusOr<BridgeProcess> StartBridge(uint16_t listen_port, const std::string& socket_path);

}  // namespace np::egress

#endif  // NP_EXEC_LAUNCHER_EGRESS_BRIDGE_H_
