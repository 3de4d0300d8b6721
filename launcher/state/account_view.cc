#include "launcher/state/account_view.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/container_argv.h"
#include "core/errors.h"
#include "core/git_identity.h"
#include "core/image_ref.h"
#include "core/passwd_view.h"
#include "core/paths.h"
#include "core/runtime.h"
#include "launcher/output.h"
#include "launcher/state/nofollow_path.h"

namespace np {
namespace {

constexpr size_t kMaxAccountFileBytes = 4 << 20;

absl::Status Failed(absl::string_view path, int err) {
  return MakeError(absl::StatusCode::kFailedPrecondition, "account-view-failed",
                   absl::StrCat("cannot write the sandbox's passwd and group view in ", path, ": ",
                                strerror(err)),
                   {{"path", path}});
}

// The host's account file, without following a link in its place; "" when
// it cannot be read.
std::string ReadAccountFile(const char* path) {
  SmallFile file = ReadSmallFileAt(AT_FDCWD, path, kMaxAccountFileBytes - 1);
  if (file.error != 0 || !S_ISREG(file.st.st_mode) || file.text.size() >= kMaxAccountFileBytes) {
    return "";
  }
  return std::move(file.text);
}

int WriteNew(const std::string& path, const std::string& text) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  int err = 0;
  errno = 0;
  if (!WriteAll(fd, text)) err = errno != 0 ? errno : EIO;  // A write of 0 bytes: EIO.
  // The umask may have narrowed it; the uid inside must read it.
  if (err == 0 && fchmod(fd, 0644) != 0) err = errno;
  close(fd);
  return err;
}

constexpr char kSpawns[] = "spawns";
constexpr char kImageAccounts[] = "image-accounts";
// Two capped texts as JSON (escapes, and U+FFFD for a byte that is not
// UTF-8, can triple a byte).
constexpr size_t kMaxImageRecordBytes = 6 * kMaxImageAccountBytes + 4096;

// A cached text back into a base: null is the minimal base; anything else
// passes ImageAccountBase again.
std::optional<std::string> CachedBase(const nlohmann::json& value, AccountFile file) {
  if (!value.is_string()) return std::nullopt;
  return ImageAccountBase(value.get<std::string>(), file);
}

nlohmann::json BaseToJson(const std::optional<std::string>& base) {
  return base.has_value() ? nlohmann::json(*base) : nlohmann::json(nullptr);
}

constexpr absl::string_view kPrintedPrefix = "printed-";

// A printed plan's view left by a sandbox-exec that was killed: no process
// holds its lock (AccountView keeps the directory flocked while it lives),
// and it is older than the moment between its mkdir and that lock.
bool IsStalePrintedView(int spawns, const std::string& name) {
  if (!absl::StartsWith(name, kPrintedPrefix)) return false;
  const int dir = OpenSubdirNoFollow(spawns, name.c_str());
  if (dir < 0) return false;
  struct stat st;
  const bool old = fstat(dir, &st) == 0 && time(nullptr) - st.st_ctime > kPrintedViewLockSeconds;
  const bool unheld = old && flock(dir, LOCK_EX | LOCK_NB) == 0;
  close(dir);
  return unheld;
}

// Removes the views of spawns whose np-exec is gone (a SIGKILL runs no
// destructor): entries "<pid>-XXXXXX" of `spawns` with no such process, and
// stale printed views; only the files np-exec writes, never following a link.
void RemoveStaleViews(int spawns) {
  const int fd = dup(spawns);
  DIR* dir = fd < 0 ? nullptr : fdopendir(fd);
  if (dir == nullptr) {
    if (fd >= 0) close(fd);
    return;
  }
  std::vector<std::string> stale;
  while (dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    const size_t dash = name.find('-');
    int pid = 0;
    if (IsStalePrintedView(spawns, name)) {
      stale.push_back(name);
      continue;
    }
    if (dash == std::string::npos || !absl::SimpleAtoi(name.substr(0, dash), &pid) || pid <= 0) {
      continue;
    }
    if (kill(pid, 0) != 0 && errno == ESRCH) stale.push_back(name);
  }
  closedir(dir);
  for (const std::string& name : stale) {
    const int view = OpenSubdirNoFollow(spawns, name.c_str());
    if (view < 0) continue;
    // Its np-exec is gone, but a process it handed the view to (a warm
    // sandbox's holder) still holds its lock: in use.
    if (flock(view, LOCK_EX | LOCK_NB) != 0) {
      close(view);
      continue;
    }
    unlinkat(view, "passwd", 0);
    unlinkat(view, "group", 0);
    unlinkat(view, "gitconfig", 0);
    close(view);
    unlinkat(spawns, name.c_str(), AT_REMOVEDIR);
  }
}

}  // namespace

