// egress-entry: the sandbox's entry point on network "allowlist".
//
// `np-exec egress-entry --port P --socket S -- PROGRAM ARGS...` runs inside
// the sandbox, from the read-only copy of np-exec's own static binary that
// the argv builders mount at /run/np-exec/np-exec, so it needs no shell and no
// libc in the image. It starts the bridge (127.0.0.1:P forwarded to the
// proxy's socket S, launcher/egress/bridge.h), then execs PROGRAM found on the
// sandbox's PATH, so the program keeps this process: its pid, stdio, signals
// and exit status. The bridge is the program's child and dies with it. The
// proxy variables were set by the runtime (core/egress_entry.h); the
// environment passes through unchanged, but for node's proxy warning, which
// NODE_OPTIONS silences when the sandbox's node accepts that
// (NodeAcceptsDisableWarning: one `node --version` per spawn, only when PATH
// has a node).
#include "core/egress_entry.h"
#include "core/errors.h"
#include "launcher/egress/bridge.h"
#include "launcher/environment.h"
#include "launcher/exec.h"
#include "launcher/host.h"
#include "launcher/subprocess.h"
#include "launcher/verbs.h"
#include "shim/find_real_program.h"

namespace np {
namespace {

// The NODE_OPTIONS the program gets: the environment's with node's proxy
// warning silenced, or nothing to change.
std::vector<std::string> QuietNodeProxyWarning(const HostFacts& host) {
  if (GetEnv(host.envp, "NODE_USE_ENV_PROXY").empty()) return {};
  absl::StatusOr<std::string> node =
      FindRealProgram("node", host.path, host.cwd, host.self, StatFile);
  if (!node.ok() || node->empty() || node->front() != '/') return {};
  // Asked without the variables that would make it warn or fail.
  std::vector<std::string> env =
      EditEnvironment(host.envp, {}, {"NODE_OPTIONS", "NODE_USE_ENV_PROXY"});
  std::vector<char*> envp;
  for (std::string& entry : env) envp.push_back(entry.data());
  envp.push_back(nullptr);
  absl::StatusOr<CaptureResult> version =
      RunAndCapture({*node, "--version"}, envp.data(), 5000, 64);
  if (!version.ok() || version->exit_code != 0 || !NodeAcceptsDisableWarning(version->out)) {
    return {};
  }
  return {"NODE_OPTIONS=" + WithNodeProxyWarningSilenced(GetEnv(host.envp, "NODE_OPTIONS"))};
}

}  // namespace

absl::StatusOr<Outcome> VerbEgressEntry(const CommandLine& cl, const HostFacts& host) {
  // Found before the bridge starts, so a missing program leaves nothing behind.
  absl::StatusOr<std::string> program =
      FindRealProgram(cl.program.front(), host.path, host.cwd, host.self, StatFile);
  if (!program.ok()) return program.status();
  const std::vector<std::string> set = QuietNodeProxyWarning(host);
  absl::StatusOr<egress::BridgeProcess> bridge =
      egress::StartBridge(static_cast<uint16_t>(cl.egress_port), cl.egress_socket);
  if (!bridge.ok()) return bridge.status();
  absl::Status failed = ExecInPlace(*program, cl.program, EditEnvironment(host.envp, set, {}));
  return failed.ok() ? absl::InternalError("exec returned") : failed;
}

}  // namespace np
