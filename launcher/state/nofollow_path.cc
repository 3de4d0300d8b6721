#include "launcher/state/nofollow_path.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "absl/strings/str_split.h"

namespace np {

int OpenDirNoFollow(absl::string_view absolute) {
  if (absolute.empty() || absolute.front() != '/') {
    errno = EINVAL;
    return -1;
  }
  const int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) return -1;
  const int dir = OpenDirNoFollowAt(root, absolute);
  const int error = errno;
  close(root);
  errno = error;
  return dir;
}

int OpenSubdirNoFollow(int dir, const char* name) {
  return openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

int OpenDirNoFollowAt(int start, absl::string_view relative) {
  // `dir` is -1 while the walk is still at `start`, which is the caller's.
  int dir = -1;
  for (absl::string_view name : absl::StrSplit(relative, '/', absl::SkipEmpty())) {
    const std::string component(name);
    if (component == "..") {
      if (dir >= 0) close(dir);
      errno = EINVAL;
      return -1;
    }
    const int next = openat(dir < 0 ? start : dir, component.c_str(),
                            O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    const int error = errno;
    if (dir >= 0) close(dir);
    if (next < 0) {
      // O_PATH with O_NOFOLLOW opens a link itself, and O_DIRECTORY then fails
      // with ENOTDIR: a link on the way reads as one.
      errno = error;
      return -1;
    }
    dir = next;
  }
  // No component: a descriptor of `start` itself, the caller's to close.
  return dir >= 0 ? dir : openat(start, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
}

FoldersBelow::~FoldersBelow() {
  for (const auto& [relative, fd] : open_) close(fd);
}

int FoldersBelow::Open(absl::string_view relative) {
  auto known = open_.find(relative);
  if (known != open_.end()) return known->second;
  const int fd = OpenDirNoFollowAt(dir_, relative);
  if (fd >= 0) open_.emplace(std::string(relative), fd);
  return fd;
}

namespace {

// Reads `fd` into `file.text`, at most `limit` bytes, straight into the
// string (no buffer on the stack under the deepest frames): sized from
// fstat's size and one byte more, to see a file that grew (4 KB for a file
// with no size, as /proc's), and grown while it keeps giving bytes.
void ReadInto(int fd, SmallFile& file, size_t limit) {
  constexpr size_t kUnsized = 4096;
  const size_t size = static_cast<size_t>(file.st.st_size);
  size_t got = 0;
  file.text.resize(std::min(limit, size > 0 ? size + 1 : kUnsized));
  while (got < file.text.size() || file.text.size() < limit) {
    if (got == file.text.size()) file.text.resize(std::min(limit, file.text.size() * 2));
    const ssize_t n = read(fd, &file.text[got], file.text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) file.error = errno;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
    // A short read that brought the file to the size fstat gave is its end
    // (the store's records are replaced by rename, never written in place):
    // no further read to hear so.
    if (got == size && got < file.text.size()) break;
  }
  file.text.resize(got);
}

}  // namespace

SmallFile ReadSmallFileAt(int dir, const char* name, size_t max_bytes) {
  SmallFile file;
  const int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    file.error = errno;
    return file;
  }
  if (fstat(fd, &file.st) != 0) {
    file.error = errno;
  } else if (S_ISREG(file.st.st_mode)) {
    ReadInto(fd, file, max_bytes + 1);
  }
  close(fd);
  return file;
}

}  // namespace np
