// mount-check: the sandbox's entry point that proves its mounts
// (core/mount_pins.h).
//
// `np-exec mount-check --expect TARGET DEV:INO ... -- PROGRAM ARGS...` runs
// inside the sandbox, from the read-only copy of np-exec's own static binary
// at /run/np-exec/np-exec, before anything of the program exists. Each
// TARGET must be the file or folder the launcher opened on the host (same
// device, same inode): a runtime that resolved a swapped path mounted
// something else there, and then nothing runs (`isolation-mount-source-unstable`,
// 125). Otherwise it execs PROGRAM found on the sandbox's PATH (the egress
// entry point included, which is this same binary), so the program keeps
// this process: its pid, stdio, signals and exit status.
#include <sys/stat.h>

#include "launcher/environment.h"
#include "launcher/exec.h"
#include "launcher/verbs.h"
#include "shim/find_real_program.h"

namespace np {

absl::StatusOr<Outcome> VerbMountCheck(const CommandLine& cl, const HostFacts& host) {
  for (const MountExpectation& mount : cl.mount_expectations) {
    struct stat st;
    if (stat(mount.target.c_str(), &st) != 0 || static_cast<uint64_t>(st.st_dev) != mount.dev ||
        static_cast<uint64_t>(st.st_ino) != mount.ino) {
      return MountNotAsPinned(mount.target);
    }
  }
  absl::StatusOr<std::string> program =
      FindRealProgram(cl.program.front(), host.path, host.cwd, FileId{}, StatFile);
  if (!program.ok()) return program.status();
  absl::Status failed = ExecInPlace(*program, cl.program, EditEnvironment(host.envp, {}, {}));
  return failed.ok() ? absl::InternalError("exec returned") : failed;
}

}  // namespace np
