// The caller's account inside a sandbox, on the host side: a private
// per-spawn directory (mode 0700) in the operator state store,
// `<store>/spawns/<pid>-XXXXXX/`, holding the generated passwd and group
// files (core/passwd_view.h) that the plan binds read-only at /etc/passwd and
// /etc/group, removed when the spawn ends; what a SIGKILLed np-exec left there
// is removed by the next spawn (its pid is gone). The store lies outside
// every project (the plan checks it is outside everything the sandbox can
// write).
//
// The base of the view: on bubblewrap the host's own files; on docker and
// podman the image's own, which the driver reads out of the image
// (RuntimeDriver::ImageAccounts) the
// first time a spawn meets its content ID and kept in
// `<store>/image-accounts/<id>.json`, so a spawn with a cached image reads
// one small file; a tag moved to another image has another ID. Touches the
// filesystem; a cache miss runs the runtime's client.
#ifndef NP_EXEC_LAUNCHER_STATE_ACCOUNT_VIEW_H_
#define NP_EXEC_LAUNCHER_STATE_ACCOUNT_VIEW_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "core/plan.h"
#include "core/settings.h"
#include "launcher/host.h"
#include "launcher/runtime/driver.h"
#include "launcher/state/state_store.h"

namespace np {

// The files of a view, composed before anything is written: a warm spawn
// handed to a running sandbox keys on them and writes none.
struct AccountFiles {
  std::string passwd;
  std::string group;
  std::string gitconfig;  // "": none is written.
};

// The view for the caller of `host`. `from_host`: the sandbox shows the
// host's /usr (bubblewrap), so the host's own files are the base; otherwise
// `image`'s (each unusable one: the minimal base, root and nobody).
// `gitconfig`: the caller's git identity file (CallerGitConfig).
AccountFiles ComposeAccountFiles(const HostFacts& host, bool from_host,
                                 const ImageAccountBases& image, const std::string& gitconfig);

class AccountView {
 public:
  // Writes `files` into the new directory `dir` (PlannedAccountViewDir),
  // which lies in `store`'s `spawns` directory. Codes:
  // `account-view-failed`, the store's.
  static absl::StatusOr<std::unique_ptr<AccountView>> Create(const StateStore& store,
                                                             const AccountFiles& files,
                                                             const std::string& dir);

  // Removes both files and the directory.
  ~AccountView();
  // Another process (a warm sandbox's holder) keeps the view: this one only
  // closes its descriptor and removes nothing.
  void Abandon();
  AccountView(const AccountView&) = delete;
  AccountView& operator=(const AccountView&) = delete;

 private:
  explicit AccountView(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
  int lock_fd_ = -1;  // The directory, flocked while the view lives.
};

// Where a container spawn of `settings` keeps its view, named before anything
// is made, so the plan can bind it and every error the plan or trust gives
// comes first: `<store>/spawns/<pid>-<random>`; "" when the spawn needs none
// (not the container tier, outside a project, `user` not null) or the store
// has no place. A printed plan's view (`wrap`), made later by sandbox-exec in
// another process, is `<store>/spawns/printed-<random>`: removed when its run
// ends, or (after a kill) by a later spawn once no process holds its lock and
// it is older than kPrintedViewLockSeconds.
std::string PlannedAccountViewDir(const Settings& settings, const HostFacts& host,
                                  bool printed = false);
inline constexpr int kPrintedViewLockSeconds = 2;

// Whether `dir` is a printed plan's view directory in the caller's own state
// store (PlannedAccountViewDir's printed form), for sandbox-exec, which is
// given it on its command line.
bool IsPrintedAccountViewDir(const Settings& settings, const HostFacts& host,
                             const std::string& dir);

// The passwd and group files in a view directory.
inline std::string AccountPasswdPath(const std::string& dir) { return dir + "/passwd"; }
inline std::string AccountGroupPath(const std::string& dir) { return dir + "/group"; }
inline std::string AccountGitConfigPath(const std::string& dir) { return dir + "/gitconfig"; }

// The caller's git identity file for the sandbox (core/git_identity.h), from
// their global git configuration as `git config --global` reads it:
// GIT_CONFIG_GLOBAL alone when set, else $XDG_CONFIG_HOME/git/config (or
// ~/.config/git/config) then ~/.gitconfig; "" when it names no identity. A
// file that cannot be read, or is larger than 1 MiB, is skipped.
std::string CallerGitConfig(const HostFacts& host);

// Copies an image's passwd and group out of it; nullopt when it cannot be
// told (never cached).
using ImageAccountsCopier = std::function<std::optional<ImageAccountBases>()>;

// The bases of the image whose content ID is `image_id`: the store's record
// `image-accounts/<ImageIdHex>.json` when it holds this ID, else what
// `copy_out` finds, then recorded (atomically; a link there is replaced, never
// followed). A record that is a link, not the caller's, open to others, too
// large, corrupt or of another ID is no record: the cache only ever holds
// what the image holds, and every text passes ImageAccountBase again on the
// way out. An ID that is no sha256 ID, or a store np-exec cannot use, gets
// the minimal bases without a copy-out (nothing could remember it, and a
// copy-out per spawn costs a container each time).
ImageAccountBases CachedImageAccounts(const StateStore& store, const std::string& image_id,
                                      const ImageAccountsCopier& copy_out);

// Composes the planned view (`dir` from PlannedAccountViewDir) for the spawn
// `plan` of `settings`, whose probe named the image's content ID `image_id`
// (RuntimeDriver::ProbeForSpawn; "" when unknown: the minimal base); the
// image's own accounts come from `driver` (RuntimeDriver::ImageAccounts).
// nullopt when `dir` is empty. Codes: the store's.
absl::StatusOr<std::optional<AccountFiles>> MaybeAccountFiles(
    const Settings& settings, const SpawnPlan& plan, const HostFacts& host,
    const RuntimeDriver& driver, const Endpoint& endpoint, const std::string& dir,
    const std::string& image_id, const std::string& gitconfig = "");

// Writes composed files at the planned `dir` (AccountView::Create in the
// store `dir` lies in).
absl::StatusOr<std::unique_ptr<AccountView>> WriteAccountView(const HostFacts& host,
                                                              const AccountFiles& files,
                                                              const std::string& dir);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_STATE_ACCOUNT_VIEW_H_
