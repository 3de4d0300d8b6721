// How a sandbox on `network: "allowlist"` reaches np-exec's egress proxy
// (design.md section 8): the fixed places and values both argv
// builders (container_argv, bwrap_argv) add, so docker, podman and bubblewrap
// set up the same thing.
//
// Inside, np-exec's own static binary is bind-mounted read-only at
// kEgressSelfTarget and is the sandbox's entry point (EgressEntryPrefix: the
// verb, the port, the endpoint's path, then the program): it starts the
// bridge on 127.0.0.1:PORT (launcher/egress/bridge.h), which forwards to the
// proxy's unix-domain endpoint bind-mounted at kEgressSocketTarget, and then
// execs the program, which
// keeps its pid, stdio, signals and exit status; the bridge is the program's
// child and dies with it. The proxy variables are np-exec's constants, not the
// caller's values, so they may be given as NAME=value. Pure.
#ifndef NP_EXEC_CORE_EGRESS_ENTRY_H_
#define NP_EXEC_CORE_EGRESS_ENTRY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace np {

inline constexpr absl::string_view kEgressEntryVerb = "egress-entry";
inline constexpr absl::string_view kEgressSelfTarget = "/run/np-exec/np-exec";
inline constexpr absl::string_view kEgressSocketTarget = "/run/np-exec/egress.sock";
// The sandbox has a network namespace of its own, so a fixed port collides
// with nothing outside it; 3128 is the customary proxy port.
inline constexpr uint16_t kEgressBridgePort = 3128;

// HTTPS_PROXY, HTTP_PROXY, https_proxy, http_proxy (http://127.0.0.1:PORT) and
// NODE_USE_ENV_PROXY=1, as "NAME=value".
const std::vector<std::string>& EgressProxyEnvironment();

// What goes in front of the program: the entry point and its arguments, up to
// and including "--".
std::vector<std::string> EgressEntryPrefix();

// NODE_USE_ENV_PROXY makes node (22.21 and later) route fetch through the
// proxy with undici's EnvHttpProxyAgent, which prints "[UNDICI-EHPA] Warning:
// EnvHttpProxyAgent is experimental" at every start. The entry point silences
// that one warning, no other, with node's --disable-warning in NODE_OPTIONS;
// but node before 20.11 (and 21 before 21.3) refuses that option in
// NODE_OPTIONS and would not start at all, so it is added only when the
// sandbox's `node` says (`node --version`, e.g. "v22.23.5") it accepts it.
inline constexpr absl::string_view kNodeProxyWarningOption = "--disable-warning=UNDICI-EHPA";
bool NodeAcceptsDisableWarning(absl::string_view version_output);

// NODE_OPTIONS `current` with kNodeProxyWarningOption added (once).
std::string WithNodeProxyWarningSilenced(absl::string_view current);

}  // namespace np

#endif  // NP_EXEC_CORE_EGRESS_ENTRY_H_
