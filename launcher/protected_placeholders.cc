#include "launcher/protected_placeholders.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "core/git_layout.h"
#include "core/paths.h"
#include "core/sha256.h"
#include "launcher/state/nofollow_path.h"

namespace np {
namespace {

absl::Status CannotCreate(const std::string& path, absl::string_view why) {
  return MakeError(absl::StatusCode::kFailedPrecondition, "isolation-protected-path-unsafe",
                   absl::StrCat("cannot protect ", path, ": ", why,
                                "; nothing ran. Replace it with a plain file or directory, or "
                                "remove it"),
                   {{"path", path}});
}

// The node's directory, opened without following a link (nofollow_path.h),
// and the node's name in it: np-exec writes and removes placeholders through
// it, so a project renamed and replaced by a link meanwhile (by a sandbox of
// an enclosing project) never lets np-exec write where the link points.
struct NodeAt {
  int parent = -1;
  bool owns_parent = true;  // false: `parent` is the caller's project descriptor
  std::string name;
  ~NodeAt() {
    if (parent >= 0 && owns_parent) close(parent);
  }
};

bool OpenNode(const std::string& path, NodeAt* node) {
  const size_t slash = path.rfind('/');
  node->name = path.substr(slash + 1);
  node->parent = OpenDirNoFollow(slash == 0 ? "/" : absl::string_view(path).substr(0, slash));
  return node->parent >= 0;
}

// A bind's node: below the opened project folder's descriptor when there is
// one (`project_fd`, -1: none) and the bind lies in the project, so a path
// that names another folder meanwhile is never where np-exec writes; else by
// its host path, each component without following a link.
bool OpenBindNode(FoldersBelow& folders, const std::string& project_real, const ProtectedBind& bind,
                  NodeAt* node) {
  const int project_fd = folders.dir();
  if (project_fd < 0 || !bind.root.empty()) return OpenNode(BindHostPath(project_real, bind), node);
  const size_t slash = bind.relative.rfind('/');
  if (slash == std::string::npos) {
    // In the project folder itself: its descriptor, not a copy of it.
    node->name = bind.relative;
    node->parent = project_fd;
    node->owns_parent = false;
    return true;
  }
  node->name = bind.relative.substr(slash + 1);
  node->parent = folders.Open(absl::string_view(bind.relative).substr(0, slash));
  node->owns_parent = false;
  return node->parent >= 0;
}

// Creates one placeholder; false with `why` when the path is taken or fails.
bool MakePlaceholder(const NodeAt& node, const ProtectedBind& bind, std::string* why) {
  const char* name = node.name.c_str();
  const PlaceholderKind kind = PlaceholderKindOf(bind);
  if (kind == PlaceholderKind::kSocket) {
    // A socket node without a listener; mode 0 whatever the umask.
    if (mknodat(node.parent, name, S_IFSOCK | kPlaceholderSocketMode, 0) != 0) {
      *why = strerror(errno);
      return false;
    }
    return true;
  }
  if (kind == PlaceholderKind::kDirectory) {
    if (mkdirat(node.parent, name, kPlaceholderDirMode) != 0) {
      *why = strerror(errno);
      return false;
    }
    // mkdir's mode is cut by the umask; the placeholder's mode is its mark.
    const int dir = OpenSubdirNoFollow(node.parent, name);
    if (dir < 0 || fchmod(dir, kPlaceholderDirMode) != 0) *why = strerror(errno);
    if (dir >= 0) close(dir);
    return why->empty();
  }
  const int fd = openat(node.parent, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                        kPlaceholderFileMode);
  if (fd < 0) {
    *why = strerror(errno);
    return false;
  }
  const absl::string_view content = PlaceholderContent(bind.relative);
  bool ok = fchmod(fd, kPlaceholderFileMode) == 0 &&
            write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
  if (!ok) *why = strerror(errno);
  close(fd);
  return ok;
}

}  // namespace

std::string SpawnLockName(const std::string& project_real, const ProjectGit* git_read) {
  // One lock per repository: the worktrees of one share the placeholders in
  // its common directory (git_mounts.h), and the main worktree's `.git/...`
  // placeholders are the same nodes. A project outside git locks alone.
  absl::StatusOr<GitLayout> git = OwnGitLayout(project_real, git_read);
  const std::string& key =
      git.ok() && git->kind != GitLayout::Kind::kNone ? git->common_dir : project_real;
  return absl::StrCat("spawn-", Sha256Hex(key));
}

absl::StatusOr<SpawnLock> SpawnLock::Acquire(const StateStore& store,
                                             const std::string& project_real,
                                             const ProjectGit* git) {
  absl::StatusOr<int> fd = store.OpenLockFile(SpawnLockName(project_real, git));
  if (!fd.ok()) return fd.status();
  SpawnLock lock(*fd);
  // Waits while a finishing spawn removes placeholders, so what it removes is
  // re-created before this spawn's runtime binds it.
  while (flock(*fd, LOCK_SH) != 0) {
    if (errno != EINTR) {
      return MakeError(absl::StatusCode::kUnavailable, "state-store-unwritable",
                       absl::StrCat("cannot lock ", store.dir(), ": ", strerror(errno)));
    }
  }
  return lock;
}

absl::StatusOr<SpawnLock> SpawnLock::Acquire(absl::string_view xdg_state_home,
                                             absl::string_view home, uid_t uid,
                                             const std::string& project_real,
                                             const ProjectGit* git) {
  absl::StatusOr<std::string> dir = StateStoreDir(xdg_state_home, home);
  if (!dir.ok()) return dir.status();
  absl::StatusOr<StateStore> store = StateStore::Open(*dir, uid);
  if (!store.ok()) return store.status();
  // The lock's descriptor outlives the store's.
  return Acquire(*store, project_real, git);
}

SpawnLock::~SpawnLock() {
  if (fd_ >= 0) close(fd_);
}

absl::StatusOr<ProtectedPlaceholders> ProtectedPlaceholders::Create(
    const StateStore& store, const std::string& project_real,
    const std::vector<ProtectedBind>& binds, int project_fd) {
  absl::StatusOr<SpawnLock> lock = SpawnLock::Acquire(store, project_real);
  if (!lock.ok()) return lock.status();
  return Create(*std::move(lock), project_real, binds, project_fd);
}

absl::StatusOr<ProtectedPlaceholders> ProtectedPlaceholders::Create(
    SpawnLock lock, const std::string& project_real, const std::vector<ProtectedBind>& binds,
    int project_fd) {
  const int own_project_fd = project_fd < 0 ? -1 : fcntl(project_fd, F_DUPFD_CLOEXEC, 0);
  if (project_fd >= 0 && own_project_fd < 0) {
    return CannotCreate(project_real, absl::StrCat("the project's descriptor: ", strerror(errno)));
  }
  ProtectedPlaceholders placeholders(project_real, binds, lock.Release(), own_project_fd);
  FoldersBelow folders(own_project_fd);
  for (const ProtectedBind& bind : binds) {
    if (bind.writable) continue;
    absl::Status valid = ValidateProtectedBind(bind);
    if (!valid.ok()) return valid;
    const std::string path = BindHostPath(project_real, bind);
    NodeAt node;
    if (!OpenBindNode(folders, project_real, bind, &node)) {
      return CannotCreate(path, errno == ENOTDIR || errno == ELOOP
                                    ? "a symbolic link or a file is on the way"
                                    : strerror(errno));
    }
    // Twice at most: concurrent spawns hold the lock shared, so another may
    // create the same placeholder between the lstat and the create; what it
    // created is then judged like any node that was already there.
    for (int attempt = 0;; ++attempt) {
      struct stat st;
      if (fstatat(node.parent, node.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (S_ISLNK(st.st_mode)) return CannotCreate(path, "it became a symbolic link");
        if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) && !IsPlaceholder(st, bind.relative)) {
          return CannotCreate(path, "it is neither a file nor a directory");
        }
        break;
      }
      if (errno != ENOENT) return CannotCreate(path, strerror(errno));
      std::string why;
      if (MakePlaceholder(node, bind, &why)) {
        placeholders.created_.push_back(bind.relative);
        break;
      }
      if (errno != EEXIST || attempt > 0) return CannotCreate(path, why);
    }
  }
  return placeholders;
}

