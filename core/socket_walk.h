// Finding the host's local endpoints under a directory (`/run` in practice):
// every directory below `root` that holds unix sockets (S_ISSOCK), so a mount of it, of
// anything inside it, or of an ancestor can be refused as a control surface
// (core/mounts.h). A longer list of known names would always miss the next
// daemon; a walk finds what is there.
//
// The walk is bounded and never follows a link: it opens each directory with
// O_NOFOLLOW relative to its parent's descriptor and looks at entries with
// fstatat(AT_SYMLINK_NOFOLLOW). A directory it cannot finish (unreadable,
// deeper than the depth limit, or past the entry budget) is reported as a
// whole: what np-exec cannot look into is not assumed harmless. Reads the
// file system; never spawns and opens no connection.
#ifndef NP_EXEC_CORE_SOCKET_WALK_H_
#define NP_EXEC_CORE_SOCKET_WALK_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace np {

struct SocketWalkLimits {
  // Levels of directories below `root` that are read (root's entries are
  // level 1).
  size_t max_depth = 6;
  // Directory entries looked at in all, across the walk.
  size_t max_entries = 20000;
};

// The directories below `root` (an absolute path) that hold sockets, and
// those the walk could not finish; one directly in `root` is reported
// as the file itself, and `root` only when its own listing could not be
// finished (then everything below it counts). Sorted, each once, none inside
// another, each a path below `root` as the walk reached it (no link in it).
// Empty when `root` cannot be opened as a directory (a link included).
std::vector<std::string> FindSocketHolders(absl::string_view root,
                                           const SocketWalkLimits& limits = SocketWalkLimits());

}  // namespace np

#endif  // NP_EXEC_CORE_SOCKET_WALK_H_
