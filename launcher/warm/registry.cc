#include "launcher/warm/registry.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/errors.h"
#include "launcher/state/nofollow_path.h"

namespace np::warm {
namespace {

constexpr size_t kKeyPrefix = 32;
constexpr size_t kMaxInfoBytes = 64 << 10;

absl::Status Unwritable(absl::string_view what, int err) {
  return MakeError(absl::StatusCode::kUnavailable, "state-store-unwritable",
                   absl::StrCat("np-exec's warm sandbox directory: ", what, ": ", strerror(err)));
}

std::string RandomHex() {
  uint32_t random = 0;
  if (getrandom(&random, sizeof(random), 0) != sizeof(random)) random = 0;
  return absl::StrFormat("%08x", random);
}

// The names in warm/ that start with `prefix`: the slots, or with
// `rendezvous` the rendezvous directories ("rv-...").
std::vector<std::string> Entries(int warm_dir, absl::string_view prefix, bool rendezvous = false) {
  std::vector<std::string> out;
  const int copy = openat(warm_dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (copy < 0) return out;
  DIR* stream = fdopendir(copy);
  if (stream == nullptr) {
    close(copy);
    return out;
  }
  while (dirent* entry = readdir(stream)) {
    const absl::string_view name = entry->d_name;
    if (name == "." || name == ".." || absl::StartsWith(name, "rv-") != rendezvous) continue;
    if (absl::StartsWith(name, prefix)) out.emplace_back(name);
  }
  closedir(stream);
  return out;
}

// The slot's info, when it is a regular file of the caller's.
std::optional<nlohmann::json> ReadInfo(int dir) {
  SmallFile file = ReadSmallFileAt(dir, std::string(kSlotInfo).c_str(), kMaxInfoBytes);
  if (file.error != 0 || !S_ISREG(file.st.st_mode) || file.st.st_uid != geteuid() ||
      file.text.size() > kMaxInfoBytes) {
    return std::nullopt;
  }
  nlohmann::json info = nlohmann::json::parse(file.text, nullptr, false);
  if (info.is_discarded() || !info.is_object()) return std::nullopt;
  return info;
}

// The file `name` in `dir` with an exclusive lock on it, when no process
// holds a lock on it; else none, and `absent` (if given) says whether the
// file is not there (a file that cannot be opened otherwise counts as held).
// Opened for writing: NFS emulates flock with POSIX locks, whose exclusive
// kind needs it.
OwnedFd LockedIfFree(int dir, const std::string& name, bool* absent = nullptr) {
  OwnedFd file(openat(dir, name.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (absent != nullptr) *absent = file.get() < 0 && errno == ENOENT;
  if (file.get() < 0 || flock(file.get(), LOCK_EX | LOCK_NB) != 0) return OwnedFd();
  return file;
}

// Whether the holder of the slot `dir` is gone: no process holds its
// info.json (NewSlot::alive). A slot of a build whose holder took no such
// lock (its info says nothing of it) counts as held.
bool HolderGone(int dir, const nlohmann::json& info) {
  return info.value(kHolderLockKey, false) && LockedIfFree(dir, std::string(kSlotInfo)).get() >= 0;
}

// The slot `name` opened, with its lock file.
std::optional<Slot> OpenSlot(int warm_dir, const std::string& name) {
  Slot slot;
  slot.name = name;
  slot.dir = OwnedFd(OpenSubdirNoFollow(warm_dir, name.c_str()));
  if (slot.dir.get() < 0) return std::nullopt;
  slot.lock = OwnedFd(
      openat(slot.dir.get(), std::string(kSlotLock).c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC));
  if (slot.lock.get() < 0) return std::nullopt;
  return slot;
}

}  // namespace

absl::StatusOr<OwnedFd> OpenWarmDir(const StateStore& store) {
  absl::StatusOr<int> dir = store.OpenSubdir(kWarmDir);
  if (!dir.ok()) return dir.status();
  return OwnedFd(*dir);
}

// Whether no one holds the rendezvous directory `name` any more: no shared
// lock on its lock file (neither its spawn nor its holder, which may outlive
// the spawn, holds it), and its spawn is gone (until it has its lock, the
// spawn is the only one who could use it). A lock file that cannot be opened
// for another reason than its absence counts as held.
bool Unheld(int warm_dir, const std::string& name) {
  bool absent = false;
  const OwnedFd lock = LockedIfFree(warm_dir, RendezvousLockPath(name), &absent);
  if (lock.get() < 0 && !absent) return false;
  const absl::string_view rest = absl::string_view(name).substr(3);
  int pid = 0;
  if (!absl::SimpleAtoi(rest.substr(0, rest.find('-')), &pid) || pid <= 0) return false;
  return kill(pid, 0) != 0 && errno == ESRCH;
}

// The rendezvous directory `name` in `parent` (a socket left in it, then the
// directory itself) and its lock file.
void RemoveRendezvousDirAt(int parent, const std::string& name) {
  const int dir = OpenSubdirNoFollow(parent, name.c_str());
  if (dir >= 0) {
    unlinkat(dir, std::string(kRendezvousName).c_str(), 0);
    close(dir);
  }
  unlinkat(parent, name.c_str(), AT_REMOVEDIR);
  unlinkat(parent, RendezvousLockPath(name).c_str(), 0);
}

// Rendezvous directories no one holds (their spawn and holder were killed
// before they removed them): empty or holding a dead socket, removed.
void RemoveStaleRendezvousDirs(int warm_dir) {
  std::vector<std::string> stale;
  for (const std::string& name : Entries(warm_dir, "rv-", /*rendezvous=*/true)) {
    if (!absl::EndsWith(name, ".lock")) {
      if (Unheld(warm_dir, name)) stale.push_back(name);
      continue;
    }
    // A lock whose directory is gone (its spawn or holder was killed between
    // removing the two), free: removed.
    const std::string dir = name.substr(0, name.size() - 5);
    struct stat st;
    if (fstatat(warm_dir, dir.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT &&
        LockedIfFree(warm_dir, name).get() >= 0) {
      unlinkat(warm_dir, name.c_str(), 0);
    }
  }
  for (const std::string& name : stale) RemoveRendezvousDirAt(warm_dir, name);
}

absl::StatusOr<std::string> NameRendezvousDir(const StateStore& store) {
  absl::StatusOr<OwnedFd> warm = OpenWarmDir(store);
  if (!warm.ok()) return warm.status();
  return absl::StrCat(store.dir(), "/", kWarmDir, "/rv-", getpid(), "-", RandomHex());
}

absl::StatusOr<OwnedFd> MakeRendezvousDir(int warm_dir, const std::string& path) {
  RemoveStaleRendezvousDirs(warm_dir);
  const std::string name = path.substr(path.rfind('/') + 1);
  // The directory first: until its lock is there and held, it is judged by
  // its spawn's pid, and a lock is never without its directory.
  if (mkdirat(warm_dir, name.c_str(), 0700) != 0) return Unwritable("mkdir", errno);
  OwnedFd lock(openat(warm_dir, RendezvousLockPath(name).c_str(),
                      O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (lock.get() < 0 || flock(lock.get(), LOCK_SH | LOCK_NB) != 0) {
    const int err = errno;
    RemoveRendezvousDirAt(warm_dir, name);
    return Unwritable("rendezvous lock", err);
  }
  return lock;
}

std::string RendezvousLockPath(const std::string& path) { return path + ".lock"; }

void RemoveRendezvousDir(const std::string& path) {
  if (!path.empty()) RemoveRendezvousDirAt(AT_FDCWD, path);
}

std::optional<Slot> ClaimIdle(int warm_dir, const std::string& key) {
  for (const std::string& name : Entries(warm_dir, key.substr(0, kKeyPrefix) + "-")) {
    std::optional<Slot> slot = OpenSlot(warm_dir, name);
    if (!slot.has_value()) continue;
    if (flock(slot->lock.get(), LOCK_EX | LOCK_NB) != 0) continue;  // A spawn runs in it.
    std::optional<nlohmann::json> info = ReadInfo(slot->dir.get());
    if (!info.has_value() || info->value("key", "") != key) continue;
    absl::StatusOr<OwnedFd> connection = ConnectAt(slot->dir.get(), std::string(kControlSocket));
    if (!connection.ok()) {
      // Its holder is gone: nobody else can be using it while we hold the lock.
      RemoveSlot(warm_dir, name);
      continue;
    }
    slot->connection = *std::move(connection);
    return slot;
  }
  return std::nullopt;
}

absl::StatusOr<NewSlot> MakeSlot(int warm_dir, const std::string& key, const nlohmann::json& info) {
  NewSlot made;
  made.slot.name = absl::StrCat(key.substr(0, kKeyPrefix), "-", RandomHex());
  if (mkdirat(warm_dir, made.slot.name.c_str(), 0700) != 0) return Unwritable("mkdir", errno);
  made.slot.dir = OwnedFd(OpenSubdirNoFollow(warm_dir, made.slot.name.c_str()));
  if (made.slot.dir.get() < 0) return Unwritable("open", errno);
  made.slot.lock = OwnedFd(openat(made.slot.dir.get(), std::string(kSlotLock).c_str(),
                                  O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (made.slot.lock.get() < 0 || flock(made.slot.lock.get(), LOCK_EX | LOCK_NB) != 0) {
    return Unwritable("lock", errno);
  }
  nlohmann::json written_info = info;
  written_info[std::string(kHolderLockKey)] = true;
  const std::string text = written_info.dump();
  const int file = openat(made.slot.dir.get(), std::string(kSlotInfo).c_str(),
                          O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (file < 0) return Unwritable("info.json", errno);
  const bool written = write(file, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(file);
  if (!written) return Unwritable("info.json", EIO);
  made.alive = OwnedFd(openat(made.slot.dir.get(), std::string(kSlotInfo).c_str(),
                              O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (made.alive.get() < 0 || flock(made.alive.get(), LOCK_SH | LOCK_NB) != 0) {
    return Unwritable("info.json", errno);
  }
  absl::StatusOr<OwnedFd> listener = ListenAt(made.slot.dir.get(), std::string(kControlSocket));
  if (!listener.ok()) return listener.status();
  made.listener = *std::move(listener);
  return made;
}

void RemoveSlot(int warm_dir, const std::string& name) {
  const int dir = OpenSubdirNoFollow(warm_dir, name.c_str());
  if (dir >= 0) {
    for (absl::string_view file : {kControlSocket, kSlotLock, kSlotInfo, kRuntimeLog}) {
      unlinkat(dir, std::string(file).c_str(), 0);
    }
    close(dir);
  }
  unlinkat(warm_dir, name.c_str(), AT_REMOVEDIR);
}

std::vector<nlohmann::json> ListSandboxes(int warm_dir) {
  std::vector<nlohmann::json> out;
  for (const std::string& name : Entries(warm_dir, "")) {
    std::optional<Slot> slot = OpenSlot(warm_dir, name);
    if (!slot.has_value()) continue;
    std::optional<nlohmann::json> info = ReadInfo(slot->dir.get());
    if (!info.has_value()) continue;
    const bool idle = flock(slot->lock.get(), LOCK_EX | LOCK_NB) == 0;
    // An idle slot whose holder is gone (killed, and its sandbox ended with
    // it: nothing holds its info.json): no sandbox, and removed, as a claim
    // would. Asked without a word to the holder, whose idle time runs on.
    if (idle && HolderGone(slot->dir.get(), *info)) {
      RemoveSlot(warm_dir, name);
      continue;
    }
    (*info)["busy"] = !idle;
    (*info)["name"] = name;
    out.push_back(*std::move(info));
  }
  return out;
}

int StopSandboxes(int warm_dir, const std::string& project) {
  int asked = 0;
  for (const std::string& name : Entries(warm_dir, "")) {
    std::optional<Slot> slot = OpenSlot(warm_dir, name);
    if (!slot.has_value()) continue;
    std::optional<nlohmann::json> info = ReadInfo(slot->dir.get());
    if (!info.has_value() || (!project.empty() && info->value("project", "") != project)) continue;
    absl::StatusOr<OwnedFd> connection = ConnectAt(slot->dir.get(), std::string(kControlSocket));
    if (!connection.ok()) {
      if (flock(slot->lock.get(), LOCK_EX | LOCK_NB) == 0) RemoveSlot(warm_dir, name);
      continue;
    }
    if (Send(connection->get(), {{"op", "stop"}}).ok()) ++asked;
  }
  return asked;
}

}  // namespace np::warm
