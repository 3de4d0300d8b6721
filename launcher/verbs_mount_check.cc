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
//
// On an engine on another host (the remote form, mount_pins.h RemoteCheck)
// it first proves its own build and the project's nonce, then each target by
// its inode number on the project mount's device.
#include <sys/stat.h>

#include <optional>

#include "launcher/environment.h"
#include "launcher/exec.h"
#include "launcher/remote_check.h"
#include "launcher/verbs.h"
#include "shim/find_real_program.h"

namespace np {

namespace {

// Every target is what was pinned: by device and inode, or on a remote
// engine by inode on the project mount's device (`project_dev`).
absl::Status CheckTargets(const std::vector<MountExpectation>& expected,
                          std::optional<uint64_t> project_dev) {
  for (const MountExpectation& mount : expected) {
    struct stat st;
    if (stat(mount.target.c_str(), &st) != 0) return MountNotAsPinned(mount.target);
    const uint64_t dev = mount.inode_only ? project_dev.value_or(0) : mount.dev;
    if ((mount.inode_only && !project_dev.has_value()) || static_cast<uint64_t>(st.st_dev) != dev ||
        static_cast<uint64_t>(st.st_ino) != mount.ino) {
      return MountNotAsPinned(mount.target);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Outcome> VerbMountCheck(const CommandLine& cl, const HostFacts& host) {
  std::optional<uint64_t> project_dev;
  if (cl.remote_project.has_value()) {
    const RemoteProjectCheck& remote = *cl.remote_project;
    absl::Status shared =
        VerifyRemoteProject(remote.build_id, remote.target, remote.nonce_name, remote.nonce_digest);
    if (!shared.ok()) return shared;
    struct stat st;
    if (stat(remote.target.c_str(), &st) == 0) project_dev = st.st_dev;
  }
  absl::Status pinned = CheckTargets(cl.mount_expectations, project_dev);
  if (!pinned.ok()) return pinned;
  absl::StatusOr<std::string> program =
      FindRealProgram(cl.program.front(), host.path, host.cwd, FileId{}, StatFile);
  if (!program.ok()) return program.status();
  absl::Status failed = ExecInPlace(*program, cl.program, EditEnvironment(host.envp, {}, {}));
  return failed.ok() ? absl::InternalError("exec returned") : failed;
}

}  // namespace np
