#include "launcher/runtime/bwrap_etc_view.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/bwrap_argv.h"
#include "core/errors.h"
#include "core/sha256.h"
#include "launcher/state/nofollow_path.h"

namespace np {
namespace {

constexpr char kViewDir[] = "etc-view";
constexpr char kCurrent[] = "current";
constexpr char kManifestHeader[] = "np-exec etc view 1";
// Bounds on what is copied: the selected files are small, and a directory
// that grew past these is not what the sandbox's /etc is meant to hold.
constexpr size_t kMaxFileBytes = 16 << 20;
constexpr int kMaxEntries = 20000;
constexpr int kMaxDepth = 8;
constexpr size_t kMaxManifestBytes = 4 << 20;

absl::Status Failed(absl::string_view what, absl::string_view path, int err = 0) {
  return MakeError(absl::StatusCode::kFailedPrecondition, "etc-view-failed",
                   absl::StrCat("cannot prepare the sandbox's /etc: ", what, " ", path,
                                err != 0 ? absl::StrCat(": ", strerror(err)) : ""),
                   {{"path", std::string(path)}});
}

// One line of the manifest: what a file or directory of the host was when
// copied. Kinds: F file, D directory, L a top-level link itself, A absent.
std::string Identity(char kind, const std::string& path, const struct stat& st) {
  return absl::StrCat(std::string(1, kind), "\t", path, "\t", st.st_dev, "\t", st.st_ino, "\t",
                      st.st_mode, "\t", st.st_size, "\t", st.st_mtim.tv_sec, ".",
                      st.st_mtim.tv_nsec, "\t", st.st_ctim.tv_sec, ".", st.st_ctim.tv_nsec);
}

// Builds one copy into the directory `root_fd`, appending to `manifest`.
class Copier {
 public:
  Copier(int root_fd, unsigned dir_mode, std::string& manifest)
      : root_fd_(root_fd), dir_mode_(dir_mode), manifest_(manifest) {}

  // A top-level entry of SandboxEtcFiles: followed when it is a link, as
  // bubblewrap's --ro-bind-try followed it; absent is recorded as absent.
  absl::Status CopyTopLevel(const std::string& path) {
    struct stat lst;
    if (lstat(path.c_str(), &lst) != 0) {
      if (errno != ENOENT) return Failed("cannot inspect", path, errno);
      manifest_ += absl::StrCat("A\t", path, "\n");
      return absl::OkStatus();
    }
    std::string source = path;
    if (S_ISLNK(lst.st_mode)) {
      manifest_ += Identity('L', path, lst) + "\n";
      char real[PATH_MAX];
      if (realpath(path.c_str(), real) == nullptr) {
        if (errno == ENOENT) return absl::OkStatus();  // A dangling link binds nothing.
        return Failed("cannot resolve", path, errno);
      }
      source = real;
    }
    // The place inside the copy: the path below /etc, its parents made.
    const std::string relative = path.substr(std::string("/etc/").size());
    int parent = dup(root_fd_);
    std::vector<absl::string_view> parts = absl::StrSplit(relative, '/');
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      const std::string name(parts[i]);
      if (mkdirat(parent, name.c_str(), 0700) != 0 && errno != EEXIST) {
        close(parent);
        return Failed("cannot create", name, errno);
      }
      int next = OpenSubdirNoFollow(parent, name.c_str());
      close(parent);
      if (next < 0) return Failed("cannot open", name, errno);
      // As bubblewrap would have made it for the per-file binds.
      fchmod(next, dir_mode_);
      parent = next;
    }
    absl::Status copied = CopyNode(source, parent, std::string(parts.back()), 0);
    close(parent);
    return copied;
  }

