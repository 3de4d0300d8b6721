#include "launcher/warm/sandbox_reset.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/errors.h"
#include "core/warm.h"

namespace np::warm {
namespace {

absl::Status ResetFailed(absl::string_view what, int err = 0) {
  return MakeError(absl::StatusCode::kInternal, "warm-reset-failed",
                   absl::StrCat("the warm sandbox could not be reset between spawns: ", what,
                                err != 0 ? absl::StrCat(": ", strerror(err)) : ""));
}

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string Unescape(absl::string_view field) {
  std::string out;
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size()) {
      int value = 0;
      bool octal = true;
      for (size_t j = 1; j <= 3; ++j) {
        const char c = field[i + j];
        octal = octal && c >= '0' && c <= '7';
        value = value * 8 + (c - '0');
      }
      if (octal) {
        out.push_back(static_cast<char>(value));
        i += 3;
        continue;
      }
    }
    out.push_back(field[i]);
  }
  return out;
}

// Removes the entries of the directory `dir` (consumed), staying on `dev`.
absl::Status EmptyDirectory(int dir, dev_t dev) {
  DIR* stream = fdopendir(dir);
  if (stream == nullptr) {
    close(dir);
    return ResetFailed("opendir", errno);
  }
  absl::Status result = absl::OkStatus();
  while (dirent* entry = readdir(stream)) {
    const absl::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    struct stat st;
    if (fstatat(dirfd(stream), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (st.st_dev != dev) continue;  // Another mount on top: not this one's.
    if (S_ISDIR(st.st_mode)) {
      const int child =
          openat(dirfd(stream), entry->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (child < 0) {
        result = ResetFailed(absl::StrCat("open ", name), errno);
        continue;
      }
      absl::Status emptied = EmptyDirectory(child, dev);
      if (!emptied.ok()) result = emptied;
      // What stays is another mount's (its mount point), skipped above on
      // purpose, or a removal that failed, already reported.
      if (unlinkat(dirfd(stream), entry->d_name, AT_REMOVEDIR) != 0 && errno != ENOENT &&
          errno != EBUSY && errno != ENOTEMPTY) {
        result = ResetFailed(absl::StrCat("rmdir ", name), errno);
      }
    } else if (unlinkat(dirfd(stream), entry->d_name, 0) != 0 && errno != ENOENT) {
      result = ResetFailed(absl::StrCat("unlink ", name), errno);
    }
  }
  closedir(stream);
  return result;
}

std::vector<int> SysvIds(const char* table) {
  std::vector<int> ids;
  std::ifstream in(table);
  std::string line;
  std::getline(in, line);  // The header.
  while (std::getline(in, line)) {
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
    int id = -1;
    // key, then the id.
    if (fields.size() > 1 && absl::SimpleAtoi(fields[1], &id)) ids.push_back(id);
  }
  return ids;
}

// The mount table without what changes by itself (propagation peers).
std::string MountTable(absl::string_view mountinfo) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(mountinfo, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ');
    if (fields.size() < 6) continue;
    // The rendezvous directory, which the holder removes once the keeper is
    // connected (its root then reads as deleted).
    if (fields[4] == kWarmTarget) continue;
    absl::StrAppend(&out, fields[0], " ", fields[2], " ", fields[3], " ", fields[4], " ", fields[5],
                    "\n");
  }
  return out;
}

std::string Stat(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return absl::StrCat(path, " -\n");
  std::string text = absl::StrCat(path, " ", st.st_mode, " ", st.st_uid, " ", st.st_gid, " ",
                                  st.st_ino, " ", st.st_dev);
  if (S_ISLNK(st.st_mode)) {
    char target[4096];
    const ssize_t n = readlink(path.c_str(), target, sizeof(target));
    if (n > 0) absl::StrAppend(&text, " -> ", absl::string_view(target, static_cast<size_t>(n)));
  }
  return text + "\n";
}

// /dev's own entries (not what the scratch mounts below it hold).
std::string DevEntries() {
  std::vector<std::string> names;
  DIR* dev = opendir("/dev");
  if (dev == nullptr) return "unreadable";
  while (dirent* entry = readdir(dev)) names.emplace_back(entry->d_name);
  closedir(dev);
  std::sort(names.begin(), names.end());
  std::string out;
  for (const std::string& name : names) {
    if (name != "..") absl::StrAppend(&out, Stat(name == "." ? "/dev" : "/dev/" + name));
  }
  return out;
}

std::string OwnSchedule() {
  std::string out;
  for (int resource = 0; resource < RLIM_NLIMITS; ++resource) {
    struct rlimit limit;
    if (getrlimit(resource, &limit) == 0) {
      absl::StrAppend(&out, resource, "=", limit.rlim_cur, "/", limit.rlim_max, " ");
    }
  }
  errno = 0;
  const int nice = getpriority(PRIO_PROCESS, 0);
  absl::StrAppend(&out, "nice=", nice, " policy=", sched_getscheduler(0));
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0) {
    absl::StrAppend(&out, " cpus=", CPU_COUNT(&cpus));
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &cpus)) absl::StrAppend(&out, ",", cpu);
    }
  }
  return out;
}

}  // namespace

