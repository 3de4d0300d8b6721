#include "core/git_mounts.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "core/config_file.h"
#include "core/errors.h"
#include "core/git_layout.h"
#include "core/paths.h"

namespace np {
namespace {

absl::Status NotAWorktree(absl::string_view path, absl::string_view why) {
  return MakeError(absl::StatusCode::kFailedPrecondition, "project-git-invalid",
                   absl::StrCat("git's ", path, " ", why,
                                "; np-exec mounts only a worktree that `git worktree add` made. "
                                "If the worktree or repository moved, run `git worktree repair`"),
                   {{"path", path}});
}

absl::Status Unsafe(absl::string_view root, absl::string_view why) {
  return MakeError(absl::StatusCode::kFailedPrecondition, "isolation-git-dir-unsafe",
                   absl::StrCat("the worktree's git directory ", root, " ", why,
                                "; np-exec will not mount it into the sandbox. Keep the "
                                "repository outside other projects"),
                   {{"path", root}});
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool IsFile(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The checks every root gets, as any mount source and more.
absl::Status CheckRoot(const std::string& root, const std::string& main_top,
                       absl::string_view project_target, const MountPolicy& policy,
                       absl::string_view home_real,
                       const std::vector<std::string>& reserved_targets) {
  if (TouchesForbidden(root, policy)) {
    return MakeError(absl::StatusCode::kPermissionDenied, "isolation-mount-forbidden-source",
                     absl::StrCat("the worktree's git directory ", root,
                                  " is, lies in or holds a host control surface"),
                     {{"source", root}});
  }
  if (!home_real.empty() && IsInside(home_real, root)) {
    return MakeError(absl::StatusCode::kPermissionDenied, "isolation-project-too-broad",
                     absl::StrCat("the worktree's git directory ", root,
                                  " is or holds the home directory ", home_real),
                     {{"source", root}});
  }
  // Below /tmp is fine, as for the project itself: the sandbox's tmpfs is
  // mounted first and the binds on top. Holding it (or HOME) is not.
  for (const std::string& target : reserved_targets) {
    if (IsInside(target, root)) return Unsafe(root, absl::StrCat("would be mounted over ", target));
  }
  if (IsInside(root, project_target) || IsInside(project_target, root)) {
    return Unsafe(root,
                  absl::StrCat("would be mounted over or inside the project at ", project_target));
  }
  for (const std::string& project : ProjectsAtOrAbove(ParentPath(root))) {
    if (project != main_top) {
      return Unsafe(root, absl::StrCat("lies inside the project ", project,
                                       ", whose sandboxes could replace it with a link"));
    }
  }
  return absl::OkStatus();
}

// PlanProtectedBinds below `root`, each bind marked with it.
absl::Status AddRootBinds(const std::string& root, const std::vector<std::string>& entries,
                          GitMounts& mounts) {
  absl::StatusOr<std::vector<ProtectedBind>> binds = PlanProtectedBinds(root, entries);
  if (!binds.ok()) return binds.status();
  mounts.roots.push_back(root);
  for (ProtectedBind& bind : *binds) {
    bind.root = root;
    mounts.binds.push_back(std::move(bind));
  }
  return absl::OkStatus();
}

}  // namespace

const std::vector<std::string>& WorktreeGitDirEntries() {
  // commondir and gitdir say where the repository and the worktree are;
  // config.worktree is this worktree's config; info/ its sparse-checkout.
  static const auto* entries =
      new std::vector<std::string>{"commondir", "gitdir", "config.worktree", "info/"};
  return *entries;
}

absl::StatusOr<GitMounts> PlanGitMounts(absl::string_view project_real,
                                        absl::string_view project_target, const MountPolicy& policy,
                                        absl::string_view home_real,
                                        const std::vector<std::string>& reserved_targets,
                                        const ProjectGit* git_read) {
  absl::StatusOr<GitLayout> git = OwnGitLayout(project_real, git_read);
  if (!git.ok()) return git.status();
  GitMounts mounts;
  // A `.git` directory is mounted with the project; git directories inside
  // the project are protected there (ProtectedList); a `.git` file without a
  // common directory of its own (a submodule, --separate-git-dir) is not
  // mounted at all.
  if (git->kind != GitLayout::Kind::kFile || git->git_dir == git->common_dir ||
      IsInside(git->git_dir, project_real) || IsInside(git->common_dir, project_real)) {
    return mounts;
  }
  const std::string dot_git = JoinPath(project_real, ".git");
  if (ParentPath(git->git_dir) != JoinPath(git->common_dir, "worktrees")) {
    return NotAWorktree(dot_git, absl::StrCat("names ", git->git_dir, ", which is not in ",
                                              JoinPath(git->common_dir, "worktrees")));
  }
  if (git->backlink != dot_git) {
    return NotAWorktree(JoinPath(git->git_dir, "gitdir"),
                        absl::StrCat("does not point back at ", dot_git));
  }
  if (!IsFile(JoinPath(git->common_dir, "HEAD")) ||
      !IsDirectory(JoinPath(git->common_dir, "objects")) ||
      !IsDirectory(JoinPath(git->common_dir, "refs"))) {
    return NotAWorktree(git->common_dir, "is not a repository (no HEAD, objects/ and refs/)");
  }
  if (IsInside(project_real, git->common_dir)) {
    return NotAWorktree(git->common_dir, absl::StrCat("holds the project ", project_real));
  }
  // The main worktree of a repository whose common directory is its `.git`.
  const std::string main_top =
      BaseName(git->common_dir) == ".git" ? ParentPath(git->common_dir) : std::string();
  for (const std::string* root : {&git->common_dir, &git->git_dir}) {
    absl::Status ok =
        CheckRoot(*root, main_top, project_target, policy, home_real, reserved_targets);
    if (!ok.ok()) return ok;
  }
  absl::Status common = AddRootBinds(git->common_dir, GitProtectedEntries(), mounts);
  if (!common.ok()) return common;
  absl::Status own = AddRootBinds(git->git_dir, WorktreeGitDirEntries(), mounts);
  if (!own.ok()) return own;
  return mounts;
}

}  // namespace np
