// Mount sources pinned between np-exec's check and the runtime's mount.
//
// np-exec checks every bind source by its real path; a runtime that is handed
// the path resolves it again, and a sandboxed program that can rename a folder
// on the way (a project nested in another project: a slice worktree, a
// package of a monorepo) swaps it for a link in between. So the launcher
// opens each source once, after the checks, and holds what it opened
// (launcher/source_pins.h):
// - bubblewrap binds the descriptor (`--bind-fd`, `--ro-bind-fd`), so what is
//   mounted is what was opened;
// - docker and podman take only paths, so the sandbox's entry point is
//   np-exec's own static binary (`mount-check`, read-only at
//   kEgressSelfTarget): before the program exists it compares each mount
//   target's device and inode with what the launcher opened, and refuses
//   with `isolation-mount-source-unstable` (125) when one differs. A printed
//   plan, which carries no descriptor, checks the same way on every runtime.
// Pure: the pinning itself is injected.
#ifndef NP_EXEC_CORE_MOUNT_PINS_H_
#define NP_EXEC_CORE_MOUNT_PINS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace np {

// What the launcher opened for one source: its identity, and the descriptor
// a runtime that binds descriptors is handed (-1: none, check by identity).
struct SourcePin {
  int fd = -1;
  uint64_t dev = 0;
  uint64_t ino = 0;
  uint32_t type = 0;  // st_mode & S_IFMT of what was opened.
};

// Opens and checks `source` (a real path np-exec validated). Codes:
// `isolation-mount-source-unstable`, `isolation-mount-source-missing`.
using PinSourceFn = std::function<absl::StatusOr<SourcePin>(const std::string& source)>;

// One target the entry point checks inside before the program runs.
struct MountExpectation {
  std::string target;
  uint64_t dev = 0;
  uint64_t ino = 0;
  // On a remote engine (`--expect-ino`): `ino` on the project mount's own
  // device, `dev` unused.
  bool inode_only = false;
};

inline constexpr absl::string_view kMountCheckVerb = "mount-check";

// On an engine on another host, device numbers mean nothing here: the
// engine resolves every bind path on its own host, so what it mounts is
// proven there instead. The launcher writes a file of fresh random content
// into the project under a name nothing else uses (launcher/remote_check.h);
// the entry point finds exactly that content at the project's mount point
// (the project is the operator's, on storage both hosts see at the same
// path), and each pinned bind by its inode number on the project's file
// system as the engine host sees it (shared storage such as NFS keeps inode
// numbers). np-exec's own binary, bound by path from the engine host, proves
// it is this build by its GNU build ID.
struct RemoteCheck {
  std::string nonce_name;     // A file name in the project's root.
  std::string nonce;          // Its content: random hex; only its digest is in the argv.
  std::string self_build_id;  // np-exec's own GNU build ID, hex.
  // The launcher's descriptor of the file it wrote (-1: none): after a
  // failed run, whether the entry point consumed it (engine.cc).
  int file_fd = -1;
};

// The prefix of a name np-exec gives its nonce files; nothing else uses it.
inline constexpr absl::string_view kRemoteNoncePrefix = ".np-exec-remote-check-";

// {SELF, "mount-check", "--self-build-id", HEX, "--project-nonce", TARGET,
// NAME, SHA256(NONCE), "--expect-ino", TARGET, "INO", ..., "--"}: the remote
// form of MountCheckPrefix, with `project_target` the project's mount point.
// Only the nonce's digest is in the argv, which anyone on either host may
// read (`ps`, `docker inspect`): the file's content is the proof.
std::vector<std::string> RemoteMountCheckPrefix(const std::vector<MountExpectation>& expected,
                                                const RemoteCheck& check,
                                                const std::string& project_target);

// What the entry point reports when the project's mount point does not hold
// the nonce (`found` says what it found there): the engine's host mounted
// something else at that path (`isolation-engine-project-not-shared`).
absl::Status ProjectNotShared(absl::string_view target, absl::string_view found);

// The remote form's project check as mount-check parses it.
struct RemoteProjectCheck {
  std::string build_id;
  std::string target;
  std::string nonce_name;
  std::string nonce_digest;  // SHA-256 of the file's content, hex.
};

// Parses mount-check's arguments before "--": `--expect TARGET DEV:INO`
// entries, or the remote form (RemoteMountCheckPrefix). Code `usage`.
absl::Status ParseMountCheckOptions(const std::vector<std::string>& args,
                                    std::vector<MountExpectation>& expected,
                                    std::optional<RemoteProjectCheck>& remote);

// np-exec's binary on the engine host is not this build
// (`isolation-engine-np-exec-mismatch`).
absl::Status RemoteSelfMismatch(absl::string_view found);

// {SELF, "mount-check", "--expect", TARGET, "DEV:INO", ..., "--"}: what goes
// in front of the program (and of the egress entry point).
std::vector<std::string> MountCheckPrefix(const std::vector<MountExpectation>& expected);

// "DEV:INO" of one --expect. Code `usage`.
absl::StatusOr<MountExpectation> ParseMountExpectation(absl::string_view target,
                                                       absl::string_view identity);

// The error the entry point reports for a target that is not what was pinned.
absl::Status MountNotAsPinned(absl::string_view target);

}  // namespace np

#endif  // NP_EXEC_CORE_MOUNT_PINS_H_