SandboxFingerprint TakeFingerprint(absl::string_view mountinfo,
                                   const std::vector<std::string>& scratch) {
  SandboxFingerprint print;
  print.parts.emplace_back("the mount table", MountTable(mountinfo));
  print.parts.emplace_back("/dev", DevEntries());
  std::string roots;
  for (const std::string& mount : scratch) absl::StrAppend(&roots, Stat(mount));
  print.parts.emplace_back("the scratch mounts' roots", roots);
  print.parts.emplace_back("the keeper's limits and scheduling", OwnSchedule());
  return print;
}

std::string FingerprintDifference(const SandboxFingerprint& before,
                                  const SandboxFingerprint& after) {
  std::vector<std::string> differ;
  for (size_t i = 0; i < before.parts.size() && i < after.parts.size(); ++i) {
    if (before.parts[i] != after.parts[i]) differ.push_back(before.parts[i].first);
  }
  if (before.parts.size() != after.parts.size()) differ.emplace_back("the fingerprint");
  return absl::StrJoin(differ, ", ");
}

std::vector<std::string> ScratchMounts(absl::string_view mountinfo) {
  std::vector<std::string> out;
  for (absl::string_view line : absl::StrSplit(mountinfo, '\n', absl::SkipEmpty())) {
    // ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ');
    if (fields.size() < 10) continue;
    size_t dash = 6;
    while (dash < fields.size() && fields[dash] != "-") ++dash;
    if (dash + 1 >= fields.size()) continue;
    const absl::string_view type = fields[dash + 1];
    if (type != "tmpfs" && type != "mqueue") continue;
    // A whole file system, not a file or folder bound from one (the runtime's
    // masks of /proc entries are /dev/null bound from /dev's tmpfs).
    if (fields[3] != "/") continue;
    const std::vector<absl::string_view> options = absl::StrSplit(fields[5], ',');
    if (std::find(options.begin(), options.end(), "rw") == options.end()) continue;
    std::string mount_point = Unescape(fields[4]);
    if (mount_point == "/run/np-exec" || mount_point.rfind("/run/np-exec/", 0) == 0) continue;
    if (mount_point == "/") continue;  // bubblewrap's root is a tmpfs, read-only once set up.
    if (mount_point.rfind("/proc/", 0) == 0 || mount_point.rfind("/sys/", 0) == 0) continue;
    out.push_back(std::move(mount_point));
  }
  return out;
}

absl::Status KillAllOthers(int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const bool none_to_kill = kill(-1, SIGKILL) != 0 && errno == ESRCH;
    // Reap whatever has died (the keeper is PID 1: every orphan is its child).
    for (;;) {
      const pid_t reaped = waitpid(-1, nullptr, WNOHANG);
      if (reaped <= 0) break;
    }
    if (none_to_kill) {
      // Nothing left to signal; children that died meanwhile are reaped above.
      const pid_t left = waitpid(-1, nullptr, WNOHANG);
      if (left < 0 && errno == ECHILD) return absl::OkStatus();
    }
    if (std::chrono::steady_clock::now() > deadline)
      return ResetFailed("processes survive SIGKILL");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

absl::Status EmptyMount(const std::string& mount_point) {
  const int dir = open(mount_point.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0) return ResetFailed(absl::StrCat("open ", mount_point), errno);
  struct stat st;
  if (fstat(dir, &st) != 0) {
    close(dir);
    return ResetFailed(absl::StrCat("stat ", mount_point), errno);
  }
  return EmptyDirectory(dir, st.st_dev);
}

absl::Status RemoveSysvIpc() {
  absl::Status result = absl::OkStatus();
  for (int id : SysvIds("/proc/sysvipc/shm")) {
    if (shmctl(id, IPC_RMID, nullptr) != 0 && errno != EINVAL && errno != EIDRM) {
      result = ResetFailed("shmctl", errno);
    }
  }
  for (int id : SysvIds("/proc/sysvipc/sem")) {
    if (semctl(id, 0, IPC_RMID) != 0 && errno != EINVAL && errno != EIDRM) {
      result = ResetFailed("semctl", errno);
    }
  }
  for (int id : SysvIds("/proc/sysvipc/msg")) {
    if (msgctl(id, IPC_RMID, nullptr) != 0 && errno != EINVAL && errno != EIDRM) {
      result = ResetFailed("msgctl", errno);
    }
  }
  return result;
}

}  // namespace np::warm
