// egress-entry: the sandbox's entry point on network "allowlist" (issue 16).
//
// `np-exec egress-entry --port P --socket S -- PROGRAM ARGS...` runs inside
// the sandbox, from the read-only copy of np-exec's own static binary that
// the argv builders mount at /run/np-exec/np-exec, so it needs no shell and no
// libc in the image. It starts the bridge (127.0.0.1:P forwarded to the
// proxy's socket S, launcher/egress/bridge.h), then execs PROGRAM found on the
// sandbox's PATH, so the program keeps this process: its pid, stdio, signals
// and exit status. The bridge is the program's child and dies with it. The
// proxy variables were set by the runtime (core/egress_entry.h); the
// environment passes through unchanged.
#include "core/errors.h"
#include "launcher/egress/bridge.h"
#include "launcher/environment.h"
#include "launcher/exec.h"
#include "launcher/verbs.h"
#include "shim/find_real_program.h"

namespace np {

absl::StatusOr<Outcome> VerbEgressEntry(const CommandLine& cl, const HostFacts& host) {
  // Found before the bridge starts, so a missing program leaves nothing behind.
  absl::StatusOr<std::string> program =
      FindRealProgram(cl.program.front(), host.path, host.cwd, host.self, StatFile);
  if (!program.ok()) return program.status();
  absl::StatusOr<egress::BridgeProcess> bridge =
      egress::StartBridge(static_cast<uint16_t>(cl.egress_port), cl.egress_socket);
  if (!bridge.ok()) return bridge.status();
  absl::Status failed = ExecInPlace(*program, cl.program, EditEnvironment(host.envp, {}, {}));
  return failed.ok() ? absl::InternalError("exec returned") : failed;
}

}  // namespace np
