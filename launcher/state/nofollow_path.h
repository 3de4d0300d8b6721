// Directories opened one component at a time, never through a symbolic link:
// for np-exec's own writes below a project (the placeholders of protected
// paths), where a sandboxed program of an enclosing project can rename a
// folder and put a link in its place between np-exec's check and its write.
// And np-exec's small files (state records, caches, the host's account
// files) read without following a link in their place. Touches the
// filesystem.
#ifndef NP_EXEC_LAUNCHER_STATE_NOFOLLOW_PATH_H_
#define NP_EXEC_LAUNCHER_STATE_NOFOLLOW_PATH_H_

#include <sys/stat.h>

#include <functional>
#include <map>
#include <string>

#include "absl/strings/string_view.h"

namespace np {

// An O_PATH descriptor of the directory `absolute` (normalised, real), each
// component opened with O_NOFOLLOW; -1 with errno set (ELOOP or ENOTDIR for a
// link on the way). The caller closes it.
int OpenDirNoFollow(absl::string_view absolute);

// The same below the directory `dir` (not consumed): `relative` ("" is `dir`
// itself) opened one component at a time with O_NOFOLLOW.
int OpenDirNoFollowAt(int dir, absl::string_view relative);

// The folders below one directory a pass over several paths opens
// (OpenDirNoFollowAt), each once: `.git/` holds several protected paths.
// Closed with this object; `dir` is not consumed.
class FoldersBelow {
 public:
  explicit FoldersBelow(int dir) : dir_(dir) {}
  ~FoldersBelow();
  FoldersBelow(const FoldersBelow&) = delete;
  FoldersBelow& operator=(const FoldersBelow&) = delete;
  int dir() const { return dir_; }
  // OpenDirNoFollowAt(dir(), relative), kept for the next path in it; owned
  // by this object. -1 with errno set.
  int Open(absl::string_view relative);

 private:
  int dir_;
  std::map<std::string, int, std::less<>> open_;
};

// The directory `name` below `dir` (AT_FDCWD: `name` is a path) opened for
// reading, never through a link in its place (ELOOP) and never anything but
// a directory (ENOTDIR): one component, the last, not followed (for every
// one, OpenDirNoFollowAt). -1 with errno set. The caller closes it.
int OpenSubdirNoFollow(int dir, const char* name);

// A small file as ReadSmallFileAt found it.
struct SmallFile {
  // 0 when the file was opened and examined; else the errno of the open (ENOENT:
  // no file there; ELOOP: a symbolic link in its place), the fstat or the read.
  int error = 0;
  struct stat st = {};  // What fstat said of the opened file (error 0).
  // Its bytes, read only from a regular file, and at most `max_bytes` + 1 of
  // them: more than `max_bytes` means the file is too large.
  std::string text = {};
};

// Opens `name` below `dir` (AT_FDCWD: `name` is a path) without following a
// link in its place, without blocking on a FIFO there and without taking a
// terminal, and reads it when it is a regular file. The caller judges `st`
// (owner, mode, links) before trusting `text`.
SmallFile ReadSmallFileAt(int dir, const char* name, size_t max_bytes);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_STATE_NOFOLLOW_PATH_H_
