#include "core/socket_walk.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "core/paths.h"

namespace np {
namespace {

struct Walk {
  explicit Walk(const SocketWalkLimits& walk_limits) : limits(walk_limits) {}
  const SocketWalkLimits& limits;
  size_t entries = 0;
  std::vector<std::string> found;
};

// Reads the directory open at `fd` (owned: closed here), whose path is
// `path`, at `depth` (root: 0). True when it was read to the end.
bool WalkDirectory(int fd, const std::string& path, size_t depth, bool is_root, Walk& walk) {
  DIR* dir = fdopendir(fd);
  if (dir == nullptr) {
    close(fd);
    return false;
  }
  bool complete = true;
  bool holds_socket = false;
  while (dirent* entry = readdir(dir)) {
    const absl::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    if (++walk.entries > walk.limits.max_entries) {
      complete = false;
      break;
    }
    struct stat st;
    if (fstatat(dirfd(dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      // Gone since readdir: nothing to mount any more.
      continue;
    }
    const std::string child = JoinPath(path, name);
    if (S_ISSOCK(st.st_mode)) {
      if (is_root) {
        walk.found.push_back(child);
      } else {
        holds_socket = true;
      }
      continue;
    }
    if (!S_ISDIR(st.st_mode)) continue;  // Links are never followed.
    if (depth + 1 > walk.limits.max_depth) {
      walk.found.push_back(child);
      continue;
    }
    const int child_fd =
        openat(dirfd(dir), entry->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (child_fd < 0 || !WalkDirectory(child_fd, child, depth + 1, false, walk)) {
      walk.found.push_back(child);
    }
  }
  closedir(dir);
  if (holds_socket) walk.found.push_back(path);
  return complete;
}

}  // namespace

std::vector<std::string> FindSocketHolders(absl::string_view root, const SocketWalkLimits& limits) {
  const std::string start = NormalizePath(root);
  if (start.empty() || start.front() != '/') return {};
  const int fd = open(start.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return {};
  Walk walk(limits);
  if (!WalkDirectory(fd, start, 0, true, walk)) {
    // The root itself could not be read to the end: what was not seen may
    // hold anything, so the root as a whole is reported.
    walk.found.push_back(start);
  }
  std::sort(walk.found.begin(), walk.found.end());
  walk.found.erase(std::unique(walk.found.begin(), walk.found.end()), walk.found.end());
  // An outer directory already covers what lies below it.
  std::vector<std::string> out;
  for (const std::string& path : walk.found) {
    if (std::none_of(out.begin(), out.end(),
                     [&path](const std::string& outer) { return IsInside(path, outer); })) {
      out.push_back(path);
    }
  }
  return out;
}

}  // namespace np
