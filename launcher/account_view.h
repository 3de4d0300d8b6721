// The caller's account inside a sandbox, on the host side: a private
// per-spawn directory (mode 0700) in the operator state store,
// `<store>/spawns/<pid>-XXXXXX/`, holding the generated passwd and group
// files (core/passwd_view.h) that the plan binds read-only at /etc/passwd and
// /etc/group, removed when the spawn ends; what a SIGKILLed np-exec left there
// is removed by the next spawn (its pid is gone). The store lies outside
// every project (the plan checks it is outside everything the sandbox can
// write). Touches the filesystem.
#ifndef NP_EXEC_LAUNCHER_ACCOUNT_VIEW_H_
#define NP_EXEC_LAUNCHER_ACCOUNT_VIEW_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/settings.h"
#include "launcher/host.h"

namespace np {

class AccountView {
 public:
  // Writes the view for the caller of `host` into the new directory `dir`
  // (PlannedAccountViewDir). `from_host`: the sandbox shows the host's /usr
  // (bubblewrap), so the host's own files are the base; otherwise a minimal
  // base (root, nobody), since np-exec does not read the image's files.
  // Codes: `account-view-failed`, the store's.
  static absl::StatusOr<std::unique_ptr<AccountView>> Create(const HostFacts& host, bool from_host,
                                                             const std::string& dir);

  // Removes both files and the directory.
  ~AccountView();
  AccountView(const AccountView&) = delete;
  AccountView& operator=(const AccountView&) = delete;

 private:
  explicit AccountView(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

// Where a container spawn of `settings` keeps its view, named before anything
// is made, so the plan can bind it and every error the plan or trust gives
// comes first: `<store>/spawns/<pid>-<random>`; "" when the spawn needs none
// (not the container tier, outside a project, `user` not null) or the store
// has no place.
std::string PlannedAccountViewDir(const Settings& settings, const HostFacts& host);

// The passwd and group files in a view directory.
inline std::string AccountPasswdPath(const std::string& dir) { return dir + "/passwd"; }
inline std::string AccountGroupPath(const std::string& dir) { return dir + "/group"; }

// Creates the planned view (`dir` from PlannedAccountViewDir) for a spawn of
// `settings`; nullptr when `dir` is empty.
absl::StatusOr<std::unique_ptr<AccountView>> MaybeAccountView(const Settings& settings,
                                                              const HostFacts& host,
                                                              const std::string& dir);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_ACCOUNT_VIEW_H_