ImageAccountBases CachedImageAccounts(const StateStore& store, const std::string& image_id,
                                      const ImageAccountsCopier& copy_out) {
  const std::string hex = ImageIdHex(image_id);
  if (hex.empty()) return {};
  absl::StatusOr<int> dir = store.OpenSubdir(kImageAccounts);
  if (!dir.ok()) return {};
  const std::string dir_path = JoinPath(store.dir(), kImageAccounts);
  const std::string name = hex + ".json";
  absl::StatusOr<std::optional<std::string>> text =
      store.ReadFileAt(*dir, dir_path, name, kMaxImageRecordBytes);
  if (text.ok() && text->has_value()) {
    const nlohmann::json record = nlohmann::json::parse(**text, nullptr, false);
    if (record.is_object() && record.value("image_id", "") == hex && record.contains("passwd") &&
        record.contains("group")) {
      close(*dir);
      return {CachedBase(record["passwd"], AccountFile::kPasswd),
              CachedBase(record["group"], AccountFile::kGroup)};
    }
  }
  std::optional<ImageAccountBases> copied = copy_out();
  if (copied.has_value()) {
    const nlohmann::json record = {{"image_id", hex},
                                   {"passwd", BaseToJson(copied->passwd)},
                                   {"group", BaseToJson(copied->group)}};
    // A record np-exec cannot write is asked for again by the next spawn.
    (void)store.WriteFileAt(*dir, dir_path, name,
                            record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  close(*dir);
  return copied.value_or(ImageAccountBases{});
}

AccountFiles ComposeAccountFiles(const HostFacts& host, bool from_host,
                                 const ImageAccountBases& image, const std::string& gitconfig) {
  const std::string passwd = ReadAccountFile("/etc/passwd");
  const std::string group = ReadAccountFile("/etc/group");
  const SandboxAccount account = AccountFor(host.uid, host.gid, passwd, group);
  // A file np-exec cannot read or use leaves the minimal base, never a view
  // without root.
  std::optional<std::string> passwd_base = image.passwd;
  std::optional<std::string> group_base = image.group;
  if (from_host) {
    passwd_base = passwd.empty() ? std::nullopt : std::optional<std::string>(passwd);
    group_base = group.empty() ? std::nullopt : std::optional<std::string>(group);
  }
  return {PasswdView(passwd_base.value_or(std::string(kMinimalPasswd)), account, kContainerHome),
          GroupView(group_base.value_or(std::string(kMinimalGroup)), account), gitconfig};
}

absl::StatusOr<std::unique_ptr<AccountView>> AccountView::Create(const StateStore& store,
                                                                 const AccountFiles& files,
                                                                 const std::string& dir) {
  absl::StatusOr<int> spawns = store.OpenSubdir(kSpawns);
  if (!spawns.ok()) return spawns.status();
  RemoveStaleViews(*spawns);
  // Exactly the planned name, and only if nothing is there.
  const int made = mkdirat(*spawns, BaseName(dir).c_str(), 0700);
  const int made_errno = errno;
  close(*spawns);
  if (made != 0) return Failed(dir, made_errno);
  std::unique_ptr<AccountView> view(new AccountView(dir));
  // Held while the view lives: a printed plan's view has no pid in its name,
  // and a later spawn removes it only once no process holds this.
  view->lock_fd_ = OpenSubdirNoFollow(AT_FDCWD, dir.c_str());
  if (view->lock_fd_ < 0 || flock(view->lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    return Failed(dir, errno);
  }
  int err = WriteNew(AccountPasswdPath(view->dir_), files.passwd);
  if (err == 0) err = WriteNew(AccountGroupPath(view->dir_), files.group);
  if (err == 0 && !files.gitconfig.empty()) {
    err = WriteNew(AccountGitConfigPath(view->dir_), files.gitconfig);
  }
  if (err != 0) return Failed(view->dir_, err);
  return view;
}

void AccountView::Abandon() {
  dir_.clear();
  if (lock_fd_ >= 0) close(lock_fd_);
  lock_fd_ = -1;
}

AccountView::~AccountView() {
  if (dir_.empty()) return;
  unlink(AccountPasswdPath(dir_).c_str());
  unlink(AccountGroupPath(dir_).c_str());
  unlink(AccountGitConfigPath(dir_).c_str());
  rmdir(dir_.c_str());
  if (lock_fd_ >= 0) close(lock_fd_);
}

std::string CallerGitConfig(const HostFacts& host) {
  // The caller's own files: a link (a dotfiles checkout) is followed.
  auto read_file = [](const std::string& path) -> std::string {
    if (path.empty()) return "";
    const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return "";
    std::string text;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= (1 << 20)) {
      char buffer[8192];
      ssize_t n;
      while ((n = read(fd, buffer, sizeof(buffer))) > 0 && text.size() <= (1 << 20)) {
        text.append(buffer, static_cast<size_t>(n));
      }
    }
    close(fd);
    return text.size() <= (1 << 20) ? text : "";
  };
  GitIdentity identity;
  const absl::string_view global = GetEnv(host.envp, "GIT_CONFIG_GLOBAL");
  if (!global.empty()) {
    identity = ParseGitIdentity(read_file(std::string(global)));
  } else {
    const std::string xdg = !host.xdg_config_home.empty() ? host.xdg_config_home
                            : !host.home.empty()          ? host.home + "/.config"
                                                          : "";
    if (!xdg.empty()) identity = ParseGitIdentity(read_file(xdg + "/git/config"));
    if (!host.home.empty())
      identity = ParseGitIdentity(read_file(host.home + "/.gitconfig"), identity);
  }
  return GitIdentityConfig(identity);
}

std::string PlannedAccountViewDir(const Settings& settings, const HostFacts& host, bool printed) {
  const ContainerConfig& container = settings.config.container;
  if (settings.resolved.tier != Tier::kContainer || settings.project_root.empty() ||
      container.user.kind != UserSpec::Kind::kCaller) {
    return "";
  }
  absl::StatusOr<std::string> store = HostStateStoreDir(host);
  if (!store.ok()) return "";
  uint32_t random = 0;
  if (getrandom(&random, sizeof(random), 0) != sizeof(random)) random = 0;
  if (printed) return absl::StrFormat("%s/%s/%s%08x", *store, kSpawns, kPrintedPrefix, random);
  return absl::StrFormat("%s/%s/%d-%08x", *store, kSpawns, host.pid, random);
}

bool IsPrintedAccountViewDir(const Settings& settings, const HostFacts& host,
                             const std::string& dir) {
  const std::string planned = PlannedAccountViewDir(settings, host, /*printed=*/true);
  if (planned.empty()) return false;
  const size_t slash = planned.rfind('/');
  if (dir.size() != planned.size() || dir.compare(0, slash + 1, planned, 0, slash + 1) != 0) {
    return false;
  }
  const std::string name = dir.substr(slash + 1);
  if (!absl::StartsWith(name, kPrintedPrefix)) return false;
  const std::string hex = name.substr(kPrintedPrefix.size());
  return std::all_of(hex.begin(), hex.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

namespace {

// The store a planned view's directory is in: <store>/spawns/<name>.
absl::StatusOr<StateStore> StoreOfView(const HostFacts& host, const std::string& dir) {
  const std::string spawns_path = dir.substr(0, dir.rfind('/'));
  return StateStore::Open(spawns_path.substr(0, spawns_path.rfind('/')), host.uid);
}

}  // namespace

absl::StatusOr<std::optional<AccountFiles>> MaybeAccountFiles(
    const Settings& settings, const SpawnPlan& plan, const HostFacts& host,
    const RuntimeDriver& driver, const Endpoint& endpoint, const std::string& dir,
    const std::string& image_id, const std::string& gitconfig) {
  if (dir.empty()) return std::optional<AccountFiles>();
  const RuntimeTraits& traits = TraitsOf(settings.config.container.runtime);
  ImageAccountBases image;
  if (!traits.program_from_host) {
    absl::StatusOr<StateStore> store = StoreOfView(host, dir);
    if (!store.ok()) return store.status();
    image = CachedImageAccounts(*store, image_id, [&plan, &host, &driver, &endpoint] {
      return driver.ImageAccounts(host, endpoint, plan.exec_path, plan.image, plan.container_name);
    });
  }
  return std::optional<AccountFiles>(
      ComposeAccountFiles(host, traits.program_from_host, image, gitconfig));
}

absl::StatusOr<std::unique_ptr<AccountView>> WriteAccountView(const HostFacts& host,
                                                              const AccountFiles& files,
                                                              const std::string& dir) {
  absl::StatusOr<StateStore> store = StoreOfView(host, dir);
  if (!store.ok()) return store.status();
  return AccountView::Create(*store, files, dir);
}

}  // namespace np
