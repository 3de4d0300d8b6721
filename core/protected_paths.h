// The protected paths: what stays read-only inside the container tier's
// sandbox although the project around them is writable.
//
// Each is something a program on the HOST later reads or runs on the
// project's behalf: np-exec's own config and audit log, the payload the host
// runs with node (`.nubos-pilot/bin/`), git's exec surface (hooks, config,
// commondir, submodule and worktree git directories, and a worktree's `.git`
// file), and the files other host tools execute: the agent CLIs' project
// settings, editors' and dev containers' settings that run commands on open,
// direnv's `.envrc` (ProtectedPathTable says which runs what). A read-only
// bind of a file is useless if its parent can be renamed away and rebuilt, so
// every existing parent directory inside the project is bound onto itself as
// well: a mount point cannot be renamed or removed (EBUSY), so the path to
// each protected node is pinned. A protected path that does not exist yet is
// covered by a placeholder: an empty node the launcher creates before the
// spawn and binds read-only, so the program cannot create it; the launcher
// removes it after the last concurrent spawn of the project ends, and the
// spawn's watchdog after a killed np-exec (protected_placeholders.h). Each
// placeholder is chosen so that its presence changes nothing a host tool or
// np-exec decides and nothing shows in the user's `git status`: a missing file
// is held by a S_IFSOCK node no one listens on (PlaceholderKindOf), which git
// never lists and no tool can open; an empty directory is not listed either
// and is no repository (git looks further up); empty hooks, modules and
// worktrees directories hold nothing. Inside a git directory, where git status
// never looks, and for np-exec's own config.json the placeholder stays a
// regular file, since git and np-exec read those and refuse an S_IFSOCK node:
// an empty config.json means defaults, and `.git/commondir` reads "." (the git
// directory itself, as if the file were absent; git refuses an empty one).
//
// The list is data; `isolation.container.protect` extends it and can never
// shorten it. Pure apart from lstat/readlink/realpath of the project's own
// files.
#ifndef NP_EXEC_CORE_PROTECTED_PATHS_H_
#define NP_EXEC_CORE_PROTECTED_PATHS_H_

#include <sys/stat.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/git_layout.h"
#include "core/mounts.h"
#include "nlohmann/json.hpp"

