// Directories opened one component at a time, never through a symbolic link:
// for np-exec's own writes below a project (the placeholders of protected
// paths), where a sandboxed program of an enclosing project can rename a
// folder and put a link in its place between np-exec's check and its write.
// Touches the filesystem.
#ifndef NP_EXEC_LAUNCHER_NOFOLLOW_PATH_H_
#define NP_EXEC_LAUNCHER_NOFOLLOW_PATH_H_

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

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_NOFOLLOW_PATH_H_
