// The caller's account inside a sandbox, on the host side: a private
// per-spawn directory (mode 0700, mkdtemp, where the egress session puts its
// own: egress/session.h) holding the generated passwd and group files
// (core/passwd_view.h) that the plan binds read-only at /etc/passwd and
// /etc/group, removed when the spawn ends. Touches the filesystem.
#ifndef NP_EXEC_LAUNCHER_ACCOUNT_VIEW_H_
#define NP_EXEC_LAUNCHER_ACCOUNT_VIEW_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/settings.h"
#include "launcher/host.h"

namespace np {

class AccountView {
 public:
  // Writes the view for the caller of `host`. `from_host`: the sandbox shows
  // the host's /usr (bubblewrap), so the host's own files are the base;
  // otherwise a minimal base (root, nobody), since np-exec does not read the
  // image's files. Code `account-view-failed`.
  static absl::StatusOr<std::unique_ptr<AccountView>> Create(
      const HostFacts& host, bool from_host, const std::vector<std::string>& writable_roots);

  // Removes both files and the directory.
  ~AccountView();
  AccountView(const AccountView&) = delete;
  AccountView& operator=(const AccountView&) = delete;

  std::string passwd_path() const { return dir_ + "/passwd"; }
  std::string group_path() const { return dir_ + "/group"; }

 private:
  explicit AccountView(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

// The view a container spawn of `settings` needs: on the container tier,
// running as the caller (`user` null), outside a printed plan; nullptr
// otherwise.
absl::StatusOr<std::unique_ptr<AccountView>> MaybeAccountView(const Settings& settings,
                                                              const HostFacts& host);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_ACCOUNT_VIEW_H_
