// The launcher's half of the per-spawn check on an engine on another host
// (core/mount_pins.h RemoteCheck): a file of fresh random content written
// into the project under a name nothing else uses, held for the spawn and
// removed after it, and np-exec's own GNU build ID; the entry point's half
// (mount-check inside the container) verifies both there. Touches the file
// system.
#ifndef NP_EXEC_LAUNCHER_REMOTE_CHECK_H_
#define NP_EXEC_LAUNCHER_REMOTE_CHECK_H_

#include <string>

#include "absl/status/statusor.h"
#include "core/mount_pins.h"

namespace np {

// np-exec's own GNU build ID as hex, read from its loaded program headers;
// "" when the binary carries none.
std::string SelfBuildId();

class RemoteNonce {
 public:
  // Writes the nonce file in the project folder `project_fd` (a descriptor
  // np-exec opened, or -1 to open `project_root`): a new file (O_EXCL, never
  // through a link), readable by the sandbox's user. Codes:
  // `isolation-engine-remote-unsupported` (no build ID), `spawn-failed`.
  static absl::StatusOr<RemoteNonce> Create(int project_fd, const std::string& project_root);

  RemoteNonce(RemoteNonce&& other) noexcept;
  RemoteNonce& operator=(RemoteNonce&&) = delete;
  RemoteNonce(const RemoteNonce&) = delete;
  // Removes the file (the link itself, whatever replaced it).
  ~RemoteNonce();

  const RemoteCheck& check() const { return check_; }

 private:
  RemoteNonce(int dir_fd, RemoteCheck check) : dir_fd_(dir_fd), check_(std::move(check)) {}
  int dir_fd_ = -1;
  RemoteCheck check_;
};

// The entry point's check (mount-check inside the container): its own build
// ID is `build_id`, and `project_target`/`name` is a regular file (not a link)
// on the project mount's own device whose content's SHA-256 is
// `nonce_digest`; then the file is removed. Codes:
// `isolation-engine-np-exec-mismatch`, `isolation-engine-project-not-shared`.
absl::Status VerifyRemoteProject(const std::string& build_id, const std::string& project_target,
                                 const std::string& name, const std::string& nonce_digest);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_REMOTE_CHECK_H_
