// git inside a linked worktree on the container tier.
//
// A worktree's `.git` is a file naming its git directory
// (`<common>/worktrees/<name>`), which lies with the repository's common
// directory outside the worktree, so with the project alone mounted git finds
// no repository. For a linked worktree the two directories are mounted at
// their own host paths, writable, because a commit writes objects, refs and
// logs in the common directory and the index and HEAD in the worktree's own
// git directory. What git on the HOST later obeys or runs stays read-only,
// with the same pinned parents and placeholders as inside the project
// (protected_paths.h): in the common directory its config, hooks, info,
// commondir and the git directories of submodules and other worktrees; in the
// worktree's git directory its commondir, gitdir and config.worktree.
//
// A repository could ship a `.git` file naming any host directory, so the git
// directory must be what `git worktree add` makes: inside `<common>/worktrees/`
// with a `gitdir` file that points back at this project's `.git`, and the
// common directory a repository (HEAD, objects/, refs/). Each directory is
// checked like any mount (no control surface, not the caller's home or one of
// its ancestors), and none may lie inside another project other than the
// repository's own main worktree: another project's sandbox could rename it
// and put a link in its place before the runtime resolves the path (the main
// worktree's `.git` is a mount point in its own sandboxes and cannot be
// renamed). A submodule or `--separate-git-dir` checkout (a `.git` file
// without a common directory of its own) is not mounted: git does not work
// inside, as before. Reads the filesystem (lstat, realpath, small reads).
#ifndef NP_EXEC_CORE_GIT_MOUNTS_H_
#define NP_EXEC_CORE_GIT_MOUNTS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/mounts.h"
#include "core/protected_paths.h"

namespace np {

struct GitMounts {
  // Real host paths, each mounted writable at the same path inside, in this
  // order (the worktree's git directory lies inside the common directory's
  // read-only `worktrees/`, so it comes second).
  std::vector<std::string> roots;
  // The read-only nodes and pinned parents inside the roots (`root` set),
  // to be bound after their root.
  std::vector<ProtectedBind> binds;
};

// What stays read-only in a worktree's own git directory.
const std::vector<std::string>& WorktreeGitDirEntries();

// The git mounts for `project_real` (a real path) whose project is mounted at
// `project_target`; empty unless the project is a linked worktree whose git
// directories lie outside it. `reserved_targets` are the sandbox's own
// targets (/tmp, HOME), which no root may be or hold. Codes:
// `project-git-invalid` (not a worktree `git worktree add` made, or one that
// does not point back: `git worktree repair` fixes a moved one),
// `isolation-mount-forbidden-source`, `isolation-project-too-broad` (a root
// that is or holds the caller's home), `isolation-git-dir-unsafe` (a root
// inside another project, or one whose path the sandbox's own targets
// cover), `isolation-protected-path-unsafe` (see PlanProtectedBinds).
// `git`: the project's git as the spawn read it once (null: read here).
absl::StatusOr<GitMounts> PlanGitMounts(absl::string_view project_real,
                                        absl::string_view project_target, const MountPolicy& policy,
                                        absl::string_view home_real,
                                        const std::vector<std::string>& reserved_targets,
                                        const ProjectGit* git = nullptr);

}  // namespace np

#endif  // NP_EXEC_CORE_GIT_MOUNTS_H_
