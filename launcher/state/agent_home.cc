#include "launcher/state/agent_home.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "core/config_file.h"
#include "core/errors.h"
#include "core/mounts.h"
#include "core/paths.h"
#include "launcher/state/nofollow_path.h"

namespace np {
namespace {

constexpr char kHomes[] = "homes";
// Bounds on what np-exec walks or copies, so a hostile tree (deep, wide or
// huge) costs a bounded amount of work and never exhausts descriptors.
constexpr int kMaxDepth = 128;
constexpr uint64_t kMaxSeedBytes = 64ull << 20;
constexpr uint64_t kMaxWalkEntries = 1000000;

// Closes a descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

absl::Status HomeInvalid(absl::string_view path, absl::string_view why) {
  return MakeError(absl::StatusCode::kFailedPrecondition, "agent-home-invalid",
                   absl::StrCat("the persistent home ", path, " ", why,
                                "; np-exec does not use it. Run `np-exec home --reset` in the "
                                "project to start a new one"),
                   {{"path", path}});
}

absl::Status Unwritable(absl::string_view path, int err) {
  return MakeError(absl::StatusCode::kUnavailable, "state-store-unwritable",
                   absl::StrCat("cannot write the persistent home ", path, ": ", strerror(err)),
                   {{"path", path}});
}

absl::Status SeedRefused(absl::string_view seed, absl::string_view why) {
  return MakeError(
      absl::StatusCode::kFailedPrecondition, "agent-home-seed-refused",
      absl::StrCat("isolation.container.home_seed \"", seed, "\" ", why, "; nothing was copied"),
      {{"seed", seed}});
}

std::string RealPath(const std::string& path, int* err) {
  char real[PATH_MAX];
  if (realpath(path.c_str(), real) == nullptr) {
    *err = errno;
    return "";
  }
  return real;
}

// Opens (creating, 0700) the store's `homes` directory. It must be the
// caller's and closed to others, as the store itself.
absl::StatusOr<int> OpenHomes(const StateStore& store, bool create) {
  const std::string path = JoinPath(store.dir(), kHomes);
  if (create && mkdirat(store.dir_fd(), kHomes, 0700) != 0 && errno != EEXIST) {
    return Unwritable(path, errno);
  }
  const int fd = OpenSubdirNoFollow(store.dir_fd(), kHomes);
  if (fd < 0) {
    if (errno == ENOENT && !create) return -1;
    return HomeInvalid(path, "cannot be opened as a directory (a link?)");
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_uid != store.uid() || (st.st_mode & 077) != 0) {
    close(fd);
    return HomeInvalid(path, "is not yours alone (want mode 0700, owned by you)");
  }
  return fd;
}

// Removes `name` below `parent` and everything under it, following no link:
// a link is removed itself, a directory is entered only through a
// descriptor opened with O_NOFOLLOW.
absl::Status RemoveTree(int parent, const std::string& name, const std::string& shown, int depth) {
  const int fd = OpenSubdirNoFollow(parent, name.c_str());
  if (fd < 0) {
    if (errno == ENOENT) return absl::OkStatus();
    if (errno != ENOTDIR && errno != ELOOP) return Unwritable(shown, errno);
    if (unlinkat(parent, name.c_str(), 0) != 0 && errno != ENOENT) return Unwritable(shown, errno);
    return absl::OkStatus();
  }
  if (depth > kMaxDepth) {
    close(fd);
    return Unwritable(shown, ELOOP);
  }
  // A directory the program made read-only is still the caller's to empty.
  (void)fchmod(fd, 0700);
  DIR* dir = fdopendir(fd);
  if (dir == nullptr) {
    close(fd);
    return Unwritable(shown, errno);
  }
  absl::Status status;
  while (dirent* entry = readdir(dir)) {
    const std::string child = entry->d_name;
    if (child == "." || child == "..") continue;
    struct stat st;
    if (fstatat(dirfd(dir), child.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      status = RemoveTree(dirfd(dir), child, JoinPath(shown, child), depth + 1);
    } else if (unlinkat(dirfd(dir), child.c_str(), 0) != 0 && errno != ENOENT) {
      status = Unwritable(JoinPath(shown, child), errno);
    }
    if (!status.ok()) break;
  }
  closedir(dir);
  if (!status.ok()) return status;
  if (unlinkat(parent, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
    return Unwritable(shown, errno);
  }
  return absl::OkStatus();
}

// Disk usage below the directory `fd` (closed here), links not followed.
void AddUsage(int fd, int depth, uint64_t* bytes, uint64_t* entries) {
  DIR* dir = fdopendir(fd);
  if (dir == nullptr) {
    close(fd);
    return;
  }
  while (dirent* entry = readdir(dir)) {
    if (++*entries > kMaxWalkEntries) break;
    const absl::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    struct stat st;
    if (fstatat(dirfd(dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    *bytes += static_cast<uint64_t>(st.st_blocks) * 512;
    if (!S_ISDIR(st.st_mode) || depth >= kMaxDepth) continue;
    const int child = OpenSubdirNoFollow(dirfd(dir), entry->d_name);
    if (child >= 0) AddUsage(child, depth + 1, bytes, entries);
  }
  closedir(dir);
}

// Copies the open regular file `src` to a new file `name` below `dst`
// (O_EXCL: never through anything already there).
absl::Status CopyFile(int src, int dst, const std::string& name, mode_t mode,
                      const std::string& seed, uint64_t* budget) {
  const int out = openat(dst, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                         (mode & 0700) | 0600);
  if (out < 0) {
    if (errno == EEXIST) return absl::OkStatus();  // An earlier seed copied it.
    return SeedRefused(seed, absl::StrCat("cannot be written: ", strerror(errno)));
  }
  Fd closer(out);
  char buffer[65536];
  ssize_t n;
  while ((n = read(src, buffer, sizeof(buffer))) != 0) {
    if (n < 0) {
      if (errno == EINTR) continue;
      return SeedRefused(seed, absl::StrCat("cannot be read: ", strerror(errno)));
    }
    if (static_cast<uint64_t>(n) > *budget) return SeedRefused(seed, "is larger than 64 MiB");
    *budget -= static_cast<uint64_t>(n);
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = write(out, buffer + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return SeedRefused(seed, absl::StrCat("cannot be written: ", strerror(errno)));
      done += w;
    }
  }
  return absl::OkStatus();
}

// Copies the directory `src` (closed here) into `dst`: regular files and
// directories only; links and special files are left out.
absl::Status CopyTree(int src, int dst, const std::string& seed, int depth, uint64_t* budget) {
  DIR* dir = fdopendir(src);
  if (dir == nullptr) {
    close(src);
    return SeedRefused(seed, "cannot be read");
  }
  absl::Status status;
  while (dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    // Never opened unless it is a file or a directory: opening a device
    // can act on it.
    struct stat entry_st;
    if (fstatat(dirfd(dir), name.c_str(), &entry_st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !(S_ISREG(entry_st.st_mode) || S_ISDIR(entry_st.st_mode))) {
      continue;
    }
    const int in =
        openat(dirfd(dir), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (in < 0) continue;  // Swapped for a link (ELOOP) or gone.
    Fd in_closer(in);
    struct stat st;
    if (fstat(in, &st) != 0) continue;
    if (S_ISREG(st.st_mode)) {
      status = CopyFile(in, dst, name, st.st_mode, seed, budget);
    } else if (S_ISDIR(st.st_mode) && depth < kMaxDepth) {
      if (mkdirat(dst, name.c_str(), 0700) != 0 && errno != EEXIST) continue;
      const int sub = OpenSubdirNoFollow(dst, name.c_str());
      if (sub < 0) continue;
      Fd sub_closer(sub);
      status = CopyTree(dup(in), sub, seed, depth + 1, budget);
    }
    if (!status.ok()) break;
  }
  closedir(dir);
  return status;
}

// Opens `relative` (components of a path below the directory `root`) one
// component at a time, following no link.
int OpenBeneath(int root, absl::string_view relative) {
  std::vector<std::string> parts = absl::StrSplit(relative, '/', absl::SkipEmpty());
  int current = dup(root);
  for (size_t i = 0; i < parts.size() && current >= 0; ++i) {
    const bool last = i + 1 == parts.size();
    const int flags = last ? O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY
                           : O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    struct stat st;
    if (last && (fstatat(current, parts[i].c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
                 !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))) {
      // Not opened at all unless a file or a directory (a device could act).
      close(current);
      errno = EINVAL;
      return -1;
    }
    const int next = openat(current, parts[i].c_str(), flags);
    close(current);
    current = next;
  }
  return current;
}

// Makes the parents of `relative` below `dst` (a fresh directory, so
// nothing is in the way) and returns the descriptor of the last one.
int MakeParents(int dst, absl::string_view relative) {
  std::vector<std::string> parts = absl::StrSplit(relative, '/', absl::SkipEmpty());
  int current = dup(dst);
  for (size_t i = 0; i + 1 < parts.size() && current >= 0; ++i) {
    if (mkdirat(current, parts[i].c_str(), 0700) != 0 && errno != EEXIST) {
      close(current);
      return -1;
    }
    const int next = OpenSubdirNoFollow(current, parts[i].c_str());
    close(current);
    current = next;
  }
  return current;
}

// A seed named inside another project, or reached through a link that lies
// in one or in np-exec's state store (a persistent home), is that project's
// sandboxes' to change: a link planted there can point a harmless-looking
// seed at ~/.ssh. A project that is or holds HOME never runs contained
// (isolation-project-too-broad), so it does not count. The walk that finds
// the links is a second look after the one that found `real`: where it ends
// elsewhere, something swapped a link in or out meanwhile.
absl::Status CheckSeedOutsideProjects(const std::string& home_real, const std::string& relative,
                                      const std::string& real,
                                      const std::vector<std::string>& stores) {
  const std::string named = JoinPath(home_real, relative);
  std::vector<std::string> places = {named, real};
  std::string reached;
  for (std::string& link : LinksOnTheWay(named, &reached)) places.push_back(std::move(link));
  if (reached != real) {
    return SeedRefused(relative, absl::StrCat("led to ", real, " and a moment later to ",
                                              reached.empty() ? "nothing" : reached,
                                              ": something is changing it"));
  }
  for (const std::string& place : places) {
    // A link is replaced where it lies: in the directory that holds it.
    const bool link = place != named && place != real;
    const std::string where = link ? ParentPath(place) : place;
    for (const std::string& store : stores) {
      if (store.empty() || !IsInside(where, store)) continue;
      return SeedRefused(relative, link ? absl::StrCat("goes through the link ", place,
                                                       " in np-exec's own state, where a sandbox "
                                                       "can plant one")
                                        : absl::StrCat("is in np-exec's own state (", place,
                                                       "), where a sandbox can plant a link"));
    }
    for (const std::string& project : ProjectsAtOrAbove(where)) {
      if (IsInside(home_real, project)) continue;
      return SeedRefused(
          relative, !link ? absl::StrCat("lies in the project ", project,
                                         ", whose sandboxed programs can change it; seeds come "
                                         "from your own files")
                          : absl::StrCat("goes through the link ", place, " in the project ",
                                         project, ", whose sandboxed programs can retarget it"));
    }
  }
  return absl::OkStatus();
}

// Copies one seed of the operator's HOME into the new home `dst`. A seed
// that is not there is skipped (false).
absl::StatusOr<bool> CopySeed(const HomeSeed& seed, const std::string& home_real, int home_fd,
                              const std::vector<std::string>& stores, const std::string& relative,
                              int dst, uint64_t* budget) {
  int err = 0;
  const std::string real = RealPath(JoinPath(home_real, relative), &err);
  if (real.empty()) {
    if (err == ENOENT || err == ENOTDIR) return false;
    return SeedRefused(relative, absl::StrCat("cannot be resolved: ", strerror(err)));
  }
  if (real == home_real || !IsInside(real, home_real)) {
    return SeedRefused(relative,
                       absl::StrCat("leads to ", real, ", outside your HOME ", home_real));
  }
  if (IsInside(real, seed.project_real) || IsInside(seed.project_real, real)) {
    return SeedRefused(relative, "is in the project or holds it; seeds come from your HOME only");
  }
  for (const std::string& store : stores) {
    if (!store.empty() && (IsInside(store, real) || IsInside(real, store))) {
      return SeedRefused(relative, "is np-exec's own state");
    }
  }
  absl::Status in_project = CheckSeedOutsideProjects(home_real, relative, real, stores);
  if (!in_project.ok()) return in_project;
  const int src = OpenBeneath(home_fd, absl::string_view(real).substr(home_real.size() + 1));
  if (src < 0) {
    return SeedRefused(
        relative, absl::StrCat("cannot be opened without following a link: ", strerror(errno)));
  }
  Fd src_closer(src);
  struct stat st;
  if (fstat(src, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) {
    return SeedRefused(relative, "is neither a regular file nor a directory");
  }
  const int parent = MakeParents(dst, relative);
  if (parent < 0) return SeedRefused(relative, "cannot be placed in the home");
  Fd parent_closer(parent);
  const std::string name = BaseName(relative);
  if (S_ISREG(st.st_mode)) {
    absl::Status copied = CopyFile(src, parent, name, st.st_mode, relative, budget);
    if (!copied.ok()) return copied;
    return true;
  }
  if (mkdirat(parent, name.c_str(), 0700) != 0 && errno != EEXIST) {
    return SeedRefused(relative, "cannot be placed in the home");
  }
  const int sub = OpenSubdirNoFollow(parent, name.c_str());
  if (sub < 0) return SeedRefused(relative, "cannot be placed in the home");
  Fd sub_closer(sub);
  absl::Status copied = CopyTree(dup(src), sub, relative, 0, budget);
  if (!copied.ok()) return copied;
  return true;
}

// Makes the home as `<stem>.new-<pid>-<random>`, seeds it and renames it
// into place. Returns the seeds copied.
absl::StatusOr<std::vector<std::string>> CreateHome(const StateStore& store, int homes,
                                                    const std::string& stem, const HomeSeed& seed) {
  uint32_t random = 0;
  if (getrandom(&random, sizeof(random), 0) != sizeof(random)) random = 0;
  const std::string temp = absl::StrFormat("%s.new-%d-%08x", stem, getpid(), random);
  const std::string shown = JoinPath(JoinPath(store.dir(), kHomes), temp);
  if (mkdirat(homes, temp.c_str(), 0700) != 0) return Unwritable(shown, errno);
  std::vector<std::string> seeded;
  absl::Status status;
  {
    const int dst = OpenSubdirNoFollow(homes, temp.c_str());
    if (dst < 0) status = Unwritable(shown, errno);
    Fd dst_closer(dst);
    int err = 0;
    const std::string home_real =
        seed.paths.empty() || seed.operator_home.empty() ? "" : RealPath(seed.operator_home, &err);
    const int home_fd = home_real.empty() ? -1
                                          : open(home_real.c_str(),
                                                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    Fd home_closer(home_fd);
    if (status.ok() && !seed.paths.empty() && home_fd < 0) {
      status = SeedRefused(seed.paths.front(), "has no HOME to be copied from");
    }
    uint64_t budget = kMaxSeedBytes;
    // The store by its path as written and by its real path: the walks
    // compare resolved paths.
    const std::vector<std::string> stores = {store.dir(), RealPath(store.dir(), &err)};
    for (size_t i = 0; status.ok() && i < seed.paths.size(); ++i) {
      absl::StatusOr<bool> copied =
          CopySeed(seed, home_real, home_fd, stores, seed.paths[i], dst, &budget);
      if (!copied.ok()) status = copied.status();
      if (copied.ok() && *copied) seeded.push_back(seed.paths[i]);
    }
  }
  if (status.ok() && renameat(homes, temp.c_str(), homes, stem.c_str()) != 0) {
    status = Unwritable(shown, errno);
  }
  if (!status.ok()) {
    (void)RemoveTree(homes, temp, shown, 0);
    return status;
  }
  return seeded;
}

// Takes the home's lock file in `mode` (LOCK_SH, LOCK_EX, with LOCK_NB).
absl::StatusOr<int> LockHome(const StateStore& store, const std::string& stem, int mode) {
  absl::StatusOr<int> fd = store.OpenLockFile(absl::StrCat("home-", stem));
  if (!fd.ok()) return fd.status();
  while (flock(*fd, mode) != 0) {
    if (errno == EINTR) continue;
    const int err = errno;
    close(*fd);
    if (err == EWOULDBLOCK) return -1;
    return Unwritable(JoinPath(store.dir(), absl::StrCat("home-", stem, ".lock")), err);
  }
  return *fd;
}

// Removes `<stem>.new-*` and `<stem>.old-*` below the homes directory.
absl::Status RemoveLeftovers(const StateStore& store, int homes, const std::string& stem) {
  const int fd = dup(homes);
  DIR* dir = fd < 0 ? nullptr : fdopendir(fd);
  if (dir == nullptr) {
    if (fd >= 0) close(fd);
    return absl::OkStatus();
  }
  std::vector<std::string> names;
  while (dirent* entry = readdir(dir)) {
    const absl::string_view name = entry->d_name;
    if (absl::StartsWith(name, absl::StrCat(stem, ".new-")) ||
        absl::StartsWith(name, absl::StrCat(stem, ".old-"))) {
      names.emplace_back(name);
    }
  }
  closedir(dir);
  for (const std::string& name : names) {
    absl::Status removed =
        RemoveTree(homes, name, JoinPath(JoinPath(store.dir(), kHomes), name), 0);
    if (!removed.ok()) return removed;
  }
  return absl::OkStatus();
}

// The project's key in the store, from the settings' one look: the opened
// folder's path and its git as read then (the trust record's key), never a
// second resolution of the path, which a link swapped in meanwhile would send
// to another project's home.
absl::StatusOr<std::string> ProjectKey(const Settings& settings) {
  if (!settings.project.found()) {
    return MakeError(absl::StatusCode::kFailedPrecondition, "not-in-project",
                     "a persistent home belongs to a project; the spawn is in none");
  }
  return ProjectStoreKey(settings.project_root, settings.git.get());
}

}  // namespace

std::string AgentHomePath(absl::string_view store_dir, absl::string_view key) {
  return JoinPath(JoinPath(store_dir, kHomes), StateStore::FileStem(key));
}

absl::StatusOr<AgentHomeLease> AgentHomeLease::Acquire(const StateStore& store,
                                                       absl::string_view key,
                                                       const HomeSeed& seed) {
  const std::string stem = StateStore::FileStem(key);
  const std::string path = AgentHomePath(store.dir(), key);
  absl::StatusOr<int> homes = OpenHomes(store, /*create=*/true);
  if (!homes.ok()) return homes.status();
  Fd homes_closer(*homes);
  // Exclusive while the home may be created, so two first spawns make one.
  absl::StatusOr<int> lock = LockHome(store, stem, LOCK_EX);
  if (!lock.ok()) return lock.status();
  AgentHomeLease lease(path, *lock);
  struct stat st;
  if (fstatat(*homes, stem.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno != ENOENT)
      return HomeInvalid(path, absl::StrCat("cannot be examined: ", strerror(errno)));
    absl::StatusOr<std::vector<std::string>> seeded = CreateHome(store, *homes, stem, seed);
    if (!seeded.ok()) return seeded.status();
    lease.seeded_ = *std::move(seeded);
  } else if (!S_ISDIR(st.st_mode)) {
    return HomeInvalid(path, "is not a directory");
  } else if (st.st_uid != store.uid()) {
    return HomeInvalid(path, absl::StrCat("belongs to uid ", st.st_uid));
  }
  // The program may have opened its home to others; the path stays private.
  const int fd = OpenSubdirNoFollow(*homes, stem.c_str());
  if (fd < 0) return HomeInvalid(path, "cannot be opened as a directory");
  (void)fchmod(fd, 0700);
  close(fd);
  while (flock(lease.lock_fd_, LOCK_SH) != 0 && errno == EINTR) {
  }
  return lease;
}

AgentHomeLease::AgentHomeLease(AgentHomeLease&& other) noexcept
    : path_(std::move(other.path_)), lock_fd_(other.lock_fd_), seeded_(std::move(other.seeded_)) {
  other.lock_fd_ = -1;
}

AgentHomeLease& AgentHomeLease::operator=(AgentHomeLease&& other) noexcept {
  if (this != &other) {
    if (lock_fd_ >= 0) close(lock_fd_);
    path_ = std::move(other.path_);
    lock_fd_ = other.lock_fd_;
    seeded_ = std::move(other.seeded_);
    other.lock_fd_ = -1;
  }
  return *this;
}

AgentHomeLease::~AgentHomeLease() {
  if (lock_fd_ >= 0) close(lock_fd_);
}

absl::StatusOr<AgentHomeInfo> InspectAgentHome(const StateStore& store, absl::string_view key) {
  AgentHomeInfo info;
  info.path = AgentHomePath(store.dir(), key);
  absl::StatusOr<int> homes = OpenHomes(store, /*create=*/false);
  if (!homes.ok()) return homes.status();
  if (*homes < 0) return info;
  Fd homes_closer(*homes);
  const std::string stem = StateStore::FileStem(key);
  struct stat st;
  if (fstatat(*homes, stem.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return info;
  if (!S_ISDIR(st.st_mode)) return HomeInvalid(info.path, "is not a directory");
  info.exists = true;
  const int fd = OpenSubdirNoFollow(*homes, stem.c_str());
  if (fd < 0) return HomeInvalid(info.path, "cannot be opened as a directory");
  uint64_t entries = 0;
  info.bytes = static_cast<uint64_t>(st.st_blocks) * 512;
  AddUsage(fd, 0, &info.bytes, &entries);
  return info;
}

absl::StatusOr<bool> ResetAgentHome(const StateStore& store, absl::string_view key) {
  const std::string stem = StateStore::FileStem(key);
  const std::string path = AgentHomePath(store.dir(), key);
  absl::StatusOr<int> homes = OpenHomes(store, /*create=*/false);
  if (!homes.ok()) return homes.status();
  if (*homes < 0) return false;
  Fd homes_closer(*homes);
  absl::StatusOr<int> lock = LockHome(store, stem, LOCK_EX | LOCK_NB);
  if (!lock.ok()) return lock.status();
  if (*lock < 0) {
    return MakeError(absl::StatusCode::kFailedPrecondition, "agent-home-in-use",
                     absl::StrCat("the persistent home ", path,
                                  " is in use by a running spawn of this project; reset it once "
                                  "that has ended"),
                     {{"path", path}});
  }
  Fd lock_closer(*lock);
  // What a killed creation or reset left behind: a half-seeded home, or a
  // whole old one with its logins.
  absl::Status leftovers = RemoveLeftovers(store, *homes, stem);
  if (!leftovers.ok()) return leftovers;
  struct stat st;
  if (fstatat(*homes, stem.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return false;
  // Renamed away first, so no spawn ever sees a half-removed home.
  uint32_t random = 0;
  if (getrandom(&random, sizeof(random), 0) != sizeof(random)) random = 0;
  const std::string trash = absl::StrFormat("%s.old-%d-%08x", stem, getpid(), random);
  if (renameat(*homes, stem.c_str(), *homes, trash.c_str()) != 0) return Unwritable(path, errno);
  absl::Status removed =
      RemoveTree(*homes, trash, JoinPath(JoinPath(store.dir(), kHomes), trash), 0);
  if (!removed.ok()) return removed;
  return true;
}

absl::StatusOr<std::optional<AgentHomeLease>> AcquireHomeForSpawn(const Settings& settings,
                                                                  absl::string_view xdg_state_home,
                                                                  absl::string_view home,
                                                                  uid_t uid) {
  const ContainerConfig& container = settings.config.container;
  if (settings.resolved.tier != Tier::kContainer || !container.persistent_home) {
    return std::optional<AgentHomeLease>();
  }
  absl::StatusOr<std::string> key = ProjectKey(settings);
  if (!key.ok()) return key.status();
  absl::StatusOr<std::string> dir = StateStoreDir(xdg_state_home, home);
  if (!dir.ok()) return dir.status();
  absl::StatusOr<StateStore> store = StateStore::Open(*dir, uid);
  if (!store.ok()) return store.status();
  HomeSeed seed{std::string(home), settings.project_root, container.home_seed};
  absl::StatusOr<AgentHomeLease> lease = AgentHomeLease::Acquire(*store, *key, seed);
  if (!lease.ok()) return lease.status();
  return std::optional<AgentHomeLease>(*std::move(lease));
}

std::string PlannedAgentHome(const Settings& settings, absl::string_view xdg_state_home,
                             absl::string_view home) {
  if (settings.resolved.tier != Tier::kContainer || !settings.config.container.persistent_home) {
    return "";
  }
  absl::StatusOr<std::string> key = ProjectKey(settings);
  absl::StatusOr<std::string> dir = StateStoreDir(xdg_state_home, home);
  if (!key.ok() || !dir.ok()) return "";
  return AgentHomePath(*dir, *key);
}

}  // namespace np
