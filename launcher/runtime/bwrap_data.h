// The caller's account view handed to bubblewrap as data: each file of the
// view (launcher/state/account_view.h) in a memfd of np-exec's, which
// bubblewrap copies into the sandbox's own tmpfs and binds read-only
// (--ro-bind-data), in place of the argv's bind of the file from the store.
// Nothing is written to the store or removed after, and every sandbox reads
// an inode of its own: a lease or an inotify watch one sandbox puts on its
// /etc/passwd reaches no other spawn.
#ifndef NP_EXEC_LAUNCHER_RUNTIME_BWRAP_DATA_H_
#define NP_EXEC_LAUNCHER_RUNTIME_BWRAP_DATA_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/plan.h"
#include "launcher/state/account_view.h"

namespace np {

class BwrapAccountData {
 public:
  // One memfd per file of `files` (an empty gitconfig has none), each under
  // the path the argv binds it from in the view directory `dir`. Code:
  // `account-view-failed`.
  static absl::StatusOr<std::unique_ptr<BwrapAccountData>> Create(const AccountFiles& files,
                                                                  const std::string& dir);
  ~BwrapAccountData();
  BwrapAccountData(const BwrapAccountData&) = delete;
  BwrapAccountData& operator=(const BwrapAccountData&) = delete;

  // What the plan hands bubblewrap (SpawnPlan::data_files); the descriptors
  // stay this object's.
  const std::vector<DataFile>& files() const { return files_; }

 private:
  BwrapAccountData() = default;
  std::vector<DataFile> files_;
};

// Rewrites each `--ro-bind SOURCE DEST` of `argv` whose SOURCE is one of
// `files` into `--perms 0644 --ro-bind-data FD DEST`, and adds the
// descriptors to `keep_fds`. Every file must be bound exactly once: code
// `spawn-failed` otherwise (nothing runs).
absl::Status UseDataFiles(std::vector<std::string>& argv, const std::vector<DataFile>& files,
                          std::vector<int>& keep_fds);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_RUNTIME_BWRAP_DATA_H_
