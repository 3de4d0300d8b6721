#include "launcher/state/state_store.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "core/git_layout.h"
#include "core/paths.h"
#include "core/sha256.h"
#include "launcher/environment.h"
#include "launcher/state/nofollow_path.h"

namespace np {
namespace {

absl::Status Invalid(absl::string_view path, absl::string_view why) {
  return MakeError(absl::StatusCode::kFailedPrecondition, "state-store-invalid",
                   absl::StrCat("np-exec's state store ", path, " ", why,
                                "; np-exec refuses the container tier rather than guess what it "
                                "remembered. Fix or remove it, then run `np-exec trust` in the "
                                "project"),
                   {{"path", path}});
}

absl::Status Unwritable(absl::string_view path, int err) {
  return MakeError(absl::StatusCode::kUnavailable, "state-store-unwritable",
                   absl::StrCat("cannot write np-exec's state store ", path, ": ", strerror(err)),
                   {{"path", path}});
}

// mkdir -p with mode 0700 for what it creates (the XDG spec's mode for state).
absl::Status MakeDirs(const std::string& dir) {
  if (mkdir(dir.c_str(), 0700) == 0 || errno == EEXIST) return absl::OkStatus();
  if (errno != ENOENT) return Unwritable(dir, errno);
  const size_t slash = dir.rfind('/');
  if (slash == 0 || slash == std::string::npos) return Unwritable(dir, ENOENT);
  absl::Status parent = MakeDirs(dir.substr(0, slash));
  if (!parent.ok()) return parent;
  if (mkdir(dir.c_str(), 0700) == 0 || errno == EEXIST) return absl::OkStatus();
  return Unwritable(dir, errno);
}

// A file of the store the caller may trust: regular, its own, at most one
// link. No link at all is a record an updater renamed the next one over after
// this reader opened it: the previous complete record, not a damaged one.
absl::Status CheckOwnStat(const struct stat& st, uid_t uid, const std::string& path) {
  if (!S_ISREG(st.st_mode)) return Invalid(path, "is not a regular file");
  if (st.st_uid != uid) return Invalid(path, absl::StrCat("belongs to uid ", st.st_uid));
  if (st.st_nlink > 1) return Invalid(path, "has more than one link");
  if ((st.st_mode & 022) != 0) return Invalid(path, "is writable by others");
  return absl::OkStatus();
}

absl::Status CheckOwnFile(int fd, uid_t uid, const std::string& path) {
  struct stat st;
  if (fstat(fd, &st) != 0)
    return Invalid(path, absl::StrCat("cannot be examined: ", strerror(errno)));
  return CheckOwnStat(st, uid, path);
}

}  // namespace

absl::StatusOr<std::string> StateStoreDir(absl::string_view xdg_state_home,
                                          absl::string_view home) {
  for (absl::string_view base : {xdg_state_home, home}) {
    if (base.empty() || !CheckAbsolutePath(base, "x").ok() || HasDotDot(base)) continue;
    const std::string normal = NormalizePath(base);
    return base == xdg_state_home ? JoinPath(normal, "np-exec")
                                  : JoinPath(normal, ".local/state/np-exec");
  }
  return MakeError(absl::StatusCode::kFailedPrecondition, "state-store-unavailable",
                   "np-exec's state store needs XDG_STATE_HOME or HOME set to an absolute path");
}

absl::StatusOr<std::string> HostStateStoreDir(const HostFacts& host) {
  return StateStoreDir(GetEnv(host.envp, "XDG_STATE_HOME"), host.home);
}

absl::StatusOr<StateStore> OpenStateStore(const HostFacts& host) {
  absl::StatusOr<std::string> dir = HostStateStoreDir(host);
  if (!dir.ok()) return dir.status();
  return StateStore::Open(*dir, host.uid);
}

std::string ProjectPathKey(absl::string_view project_real) {
  return nlohmann::json::array({"path", project_real})
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

absl::StatusOr<std::string> ProjectStoreKey(absl::string_view project_real,
                                            const ProjectGit* git_read) {
  absl::StatusOr<GitLayout> git = RepositoryGitLayout(project_real, git_read);
  if (!git.ok()) return git.status();
  // A `.git` file is anyone's to write before np-exec sees the project (an
  // unpacked archive, a copied folder): `gitdir: /home/u/trusted/.git` would
  // give the project the trusted one's record (its trust, its persistent
  // home). Only a linked worktree git itself made, whose git directory lies
  // in the common directory's worktrees/ and points back at this `.git`,
  // shares its repository's key; any other `.git` file is keyed by path.
  // The same holds for a `.git` directory: only the repository's own (not a
  // link to another's git directory, and with no `commondir` of its own,
  // which git writes into worktrees' git directories only) is keyed by it.
  const bool shares_repository =
      git->kind == GitLayout::Kind::kDirectory
          ? git->git_dir == JoinPath(git->top, ".git") && git->common_dir == git->git_dir
          : git->git_dir != git->common_dir &&
                ParentPath(git->git_dir) == JoinPath(git->common_dir, "worktrees") &&
                git->backlink == JoinPath(git->top, ".git");
  if (git->kind == GitLayout::Kind::kNone || !shares_repository)
    return ProjectPathKey(project_real);
  absl::string_view inside = project_real.substr(git->top.size());
  if (!inside.empty() && inside.front() == '/') inside.remove_prefix(1);
  return nlohmann::json::array({"git", git->common_dir, inside})
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

absl::StatusOr<StateStore> StateStore::Open(const std::string& dir, uid_t uid) {
  absl::Status absolute = CheckAbsolutePath(dir, "state-store-invalid");
  if (!absolute.ok()) return absolute;
  // Opened first and made only when missing: the store exists on every spawn
  // but a machine's first, and a mkdir that finds it costs a path walk.
  int fd = OpenSubdirNoFollow(AT_FDCWD, dir.c_str());
  if (fd < 0 && errno == ENOENT) {
    absl::Status made = MakeDirs(dir);
    if (!made.ok()) return made;
    fd = OpenSubdirNoFollow(AT_FDCWD, dir.c_str());
  }
  if (fd < 0) {
    if (errno == ELOOP || errno == ENOTDIR) return Invalid(dir, "is a link or not a directory");
    return Unwritable(dir, errno);
  }
  StateStore store(dir, fd, uid);
  struct stat st;
  if (fstat(fd, &st) != 0) return Invalid(dir, "cannot be examined");
  if (st.st_uid != uid) return Invalid(dir, absl::StrCat("belongs to uid ", st.st_uid));
  if ((st.st_mode & 077) != 0) return Invalid(dir, "is open to group or others (want mode 0700)");
  return store;
}

StateStore::StateStore(StateStore&& other) noexcept
    : dir_(std::move(other.dir_)), dir_fd_(other.dir_fd_), uid_(other.uid_) {
  other.dir_fd_ = -1;
}

StateStore& StateStore::operator=(StateStore&& other) noexcept {
  if (this != &other) {
    if (dir_fd_ >= 0) close(dir_fd_);
    dir_ = std::move(other.dir_);
    dir_fd_ = other.dir_fd_;
    uid_ = other.uid_;
    other.dir_fd_ = -1;
  }
  return *this;
}

StateStore::~StateStore() {
  if (dir_fd_ >= 0) close(dir_fd_);
}

std::string StateStore::FileStem(absl::string_view key) { return Sha256Hex(key); }

absl::StatusOr<std::optional<TrustRecord>> StateStore::Read(absl::string_view key) const {
  const std::string name = FileStem(key) + ".json";
  const std::string path = JoinPath(dir_, name);
  absl::StatusOr<std::optional<std::string>> text =
      ReadFileAt(dir_fd_, dir_, name, kMaxRecordBytes);
  if (!text.ok()) return text.status();
  if (!text->has_value()) return std::optional<TrustRecord>();
  nlohmann::json value = nlohmann::json::parse(**text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return Invalid(path, "is not valid JSON");
  absl::StatusOr<TrustRecord> record = TrustRecordFromJson(value, key);
  if (!record.ok()) return record.status();
  return std::optional<TrustRecord>(*std::move(record));
}

absl::StatusOr<std::optional<std::string>> StateStore::ReadFileAt(int dir,
                                                                  const std::string& dir_path,
                                                                  absl::string_view name,
                                                                  size_t max_bytes) const {
  const std::string file(name);
  const std::string path = JoinPath(dir_path, file);
  SmallFile read = ReadSmallFileAt(dir, file.c_str(), max_bytes);
  if (read.error == ENOENT) return std::optional<std::string>();
  if (read.error == ELOOP) return Invalid(path, "is a symbolic link");
  if (read.error != 0) return Invalid(path, absl::StrCat("cannot be read: ", strerror(read.error)));
  absl::Status own = CheckOwnStat(read.st, uid_, path);
  if (!own.ok()) return own;
  std::string text = std::move(read.text);
  if (text.size() > max_bytes) return Invalid(path, "is too large");
  return std::optional<std::string>(std::move(text));
}

absl::StatusOr<int> StateStore::OpenSubdir(absl::string_view name) const {
  const std::string sub(name);
  const std::string path = JoinPath(dir_, sub);
  if (sub.empty() || sub.find('/') != std::string::npos || sub.find('\0') != std::string::npos) {
    return Invalid(dir_, "was asked for a directory with a bad name");
  }
  // Opened first, made only when missing (as the store itself is).
  int fd = OpenSubdirNoFollow(dir_fd_, sub.c_str());
  if (fd < 0 && errno == ENOENT) {
    if (mkdirat(dir_fd_, sub.c_str(), 0700) != 0 && errno != EEXIST) return Unwritable(path, errno);
    fd = OpenSubdirNoFollow(dir_fd_, sub.c_str());
  }
  if (fd < 0) {
    if (errno == ELOOP || errno == ENOTDIR) return Invalid(path, "is a link or not a directory");
    return Unwritable(path, errno);
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_uid != uid_ || (st.st_mode & 077) != 0) {
    close(fd);
    return Invalid(path, "is not yours alone (want mode 0700, owned by you)");
  }
  return fd;
}

absl::Status StateStore::WriteFileAt(int dir, const std::string& dir_path, absl::string_view name,
                                     absl::string_view text) const {
  static std::atomic<unsigned> counter{0};
  const std::string file(name);
  const std::string tmp = absl::StrCat(file, ".tmp-", getpid(), "-", counter++);
  const int fd =
      openat(dir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Unwritable(JoinPath(dir_path, tmp), errno);
  size_t done = 0;
  int err = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : EIO;
      break;
    }
    done += static_cast<size_t>(n);
  }
  // The data reaches the disk before the name does, so a crash leaves the
  // old file or the new one, never a torn one.
  if (err == 0 && fsync(fd) != 0) err = errno;
  if (close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && renameat(dir, tmp.c_str(), dir, file.c_str()) != 0) err = errno;
  if (err != 0) {
    unlinkat(dir, tmp.c_str(), 0);
    return Unwritable(JoinPath(dir_path, file), err);
  }
  if (fsync(dir) != 0) return Unwritable(dir_path, errno);
  return absl::OkStatus();
}

absl::StatusOr<int> StateStore::OpenLockFile(absl::string_view name) const {
  if (name.empty() || name.find('/') != absl::string_view::npos ||
      name.find('\0') != absl::string_view::npos) {
    return Invalid(dir_, "was asked for a lock with a bad name");
  }
  const std::string file = absl::StrCat(name, ".lock");
  const std::string path = JoinPath(dir_, file);
  const int fd =
      openat(dir_fd_, file.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
  if (fd < 0) {
    if (errno == ELOOP) return Invalid(path, "is a symbolic link");
    return Unwritable(path, errno);
  }
  absl::Status own = CheckOwnFile(fd, uid_, path);
  if (!own.ok()) {
    close(fd);
    return own;
  }
  return fd;
}

absl::StatusOr<TrustRecord> StateStore::Update(
    absl::string_view key,
    const std::function<TrustRecord(const std::optional<TrustRecord>&)>& update) {
  const std::string stem = FileStem(key);
  absl::StatusOr<int> lock = OpenLockFile(stem);
  if (!lock.ok()) return lock.status();
  // Held until close: every updater of this record waits here, so each one
  // reads what the previous one wrote.
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{*lock};
  while (flock(*lock, LOCK_EX) != 0) {
    if (errno != EINTR) return Unwritable(JoinPath(dir_, stem + ".lock"), errno);
  }
  absl::StatusOr<std::optional<TrustRecord>> current = Read(key);
  if (!current.ok()) return current.status();
  TrustRecord next = update(*current);
  next.key = std::string(key);
  if (current->has_value() && **current == next) return next;

  const std::string text =
      TrustRecordToJson(next).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  absl::Status written = WriteFileAt(dir_fd_, dir_, stem + ".json", text);
  if (!written.ok()) return written;
  return next;
}

}  // namespace np
