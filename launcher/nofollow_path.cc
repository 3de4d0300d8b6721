#include "launcher/nofollow_path.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <vector>

#include "absl/strings/str_split.h"

namespace np {

int OpenDirNoFollow(absl::string_view absolute) {
  if (absolute.empty() || absolute.front() != '/') {
    errno = EINVAL;
    return -1;
  }
  int dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return -1;
  for (absl::string_view name : absl::StrSplit(absolute, '/', absl::SkipEmpty())) {
    const std::string component(name);
    const int next = openat(dir, component.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    const int error = errno;
    close(dir);
    if (next < 0) {
      // O_PATH with O_NOFOLLOW opens a link itself, and O_DIRECTORY then fails
      // with ENOTDIR: a link on the way reads as one.
      errno = error;
      return -1;
    }
    dir = next;
  }
  return dir;
}

}  // namespace np