absl::StatusOr<ProtectedPlaceholders> CreatePlaceholdersForSpawn(
    absl::string_view xdg_state_home, absl::string_view home, uid_t uid,
    const std::string& project_real, const std::vector<ProtectedBind>& binds, int project_fd) {
  absl::StatusOr<SpawnLock> lock = SpawnLock::Acquire(xdg_state_home, home, uid, project_real);
  if (!lock.ok()) return lock.status();
  return ProtectedPlaceholders::Create(*std::move(lock), project_real, binds, project_fd);
}

ProtectedPlaceholders::ProtectedPlaceholders(ProtectedPlaceholders&& other) noexcept
    : project_real_(std::move(other.project_real_)),
      binds_(std::move(other.binds_)),
      created_(std::move(other.created_)),
      lock_fd_(other.lock_fd_),
      project_fd_(other.project_fd_) {
  other.lock_fd_ = -1;
  other.project_fd_ = -1;
}

ProtectedPlaceholders::~ProtectedPlaceholders() { Finish(); }

int ProtectedPlaceholders::Finish() {
  if (lock_fd_ < 0) return 0;
  const int removed = RemovePlaceholdersIfAlone(lock_fd_, project_real_, binds_, project_fd_);
  close(lock_fd_);
  lock_fd_ = -1;
  if (project_fd_ >= 0) close(project_fd_);
  project_fd_ = -1;
  return removed;
}

