// The project a spawn runs in, found and opened once.
//
// A spawn decides on one look at the project: the folder is found from a
// directory descriptor (the working directory's, opened once at start-up)
// upward through "..", never by walking a path string again, so a program in
// an enclosing project's sandbox that renames the folder or swaps it for a
// link cannot make np-exec find another project, or none. The folder stays
// open for the spawn's life; its config is read once relative to that
// descriptor (ReadProjectConfigAt), and the one set of bytes read is what the
// plan, trust and the ratchet judge. Before anything runs, CheckProjectStillAt
// proves the path np-exec hands on (to a runtime, to the audit) still names
// the folder it opened. Reads the filesystem (and /proc/self/fd); never
// spawns and never reads the environment.
#ifndef NP_EXEC_CORE_PROJECT_LOCATION_H_
#define NP_EXEC_CORE_PROJECT_LOCATION_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/git_layout.h"
#include "nlohmann/json.hpp"

namespace np {

// An open descriptor, closed with the last copy of the location holding it.
class OpenFd {
 public:
  explicit OpenFd(int fd) : fd_(fd) {}
  ~OpenFd();
  OpenFd(const OpenFd&) = delete;
  OpenFd& operator=(const OpenFd&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

// `fd` itself when it is above the standard three, else a close-on-exec
// copy of it at 3 or above (and `fd` closed): a descriptor np-exec keeps or
// hands on never sits where a standard one was closed at start, where output
// or a child's stdin would reach it. -1 (errno set) when `fd` is -1 or no
// copy can be made.
int KeepAboveStandardFds(int fd);

struct ProjectLocation {
  // The project folder's own path (no link at any level, proved against the
  // folders walked when it was located); empty outside any project.
  std::string root;
  dev_t dev = 0;  // The opened folder's identity.
  ino_t ino = 0;
  // O_PATH descriptor of the folder (null outside a project).
  std::shared_ptr<const OpenFd> dir;
  // The folders above `root` that hold a `.nubos-pilot/` directory (not a
  // link), nearest first: the enclosing projects, seen on the same walk.
  std::vector<std::string> enclosing;
  // Where git's discovery from `root` stops, seen on the same walk.
  GitProbe git;
  bool found() const { return dir != nullptr; }
  int fd() const { return dir == nullptr ? -1 : dir->fd(); }
  // fd() when `path` is the opened folder's path (`root`), else -1: what
  // is judged below `path` is read through the descriptor only when the two
  // name the same folder (otherwise the spawn is refused, project-moved).
  int FdFor(absl::string_view path) const { return found() && path == root ? fd() : -1; }
};

// Walks up from the directory `start_fd` (not consumed) to the first folder
// whose `.nubos-pilot` is a directory (followed, as nubos-pilot's
// findProjectRoot does; a link there is refused when the config is read).
// `start_name` (the working directory's path, as getcwd gives it) less the
// levels walked is the folder's path when every level of it, by lstat, is the
// folder the walk went through; otherwise the kernel's name for the opened
// folder (/proc/self/fd), proved the same way. Outside any project: a
// location with found() false. Errors: `invalid-path` (the start cannot be
// opened or examined), `project-moved` (no name proves to be the walked
// folders': the folder was removed or moved during the walk). Whether `root`
// still names the folder later is CheckProjectStillAt's to say.
absl::StatusOr<ProjectLocation> LocateProject(int start_fd, absl::string_view start_name);

// LocateProject from the directory at `path` (absolute), opened here.
absl::StatusOr<ProjectLocation> LocateProjectFrom(absl::string_view path);

// The project's config, read once through the project's descriptor and never
// through a link (`.nubos-pilot` or `config.json` a link: `config-not-a-file`).
// The descriptors read through stay open, so what a sandbox is given of them
// (their read-only binds) is the very directory and file that were judged.
struct ProjectConfigRead {
  bool exists = false;                             // config.json is there.
  nlohmann::json json = nlohmann::json::object();  // Its parsed content.
  std::shared_ptr<const OpenFd> state_dir;         // `.nubos-pilot/`.
  std::shared_ptr<const OpenFd> file;              // config.json (null: none).
};
absl::StatusOr<ProjectConfigRead> ReadProjectConfigAt(const ProjectLocation& project);

// Whether `.nubos-pilot/milestones/` is a directory, through the descriptor.
bool HasMilestonesAt(const ProjectLocation& project);

// OK while `project.root` still names the folder that was opened: nothing
// renamed it, swapped it for a link, or removed it. Otherwise
// `project-moved`, and nothing may run.
absl::Status CheckProjectStillAt(const ProjectLocation& project);

// `project-moved`: the project's path, resolved again while np-exec planned a
// spawn, named `planned`, not the folder opened at `root`.
absl::Status ProjectMovedError(const std::string& root, const std::string& planned);

}  // namespace np

#endif  // NP_EXEC_CORE_PROJECT_LOCATION_H_