namespace np {

// np-exec's audit log directory, relative to the project.
inline constexpr absl::string_view kAuditDir = ".nubos-pilot/audit";
// The modes that mark a placeholder. The owner may still write one (so a
// host tool that writes the file or fills the directory during a spawn keeps
// working, and what it wrote stays); the sandbox sees it read-only.
inline constexpr unsigned kPlaceholderFileMode = 0600;
inline constexpr unsigned kPlaceholderDirMode = 0700;
// An S_IFSOCK placeholder has no permission bits: connecting to one needs
// write permission on it, so one of mode 0 serves no one but root, and
// removing it takes nothing from anyone.
inline constexpr unsigned kPlaceholderSocketMode = 0;
// Most entries `isolation.container.protect` may add.
inline constexpr size_t kMaxProtectEntries = 64;

// One built-in protected path and what on the host executes or obeys it.
struct ProtectedPathEntry {
  std::string path;     // Relative; a trailing "/" marks a directory.
  std::string runs_it;  // What reads or runs it on the host, one line.
};

// The built-in table, one row per path, in a fixed order: np-exec's own
// files, git's (below `.git/`), then what other host tools run (agent CLIs,
// editors, dev containers, direnv). The README's list is checked against it
// (tests/recipes/protected_paths_table_test.cc).
const std::vector<ProtectedPathEntry>& ProtectedPathTable();

// The git rows, relative to a git directory; ProtectedList adds them for a
// worktree's git and common directories too.
const std::vector<ProtectedPathEntry>& GitProtectedTable();

// The paths of ProtectedPathTable, relative to the project; a trailing "/"
// marks a directory (what a placeholder for it is).
const std::vector<std::string>& DefaultProtectedPaths();

// The paths of GitProtectedTable, relative to a git directory.
const std::vector<std::string>& GitProtectedEntries();

// Validates `isolation.container.protect`: an array (at most
// kMaxProtectEntries) of non-empty relative paths inside the project: not
// absolute, no "..", no NUL, newline or carriage return, at most 1024 bytes.
// Returned normalised ("./a//b/" -> "a/b/", the trailing "/" kept). Codes:
// `isolation-invalid-value` (not an array of strings),
// `isolation-protect-bad-path`.
absl::StatusOr<std::vector<std::string>> ParseProtect(const nlohmann::json& value);

// The full list for the project `project_real` (a real path): the defaults,
// the git entries of a worktree's git and common directories when they lie
// inside the project, and `extra`. Relative, normalised, each once. Code:
// `project-git-invalid` (see git_layout.h).
// `git`: the project's git as the spawn read it once (null: read here);
// `project_fd` as for PlanProtectedBinds (below).
absl::StatusOr<std::vector<std::string>> ProtectedList(absl::string_view project_real,
                                                       const std::vector<std::string>& extra,
                                                       const ProjectGit* git = nullptr,
                                                       int project_fd = -1);

// One bind the sandbox gets on top of the project mount. Source and target
// are the same node: `relative` below the project's host path and below its
// target inside.
struct ProtectedBind {
  std::string relative;  // ".git/hooks"; never empty, never "..".
  // True: an existing parent directory bound onto itself, writable, only so
  // that it becomes a mount point and cannot be renamed away. False: the
  // protected node, read-only.
  bool writable = false;
  // True: the node does not exist, or is another spawn's placeholder; the
  // launcher creates it (a directory or a file holding PlaceholderContent,
  // see IsPlaceholder) before the spawn when it is missing then.
  bool placeholder = false;
  bool directory = false;  // What the node is (or the placeholder will be).
  // Empty: `relative` is below the project. Otherwise the real host path of a
  // directory mounted at its own path (a worktree's git directories, see
  // git_mounts.h): `relative` is below it, on the host and inside alike.
  std::string root;
};

// Where `bind` lies on the host: below `root`, or below `project_real`.
std::string BindHostPath(absl::string_view project_real, const ProtectedBind& bind);

// The binds for `project_real`: writable parents first, shallow before deep,
// then the read-only nodes. A missing path is covered at its first missing
// component (a placeholder directory when components follow), and a file in
// the way of a longer path is itself protected, so nothing below it can be
// created. Code `isolation-protected-path-unsafe` when a component is a
// symbolic link (retargetable from inside, and a bind would follow it out of
// the project), a node that is neither a file nor a directory, or a file with
// more than one hard link (a bind keeps the name read-only, not the inode);
// the message says to replace it.
//
// `project_fd`: the project folder the spawn opened (ProjectLocation::fd()),
// whose path is `project_real`; every node is then looked at relative to it
// (fstatat), so a folder swapped in at the path meanwhile is never what is
// judged. -1: by path (a git root outside the project, the tests).
absl::StatusOr<std::vector<ProtectedBind>> PlanProtectedBinds(
    absl::string_view project_real, const std::vector<std::string>& protected_list,
    int project_fd = -1);

// Everything PlanSpawn needs in one call: ProtectedList(project_real, extra),
// PlanProtectedBinds over it and CheckMountsAvoidProtected for `mounts`.
// `project_fd` as for PlanProtectedBinds.
absl::StatusOr<std::vector<ProtectedBind>> ProtectedBindsForSpawn(
    absl::string_view project_real, const std::vector<std::string>& extra,
    const std::vector<ValidatedMount>& mounts, const ProjectGit* git = nullptr,
    int project_fd = -1);

// What a placeholder file at `relative` holds: ".\n" for a `commondir`,
// else nothing.
absl::string_view PlaceholderContent(absl::string_view relative);

// What the launcher creates for a missing node. kSocket: an S_IFSOCK node of
// mode kPlaceholderSocketMode made with mknod (nothing listens on it). git
// lists no such node (status, -uall, --ignored, clean), every open of one fails
// (ENXIO), so a host tool reads nothing from it, and it binds like a file on
// docker, podman and bubblewrap. kFile: a regular file holding
// PlaceholderContent, for a node in a git directory (a `.git` component, or
// a git root's bind) and for np-exec's own `.nubos-pilot/config.json`.
enum class PlaceholderKind { kDirectory, kFile, kSocket };
PlaceholderKind PlaceholderKindOf(const ProtectedBind& bind);

// True when `st` (of an lstat of `relative`) looks like a placeholder: a
// S_IFSOCK node of mode kPlaceholderSocketMode, a regular file of mode
// kPlaceholderFileMode and PlaceholderContent's size (what np-exec made
// before it made sockets, too), or a directory of mode kPlaceholderDirMode
// without subdirectories. One that another spawn made (or a killed np-exec
// left) is protected as it is, never descended into, and removed like a new
// one when it is still empty.
bool IsPlaceholder(const struct stat& st, absl::string_view relative);

// Checks one bind before an argv carries it: `relative` is non-empty, relative,
// free of "..", NUL, newline and carriage return. Code
// `isolation-protected-path-unsafe`.
absl::Status ValidateProtectedBind(const ProtectedBind& bind);

// Refuses (`isolation-mount-protected-source`) a writable extra mount whose
// source is, lies inside or contains a protected node: the program would
// write the host's node through it. Read-only ones may show them.
absl::Status CheckMountsAvoidProtected(const std::vector<ValidatedMount>& mounts,
                                       absl::string_view project_real,
                                       const std::vector<ProtectedBind>& binds);

}  // namespace np

#endif  // NP_EXEC_CORE_PROTECTED_PATHS_H_
