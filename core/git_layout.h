// Where git keeps a project's repository: the `.git` entry, the git directory
// it names and the common directory shared by every worktree.
//
// Two users: the protected paths (git's exec surface must be read-only inside
// the sandbox wherever it lies in the project) and the operator state store
// (one record per repository, so all worktrees of one repository share it).
// Reads the filesystem (lstat, realpath, small reads); never spawns.
#ifndef NP_EXEC_CORE_GIT_LAYOUT_H_
#define NP_EXEC_CORE_GIT_LAYOUT_H_

#include <sys/stat.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace np {

struct GitLayout {
  // What `<top>/.git` is. kNone: no repository at or above the directory.
  enum class Kind { kNone, kDirectory, kFile };
  Kind kind = Kind::kNone;
  std::string top;         // Real path of the directory holding `.git`.
  std::string git_dir;     // Real path of the git directory.
  std::string common_dir;  // Real path of the common directory (== git_dir unless a worktree).
  // A linked worktree's back-link: the real path of what `<git_dir>/gitdir`
  // names (git writes the worktree's `.git` file there). Empty when the git
  // directory has no such file or it names nothing that resolves.
  std::string backlink;
};

// Reads the layout of the repository `dir` (a real path) belongs to, walking
// up like git does; with `walk_up` false only `dir/.git` is looked at. A
// `.git` file must read `gitdir: PATH`; a `commondir` file in the git
// directory names the common directory. Code `project-git-invalid` for a
// `.git` that is neither a directory nor such a file, or names a directory
// that does not resolve.
absl::StatusOr<GitLayout> ReadGitLayout(absl::string_view dir, bool walk_up);

// A project's git, read once for a whole spawn: `own` is ReadGitLayout of
// the project alone (walk_up false: what the protected paths, the git mounts
// and the spawn lock judge), `repository` the same walking up (the state
// store's key: trust, the ratchet, the persistent home). One walk gives both.
// Every level is read through a descriptor: the project's own `.git` below
// `project_fd` (the opened project folder, project_location.h; -1: the folder
// `project_real` names now), whatever its path names meanwhile, and the
// folders above it through "..", each still named by its path (else
// `project-git-invalid`). What a `.git` file or link names is read by that
// name.
struct ProjectGit {
  std::string project_real;  // Whose layout this is.
  absl::StatusOr<GitLayout> own = GitLayout{};
  absl::StatusOr<GitLayout> repository = GitLayout{};
};
ProjectGit ReadProjectGit(absl::string_view project_real, int project_fd = -1);

class OpenFd;  // project_location.h

// Where git's own discovery stops above a folder, seen by the project walk
// (project_location.h) on its way up, so the repository is found on that one
// walk and not on a second one: the nearest level at or above the project
// whose `.git` git takes for a repository (a file, or a directory holding
// HEAD), counted in levels above the project (-1: none up to "/"), that
// level's folder descriptor and its `.git`'s stat (followed). A `.git` that
// could not be examined (err != 0) ends the search there too, and
// ReadProjectGitFrom reports it.
struct GitProbe {
  bool done = false;  // The walk has looked (or had no project to look from).
  int level = -1;
  std::shared_ptr<const OpenFd> dir;
  struct stat dot_git = {};
  int err = 0;
};
// One level of that search: `dir_fd` is the folder `level` above the
// project. Returns true when the search ends at this level (`probe` filled,
// `dir` left for the caller to hand over).
bool ProbeGitLevel(int dir_fd, int level, GitProbe& probe);
// ReadProjectGit from what the walk found: no second walk, and nothing read
// above the project unless the walk stopped there.
ProjectGit ReadProjectGitFrom(absl::string_view project_real, const GitProbe& probe);

// `git`'s layout when it is `project_real`'s, else a fresh read of it.
absl::StatusOr<GitLayout> OwnGitLayout(absl::string_view project_real, const ProjectGit* git);
absl::StatusOr<GitLayout> RepositoryGitLayout(absl::string_view project_real,
                                              const ProjectGit* git);

}  // namespace np

#endif  // NP_EXEC_CORE_GIT_LAYOUT_H_