void ProtectedPlaceholders::Abandon() {
  // close() never releases a flock another descriptor of it still holds.
  if (lock_fd_ >= 0) close(lock_fd_);
  if (project_fd_ >= 0) close(project_fd_);
  lock_fd_ = -1;
  project_fd_ = -1;
}

int RemovePlaceholdersIfAlone(int lock_fd, const std::string& project_real,
                              const std::vector<ProtectedBind>& binds, int project_fd) {
  int removed = 0;
  // Converting the shared lock drops it first; failing to get it exclusive
  // means another spawn of the project runs, and the last one cleans up.
  if (flock(lock_fd, LOCK_EX | LOCK_NB) != 0) return 0;
  // Deepest first, so a placeholder inside another goes before it.
  FoldersBelow folders(project_fd);
  for (auto it = binds.rbegin(); it != binds.rend(); ++it) {
    if (it->writable) continue;
    NodeAt node;
    if (!OpenBindNode(folders, project_real, *it, &node)) continue;
    struct stat st;
    if (fstatat(node.parent, node.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !IsPlaceholder(st, it->relative)) {
      continue;
    }
    // rmdir fails on a directory a host tool filled meanwhile, which stays.
    const int rc = unlinkat(node.parent, node.name.c_str(), S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0);
    if (rc == 0) ++removed;
  }
  return removed;
}

nlohmann::json PlaceholderBindsToJson(const std::vector<ProtectedBind>& binds) {
  nlohmann::json list = nlohmann::json::array();
  for (const ProtectedBind& bind : binds) {
    if (bind.writable) continue;
    list.push_back({{"relative", bind.relative},
                    {"root", bind.root},
                    {"directory", bind.directory},
                    {"placeholder", bind.placeholder}});
  }
  return list;
}

std::vector<ProtectedBind> PlaceholderBindsFromJson(const nlohmann::json& list) {
  std::vector<ProtectedBind> binds;
  if (!list.is_array()) return binds;
  for (const nlohmann::json& item : list) {
    if (!item.is_object()) continue;
    ProtectedBind bind;
    bind.relative = item.value("relative", "");
    bind.root = item.value("root", "");
    bind.directory = item.value("directory", false);
    bind.placeholder = item.value("placeholder", false);
    if (!ValidateProtectedBind(bind).ok()) continue;
    if (!bind.root.empty() && (bind.root.front() != '/' || HasDotDot(bind.root))) continue;
    binds.push_back(std::move(bind));
  }
  return binds;
}

}  // namespace np