 private:
  absl::Status CopyNode(const std::string& source, int dest_dir, const std::string& name,
                        int depth) {
    if (++entries_ > kMaxEntries || depth > kMaxDepth) return Failed("too many entries in", source);
    struct stat st;
    if (lstat(source.c_str(), &st) != 0) return Failed("cannot inspect", source, errno);
    if (S_ISLNK(st.st_mode)) {
      // Below a copied directory a link stays a link: a change to it changes
      // its directory, whose identity the manifest holds.
      char target[PATH_MAX];
      ssize_t n = readlink(source.c_str(), target, sizeof(target) - 1);
      if (n < 0) return Failed("cannot read the link", source, errno);
      target[n] = '\0';
      if (symlinkat(target, dest_dir, name.c_str()) != 0)
        return Failed("cannot copy", source, errno);
      return absl::OkStatus();
    }
    if (S_ISREG(st.st_mode)) return CopyFile(source, dest_dir, name);
    if (!S_ISDIR(st.st_mode))
      return absl::OkStatus();  // No devices, sockets or FIFOs in /etc's files.
    manifest_ += Identity('D', source, st) + "\n";
    if (mkdirat(dest_dir, name.c_str(), 0700) != 0 && errno != EEXIST) {
      return Failed("cannot create", name, errno);
    }
    int to = OpenSubdirNoFollow(dest_dir, name.c_str());
    if (to < 0) return Failed("cannot open", name, errno);
    // The directory's own permission bits, whatever the umask.
    if (fchmod(to, st.st_mode & 0777) != 0) {
      close(to);
      return Failed("cannot set the mode of the copy of", source, errno);
    }
    DIR* dir = opendir(source.c_str());
    if (dir == nullptr) {
      close(to);
      return Failed("cannot list", source, errno);
    }
    std::vector<std::string> names;
    while (dirent* entry = readdir(dir)) {
      const std::string child = entry->d_name;
      if (child != "." && child != "..") names.push_back(child);
    }
    closedir(dir);
    std::sort(names.begin(), names.end());
    absl::Status status;
    for (const std::string& child : names) {
      status = CopyNode(absl::StrCat(source, "/", child), to, child, depth + 1);
      if (!status.ok()) break;
    }
    close(to);
    return status;
  }

