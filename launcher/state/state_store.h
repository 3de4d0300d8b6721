// The operator state store: what np-exec remembers per project, outside every
// project and every sandbox.
//
// `$XDG_STATE_HOME/np-exec/` (default `~/.local/state/np-exec/`), a directory
// of mode 0700 owned by the caller, holds one record per project (trust.h's
// TrustRecord as JSON), named by the SHA-256 of the project's key. The key is
// the git common directory (plus the project's path inside its worktree) when
// the project is in a git repository, so every worktree of one repository
// shares one record; else the project's real path. Each record names its key
// and is checked against it.
//
// Records are replaced atomically (a temporary file, fsync, rename, fsync of
// the directory) under an exclusive flock on the record's lock file, so
// concurrent spawns never lose or tear an update. The store fails closed: a
// store or record that is a symbolic link, not owned by the caller, open to
// others, unreadable or corrupt is `state-store-invalid`, never "no record".
// Host facts (XDG_STATE_HOME, HOME, uid) come in as arguments. Touches the
// filesystem.
#ifndef NP_EXEC_LAUNCHER_STATE_STATE_STORE_H_
#define NP_EXEC_LAUNCHER_STATE_STATE_STORE_H_

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/git_layout.h"
#include "core/trust.h"
#include "launcher/host.h"

namespace np {

// Records larger than this are corrupt (`state-store-invalid`).
inline constexpr size_t kMaxRecordBytes = 64 * 1024;

// `$XDG_STATE_HOME/np-exec` when XDG_STATE_HOME is an absolute path (the XDG
// spec ignores a relative one), else `$HOME/.local/state/np-exec`. Code
// `state-store-unavailable` when neither gives an absolute path.
absl::StatusOr<std::string> StateStoreDir(absl::string_view xdg_state_home, absl::string_view home);

// The key of `project_real` by its path alone: what ProjectStoreKey gives
// a project outside a repository, and where the ratchet of a project inside
// one is kept as well (trust_gate.h), so a program that makes its `.git`
// read as no repository (HEAD removed) does not leave the ratchet behind.
std::string ProjectPathKey(absl::string_view project_real);

// The store key of the project at `project_real` (a real path): a JSON array
// ["git", common dir, path of the project inside its worktree] or ["path",
// project]. Code `project-git-invalid` (git_layout.h).
absl::StatusOr<std::string> ProjectStoreKey(absl::string_view project_real,
                                            const ProjectGit* git = nullptr);

class StateStore {
 public:
  // Opens the store at `dir`, creating it (and missing parents) with mode
  // 0700. Codes: `state-store-invalid` (a link, not a directory, not owned by
  // `uid`, group or others have access), `state-store-unwritable` (cannot be
  // created or opened).
  static absl::StatusOr<StateStore> Open(const std::string& dir, uid_t uid);

  StateStore(StateStore&& other) noexcept;
  StateStore& operator=(StateStore&& other) noexcept;
  StateStore(const StateStore&) = delete;
  StateStore& operator=(const StateStore&) = delete;
  ~StateStore();

  // The record of `key`; nullopt when there is none. `state-store-invalid`
  // for a record that is a link, not a regular file, not the caller's,
  // larger than kMaxRecordBytes, not valid JSON, or another key's.
  absl::StatusOr<std::optional<TrustRecord>> Read(absl::string_view key) const;

  // Reads the record under the exclusive lock, calls `update`, and writes
  // what it returns when that differs. Returns the record as stored. Codes:
  // Read's, `state-store-unwritable`.
  absl::StatusOr<TrustRecord> Update(
      absl::string_view key,
      const std::function<TrustRecord(const std::optional<TrustRecord>&)>& update);

  // Opens (creating, mode 0600) the lock file `<name>.lock` in the store and
  // returns its descriptor (close-on-exec) for the caller to flock. `name` is
  // a file name without a slash. Codes: `state-store-invalid` (a link,
  // another owner), `state-store-unwritable`.
  absl::StatusOr<int> OpenLockFile(absl::string_view name) const;

  // The store's subdirectory `name` (no slash), created with mode 0700 when
  // missing and opened without following a link; it must be the caller's and
  // closed to others, as the store itself. The descriptor (close-on-exec) is
  // the caller's to close. Codes: `state-store-invalid`,
  // `state-store-unwritable`.
  absl::StatusOr<int> OpenSubdir(absl::string_view name) const;

  // The file `name` in the store's directory `dir` (dir_fd() or an
  // OpenSubdir's, at `dir_path`), opened without following a link; nullopt
  // when there is none. `state-store-invalid` for a file that is a link, not
  // a regular file, not the caller's, writable by others, linked twice, or
  // larger than `max_bytes`.
  absl::StatusOr<std::optional<std::string>> ReadFileAt(int dir, const std::string& dir_path,
                                                        absl::string_view name,
                                                        size_t max_bytes) const;

  // Replaces the file `name` in `dir` with `text` (mode 0600) atomically: a
  // temporary file, fsync, rename over the name (a link there is replaced,
  // never followed), fsync of the directory. Code `state-store-unwritable`.
  absl::Status WriteFileAt(int dir, const std::string& dir_path, absl::string_view name,
                           absl::string_view text) const;

  // The file name (without extension) a key's record and lock use.
  static std::string FileStem(absl::string_view key);

  const std::string& dir() const { return dir_; }
  // The store's directory, opened without following links (agent_home.h
  // keeps the persistent homes below it).
  int dir_fd() const { return dir_fd_; }
  uid_t uid() const { return uid_; }

 private:
  StateStore(std::string dir, int dir_fd, uid_t uid)
      : dir_(std::move(dir)), dir_fd_(dir_fd), uid_(uid) {}

  std::string dir_;
  int dir_fd_ = -1;
  uid_t uid_ = 0;
};

// StateStoreDir of the caller of `host` (its XDG_STATE_HOME and HOME).
absl::StatusOr<std::string> HostStateStoreDir(const HostFacts& host);

// The caller's store, opened: HostStateStoreDir, then StateStore::Open.
absl::StatusOr<StateStore> OpenStateStore(const HostFacts& host);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_STATE_STATE_STORE_H_
