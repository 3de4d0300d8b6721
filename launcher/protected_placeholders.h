// The placeholders of a spawn's protected binds (core/protected_paths.h):
// created before the runtime starts, removed when the project's last
// concurrent spawn has ended.
//
// Every spawn of a project holds a shared flock on the project's spawn lock in
// the state store for as long as it runs. Removing a placeholder on the host
// would silently detach the read-only mount another running sandbox has on it
// (Linux lazily unmounts a mount point unlinked in another mount namespace),
// so placeholders are removed only by a spawn that then gets the lock
// exclusively without waiting: no other spawn of the project runs. A node is
// removed only while it still looks like a placeholder (IsPlaceholder) and,
// for a directory, is empty; what a host tool wrote into one stays. Touches
// the filesystem.
#ifndef NP_EXEC_LAUNCHER_PROTECTED_PLACEHOLDERS_H_
#define NP_EXEC_LAUNCHER_PROTECTED_PLACEHOLDERS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/protected_paths.h"
#include "launcher/state/state_store.h"
#include "nlohmann/json.hpp"

namespace np {

// The project's spawn lock, held shared. A spawn takes it before it plans,
// so no finishing spawn can remove a placeholder the plan already saw (and
// bubblewrap already holds a descriptor of) before this spawn's runtime has
// bound it; ProtectedPlaceholders then keeps it until the spawn ends.
class SpawnLock {
 public:
  // Opens the store (StateStoreDir of `xdg_state_home` and `home`, owned by
  // `uid`) and takes the shared lock of `project_real` (SpawnLockName),
  // waiting while a finishing spawn removes placeholders. `git`: the
  // project's git as the spawn read it (null: read here). Codes: the store's.
  static absl::StatusOr<SpawnLock> Acquire(absl::string_view xdg_state_home, absl::string_view home,
                                           uid_t uid, const std::string& project_real,
                                           const ProjectGit* git = nullptr);
  // The same in an open store.
  static absl::StatusOr<SpawnLock> Acquire(const StateStore& store, const std::string& project_real,
                                           const ProjectGit* git = nullptr);

  SpawnLock(SpawnLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  SpawnLock& operator=(SpawnLock&&) = delete;
  SpawnLock(const SpawnLock&) = delete;
  SpawnLock& operator=(const SpawnLock&) = delete;
  ~SpawnLock();

  // Hands the held descriptor over; -1 afterwards.
  int Release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  explicit SpawnLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

class ProtectedPlaceholders {
 public:
  // Takes the shared spawn lock of `project_real`, then makes sure every
  // read-only node of `binds` exists, creating each missing one as a
  // placeholder (also those the plan saw as present, which a finishing spawn
  // may have removed since). Codes: `isolation-protected-path-unsafe` (a node
  // is now a link or cannot be created; what was created is removed again),
  // the store's codes for the lock. `project_fd`: the opened project
  // folder (not consumed; -1: none): the nodes below the project are made
  // and removed through it, never by the project's path, which another
  // program may have pointed elsewhere meanwhile.
  static absl::StatusOr<ProtectedPlaceholders> Create(const StateStore& store,
                                                      const std::string& project_real,
                                                      const std::vector<ProtectedBind>& binds,
                                                      int project_fd = -1);
  // The same under a lock the spawn already holds (taken before its plan).
  static absl::StatusOr<ProtectedPlaceholders> Create(SpawnLock lock,
                                                      const std::string& project_real,
                                                      const std::vector<ProtectedBind>& binds,
                                                      int project_fd = -1);

  ProtectedPlaceholders(ProtectedPlaceholders&& other) noexcept;
  ProtectedPlaceholders& operator=(ProtectedPlaceholders&&) = delete;
  ProtectedPlaceholders(const ProtectedPlaceholders&) = delete;
  ProtectedPlaceholders& operator=(const ProtectedPlaceholders&) = delete;
  ~ProtectedPlaceholders();  // Finish().

  // Call when the spawn has ended (the runtime client exited). When no other
  // spawn of the project holds the lock, removes every placeholder among the
  // read-only nodes, this spawn's and any left by others; then releases the
  // lock. Returns how many nodes it removed. Idempotent.
  int Finish();

  // Another process took them over with a copy of the lock's descriptor (a
  // warm sandbox's holder, launcher/warm/holder.h): closes this process's
  // descriptors, never touching the lock or a node. Idempotent.
  void Abandon();

  // The nodes this call created (relative paths), in bind order.
  const std::vector<std::string>& created() const { return created_; }

  // The spawn lock's descriptor (shared), for the watchdog to inherit: a
  // copy keeps the lock held, and after a killed np-exec the watchdog removes
  // the placeholders through it (RemovePlaceholdersIfAlone). -1 once finished.
  int lock_fd() const { return lock_fd_; }
  // The opened project folder they were made through (-1: by path), for the
  // watchdog to remove them through too.
  int project_fd() const { return project_fd_; }
  const std::vector<ProtectedBind>& binds() const { return binds_; }

 private:
  ProtectedPlaceholders(std::string project_real, std::vector<ProtectedBind> binds, int lock_fd,
                        int project_fd)
      : project_real_(std::move(project_real)),
        binds_(std::move(binds)),
        lock_fd_(lock_fd),
        project_fd_(project_fd) {}

  std::string project_real_;
  std::vector<ProtectedBind> binds_;
  std::vector<std::string> created_;
  int lock_fd_ = -1;
  int project_fd_ = -1;  // Owned; -1: by path.
};

// sandbox-exec's one call: takes the spawn lock (SpawnLock::Acquire) and
// creates the placeholders of `binds`. Any store error refuses the spawn:
// without the lock np-exec could not know when removing a placeholder is safe.
absl::StatusOr<ProtectedPlaceholders> CreatePlaceholdersForSpawn(
    absl::string_view xdg_state_home, absl::string_view home, uid_t uid,
    const std::string& project_real, const std::vector<ProtectedBind>& binds, int project_fd = -1);

// What Finish does, for any holder of a descriptor of the spawn lock (the
// watchdog of a killed np-exec): when the lock can be had exclusively without
// waiting, removes every read-only node of `binds` below `project_real` that
// still looks like a placeholder. Keeps the lock (the caller closes it).
// Returns how many nodes it removed.
int RemovePlaceholdersIfAlone(int lock_fd, const std::string& project_real,
                              const std::vector<ProtectedBind>& binds, int project_fd = -1);

// The read-only binds as the watchdog's argument, and back (entries that are
// not clean relative paths, or whose root is not absolute, are dropped).
nlohmann::json PlaceholderBindsToJson(const std::vector<ProtectedBind>& binds);
std::vector<ProtectedBind> PlaceholderBindsFromJson(const nlohmann::json& list);

// The spawn lock's name in the store for a project: one per repository
// (its common directory) when the project has a `.git`, else per project.
std::string SpawnLockName(const std::string& project_real, const ProjectGit* git = nullptr);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_PROTECTED_PLACEHOLDERS_H_