  absl::Status CopyFile(const std::string& source, int dest_dir, const std::string& name) {
    int from = open(source.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (from < 0) return Failed("cannot read", source, errno);
    struct stat before;
    if (fstat(from, &before) != 0 || !S_ISREG(before.st_mode) ||
        static_cast<size_t>(before.st_size) > kMaxFileBytes) {
      close(from);
      return Failed("not a small regular file:", source);
    }
    std::string content;
    char buffer[65536];
    ssize_t n;
    while ((n = read(from, buffer, sizeof(buffer))) > 0)
      content.append(buffer, static_cast<size_t>(n));
    struct stat after;
    const bool stable = n == 0 && fstat(from, &after) == 0 && after.st_size == before.st_size &&
                        after.st_mtim.tv_nsec == before.st_mtim.tv_nsec &&
                        after.st_mtim.tv_sec == before.st_mtim.tv_sec &&
                        content.size() == static_cast<size_t>(before.st_size);
    close(from);
    if (!stable) return Failed("changed while it was copied:", source);
    // The file's own permission bits, set-id and sticky bits dropped.
    int to =
        openat(dest_dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (to < 0) return Failed("cannot create the copy of", source, errno);
    size_t written = 0;
    while (written < content.size()) {
      ssize_t w = write(to, content.data() + written, content.size() - written);
      if (w <= 0) break;
      written += static_cast<size_t>(w);
    }
    const bool ok = written == content.size() && fchmod(to, before.st_mode & 0777) == 0;
    close(to);
    if (!ok) return Failed("cannot write the copy of", source, errno);
    manifest_ += Identity('F', source, before) + "\n";
    return absl::OkStatus();
  }

  int root_fd_;
  unsigned dir_mode_;
  std::string& manifest_;
  int entries_ = 0;
};

// The manifest's first entry: the mode of the directories made for /etc.
std::string ModeLine(unsigned dir_mode) { return absl::StrCat("M\t", dir_mode); }

// True when every line of `manifest` (after the header and the view's name)
// still describes the host: the same identity, or still absent.
bool ManifestHolds(const std::vector<absl::string_view>& lines) {
  for (size_t i = 3; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    std::vector<std::string> fields = absl::StrSplit(lines[i], '\t');
    if (fields.size() < 2 || fields[0].size() != 1) return false;
    struct stat st;
    const int rc = lstat(fields[1].c_str(), &st);
    if (fields[0] == "A") {
      if (rc == 0 || errno != ENOENT) return false;
      continue;
    }
    if (rc != 0 || Identity(fields[0][0], fields[1], st) != lines[i]) return false;
  }
  return true;
}

// Reads `current` in the view directory: the caller's own regular file.
std::string ReadCurrent(int dir_fd, uid_t uid) {
  SmallFile file = ReadSmallFileAt(dir_fd, kCurrent, kMaxManifestBytes);
  const struct stat& st = file.st;
  if (file.error != 0 || !S_ISREG(st.st_mode) || st.st_uid != uid || (st.st_mode & 022) != 0 ||
      file.text.size() > kMaxManifestBytes) {
    return "";
  }
  return std::move(file.text);
}

// The name of the view `current` describes when it still holds and the view
// is the caller's directory; "" otherwise. `named` is the name `current`
// gives, valid or not.
std::string ReusableView(int dir_fd, uid_t uid, unsigned dir_mode, std::string& named) {
  const std::string text = ReadCurrent(dir_fd, uid);
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  if (lines.size() < 4 || lines[0] != kManifestHeader) return "";
  const std::string name(lines[1]);
  if (name.rfind("v-", 0) != 0 || name.find('/') != std::string::npos) return "";
  named = name;
  if (lines[2] != ModeLine(dir_mode)) return "";
  struct stat st;
  if (fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
      st.st_uid != uid || (st.st_mode & 022) != 0) {
    return "";
  }
  return ManifestHolds(lines) ? name : "";
}

// Removes the tree `name` below `dir_fd` (entries the copier made: files,
// links and directories).
void RemoveTree(int dir_fd, const std::string& name, int depth = 0) {
  if (depth > kMaxDepth + 2) return;
  int fd = OpenSubdirNoFollow(dir_fd, name.c_str());
  if (fd >= 0) {
    DIR* dir = fdopendir(fd);
    if (dir != nullptr) {
      std::vector<std::pair<std::string, bool>> children;
      while (dirent* entry = readdir(dir)) {
        const std::string child = entry->d_name;
        if (child == "." || child == "..") continue;
        bool is_dir = entry->d_type == DT_DIR;
        struct stat st;
        if (entry->d_type == DT_UNKNOWN &&
            fstatat(dirfd(dir), child.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
          is_dir = S_ISDIR(st.st_mode);
        }
        children.push_back({child, is_dir});
      }
      for (const auto& [child, is_dir] : children) {
        if (is_dir) {
          RemoveTree(dirfd(dir), child, depth + 1);
        } else {
          unlinkat(dirfd(dir), child.c_str(), 0);
        }
      }
      closedir(dir);
    } else {
      close(fd);
    }
  }
  unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR);
}

// Removes the copies other than `keep` replaced more than kEtcViewKeepSeconds ago.
void RemoveStaleViews(int dir_fd, const std::string& keep) {
  int fd = dup(dir_fd);
  DIR* dir = fd >= 0 ? fdopendir(fd) : nullptr;
  if (dir == nullptr) {
    if (fd >= 0) close(fd);
    return;
  }
  std::vector<std::string> stale;
  const time_t now = time(nullptr);
  while (dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name == keep || (name.rfind("v-", 0) != 0 && name.rfind("tmp-", 0) != 0)) continue;
    struct stat st;
    if (fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        now - st.st_mtime > kEtcViewKeepSeconds) {
      stale.push_back(name);
    }
  }
  closedir(dir);
  for (const std::string& name : stale) RemoveTree(dir_fd, name);
}

absl::StatusOr<std::string> BuildView(int dir_fd, const std::string& view_dir, unsigned dir_mode,
                                      const std::string& replaced) {
  uint64_t random = 0;
  if (getrandom(&random, sizeof(random), 0) != sizeof(random)) random = 0;
  const std::string tmp = absl::StrCat("tmp-", getpid(), "-", random);
  if (mkdirat(dir_fd, tmp.c_str(), 0755) != 0) return Failed("cannot create", tmp, errno);
  int root = OpenSubdirNoFollow(dir_fd, tmp.c_str());
  if (root < 0) return Failed("cannot open", tmp, errno);
  std::string entries = ModeLine(dir_mode) + "\n";
  Copier copier(root, dir_mode, entries);
  absl::Status copied;
  for (const std::string& file : SandboxEtcFiles()) {
    copied = copier.CopyTopLevel(file);
    if (!copied.ok()) break;
  }
  fchmod(root, dir_mode);
  close(root);
  if (!copied.ok()) {
    RemoveTree(dir_fd, tmp);
    return copied;
  }
  const std::string name = absl::StrCat("v-", Sha256Hex(entries).substr(0, 24));
  if (renameat(dir_fd, tmp.c_str(), dir_fd, name.c_str()) != 0) {
    // Another spawn published the same copy first: use it.
    RemoveTree(dir_fd, tmp);
    if (errno != EEXIST && errno != ENOTEMPTY) return Failed("cannot publish", name, errno);
  }
  const std::string manifest = absl::StrCat(kManifestHeader, "\n", name, "\n", entries);
  const std::string next = absl::StrCat(kCurrent, ".", tmp);
  int fd = openat(dir_fd, next.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Failed("cannot write", next, errno);
  const bool written =
      write(fd, manifest.data(), manifest.size()) == static_cast<ssize_t>(manifest.size());
  close(fd);
  if (!written || renameat(dir_fd, next.c_str(), dir_fd, kCurrent) != 0) {
    unlinkat(dir_fd, next.c_str(), 0);
    return Failed("cannot write", absl::StrCat(view_dir, "/", kCurrent), errno);
  }
  // The copy just replaced is stamped now: it is kept kEtcViewKeepSeconds
  // from here for the sandboxes that named it a moment ago.
  if (!replaced.empty() && replaced != name) {
    utimensat(dir_fd, replaced.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
  }
  RemoveStaleViews(dir_fd, name);
  return name;
}

}  // namespace

absl::StatusOr<std::string> PrepareEtcView(const std::string& store_dir, uid_t uid,
                                           unsigned dir_mode) {
  const std::string view_dir = absl::StrCat(store_dir, "/", kViewDir);
  int dir_fd = OpenSubdirNoFollow(AT_FDCWD, view_dir.c_str());
  if (dir_fd < 0 && errno == ENOENT) {
    if (mkdir(view_dir.c_str(), 0700) != 0 && errno != EEXIST) {
      return Failed("cannot create", view_dir, errno);
    }
    dir_fd = OpenSubdirNoFollow(AT_FDCWD, view_dir.c_str());
  }
  if (dir_fd < 0) return Failed("cannot open", view_dir, errno);
  struct stat st;
  if (fstat(dir_fd, &st) != 0 || st.st_uid != uid || (st.st_mode & 077) != 0) {
    close(dir_fd);
    return Failed("not the caller's private directory:", view_dir);
  }
  std::string replaced;
  std::string name = ReusableView(dir_fd, uid, dir_mode, replaced);
  if (name.empty()) {
    absl::StatusOr<std::string> built = BuildView(dir_fd, view_dir, dir_mode, replaced);
    if (!built.ok()) {
      close(dir_fd);
      return built.status();
    }
    name = *std::move(built);
  }
  close(dir_fd);
  return absl::StrCat(view_dir, "/", name);
}

}  // namespace np
