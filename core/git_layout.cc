#include "core/git_layout.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "core/paths.h"
#include "core/project_location.h"

namespace np {
namespace {

absl::Status Invalid(absl::string_view path, absl::string_view why) {
  return MakeError(absl::StatusCode::kFailedPrecondition, "project-git-invalid",
                   absl::StrCat("git's ", path, " ", why,
                                "; np-exec cannot tell which repository the project belongs to"),
                   {{"path", path}});
}

// The first line of a small file below `dir_fd` (git writes `.git` and
// `commondir` as one line), never through a link; NotFound when absent.
// `path` names it in messages.
absl::StatusOr<std::string> ReadFirstLineAt(int dir_fd, const char* name, const std::string& path) {
  int fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return absl::NotFoundError(path);
    return Invalid(path, absl::StrCat("cannot be read: ", strerror(errno)));
  }
  struct stat st;
  char buffer[PATH_MAX + 16];
  ssize_t n = -1;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) n = read(fd, buffer, sizeof(buffer));
  close(fd);
  if (n < 0) return Invalid(path, "is not a readable regular file");
  std::string text(buffer, static_cast<size_t>(n));
  text = text.substr(0, text.find('\n'));
  absl::StripTrailingAsciiWhitespace(&text);
  return text;
}

absl::StatusOr<std::string> ReadFirstLine(const std::string& path) {
  return ReadFirstLineAt(AT_FDCWD, path.c_str(), path);
}

absl::StatusOr<std::string> RealDirectory(const std::string& base, const std::string& named,
                                          const std::string& from) {
  if (named.empty() || named.find('\0') != std::string::npos) return Invalid(from, "is empty");
  const std::string joined = named.front() == '/' ? named : JoinPath(base, named);
  char real[PATH_MAX];
  struct stat st;
  if (realpath(joined.c_str(), real) == nullptr || stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Invalid(from, absl::StrCat("names ", joined, ", which is not a directory"));
  }
  return std::string(real);
}

// The git directory `<top>/.git` is, read through `dir_fd` (the folder `top`
// names): the folder itself when it is one, else where its link points.
absl::StatusOr<std::string> GitDirectoryAt(const GitLayout& layout, int dir_fd) {
  const std::string dot_git = JoinPath(layout.top, ".git");
  struct stat st;
  if (fstatat(dir_fd, ".git", &st, AT_SYMLINK_NOFOLLOW) != 0) return Invalid(dot_git, "vanished");
  if (S_ISDIR(st.st_mode)) return dot_git;
  char target[PATH_MAX];
  const ssize_t n = readlinkat(dir_fd, ".git", target, sizeof(target) - 1);
  if (n <= 0) return Invalid(dot_git, "does not resolve");
  return RealDirectory(layout.top, std::string(target, static_cast<size_t>(n)), dot_git);
}

// Fills git_dir and common_dir from `<top>/.git`, a directory or a file, read
// through `dir_fd`; what `.git` names lies outside the folder and is read by
// its path.
absl::Status ReadRepository(GitLayout& layout, int dir_fd) {
  const std::string dot_git = JoinPath(layout.top, ".git");
  std::string git_dir;
  if (layout.kind == GitLayout::Kind::kFile) {
    absl::StatusOr<std::string> line = ReadFirstLineAt(dir_fd, ".git", dot_git);
    if (!line.ok())
      return absl::IsNotFound(line.status()) ? Invalid(dot_git, "vanished") : line.status();
    if (!absl::StartsWith(*line, "gitdir:")) return Invalid(dot_git, "does not say gitdir: PATH");
    std::string named(absl::StripLeadingAsciiWhitespace(line->substr(7)));
    absl::StatusOr<std::string> real = RealDirectory(layout.top, named, dot_git);
    if (!real.ok()) return real.status();
    git_dir = *real;
  } else {
    absl::StatusOr<std::string> real = GitDirectoryAt(layout, dir_fd);
    if (!real.ok()) return real.status();
    git_dir = *real;
  }
  layout.git_dir = git_dir;
  layout.common_dir = git_dir;
  // A file of the git directory: through the folder when the git directory
  // is its own `.git`, else by its path.
  auto read_in_git_dir = [&](const char* name) {
    const std::string file = JoinPath(git_dir, name);
    return git_dir == dot_git ? ReadFirstLineAt(dir_fd, absl::StrCat(".git/", name).c_str(), file)
                              : ReadFirstLine(file);
  };
  const std::string commondir_file = JoinPath(git_dir, "commondir");
  absl::StatusOr<std::string> common = read_in_git_dir("commondir");
  if (absl::IsNotFound(common.status())) return absl::OkStatus();
  if (!common.ok()) return common.status();
  absl::StatusOr<std::string> real = RealDirectory(git_dir, *common, commondir_file);
  if (!real.ok()) return real.status();
  layout.common_dir = *real;
  absl::StatusOr<std::string> backlink = read_in_git_dir("gitdir");
  if (backlink.ok() && !backlink->empty() && backlink->find('\0') == std::string::npos) {
    const std::string named = backlink->front() == '/' ? *backlink : JoinPath(git_dir, *backlink);
    char resolved[PATH_MAX];
    if (realpath(named.c_str(), resolved) != nullptr) layout.backlink = resolved;
  }
  return absl::OkStatus();
}

// Whether git's discovery stops at the folder `dir_fd`: its `.git` (stat in
// `st`) is a file or a directory holding HEAD; an error other than its
// absence is `err`, and stops the search too.
bool GitStopsAt(int dir_fd, struct stat& st, int& err) {
  err = 0;
  // Followed, not lstat: git itself follows a `.git` link. The protected
  // paths refuse such a link separately (it could be retargeted from inside).
  if (fstatat(dir_fd, ".git", &st, 0) != 0) {
    err = errno == ENOENT || errno == ENOTDIR ? 0 : errno;
    return err != 0;
  }
  // A `.git` directory is a repository only when it holds HEAD, as git's own
  // discovery requires: an empty one (np-exec's placeholder for a missing
  // `.git`, or anything the sandboxed program left) is not, and the search
  // goes on upwards as git's does, so it never changes which repository, and
  // so which trust record, a project belongs to.
  struct stat head;
  return !S_ISDIR(st.st_mode) || fstatat(dir_fd, ".git/HEAD", &head, 0) == 0;
}

// The repository `<top>/.git` holds, read through `dir_fd` (the folder `top`
// names) whose `.git` GitStopsAt judged (`st`, `err`).
absl::StatusOr<GitLayout> LayoutFound(const std::string& top, int dir_fd, const struct stat& st,
                                      int err) {
  const std::string dot_git = JoinPath(top, ".git");
  if (err != 0) return Invalid(dot_git, absl::StrCat("cannot be examined: ", strerror(err)));
  GitLayout layout;
  layout.top = top;
  if (S_ISDIR(st.st_mode)) {
    layout.kind = GitLayout::Kind::kDirectory;
  } else if (S_ISREG(st.st_mode)) {
    layout.kind = GitLayout::Kind::kFile;
  } else {
    return Invalid(dot_git, "is neither a directory nor a file");
  }
  absl::Status read = ReadRepository(layout, dir_fd);
  if (!read.ok()) return read;
  return layout;
}

// The repository `<top>/.git` holds, read through `dir_fd` (the folder `top`
// names); nullopt when there is none at this level.
absl::StatusOr<std::optional<GitLayout>> LayoutAt(const std::string& top, int dir_fd) {
  struct stat st;
  int err = 0;
  if (!GitStopsAt(dir_fd, st, err)) return std::optional<GitLayout>();
  absl::StatusOr<GitLayout> layout = LayoutFound(top, dir_fd, st, err);
  if (!layout.ok()) return layout.status();
  return std::optional<GitLayout>(*std::move(layout));
}

// One level up from `fd` (consumed: replaced by the parent's descriptor)
// and `dir`, its path: through "..", and the parent's path must still name
// that folder (same device and inode), so a walk from a descriptor reads the
// folders really above the one that was opened, under the names it reports.
absl::Status StepUp(std::string& dir, int& fd) {
  const int parent = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
  close(fd);
  fd = parent;
  const size_t slash = dir.rfind('/');
  dir.resize(slash == 0 ? 1 : slash);
  struct stat by_fd;
  struct stat by_path;
  if (fd >= 0 && fstat(fd, &by_fd) == 0 && lstat(dir.c_str(), &by_path) == 0 &&
      by_fd.st_dev == by_path.st_dev && by_fd.st_ino == by_path.st_ino) {
    return absl::OkStatus();
  }
  if (fd >= 0) close(fd);
  fd = -1;
  return Invalid(dir, "was moved while np-exec read it");
}

// The layout from the folder `dir` names, read through `fd` (consumed),
// walking up through "..": the descriptor walk of ReadProjectGit.
absl::StatusOr<GitLayout> WalkUpFrom(std::string dir, int fd) {
  for (;;) {
    absl::StatusOr<std::optional<GitLayout>> here = LayoutAt(dir, fd);
    if (!here.ok() || here->has_value() || dir == "/") {
      close(fd);
      if (!here.ok()) return here.status();
      return here->has_value() ? **here : GitLayout{};
    }
    absl::Status up = StepUp(dir, fd);
    if (!up.ok()) return up;
  }
}

}  // namespace

absl::StatusOr<GitLayout> ReadGitLayout(absl::string_view dir, bool walk_up) {
  absl::Status valid = CheckAbsolutePath(dir, "invalid-path");
  if (!valid.ok()) return valid;
  std::string current = NormalizePath(dir);
  for (;;) {
    const int fd = open(current.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 && errno != ENOENT && errno != ENOTDIR) {
      return Invalid(current, absl::StrCat("cannot be opened: ", strerror(errno)));
    }
    absl::StatusOr<std::optional<GitLayout>> here =
        fd < 0 ? std::optional<GitLayout>() : LayoutAt(current, fd);
    if (fd >= 0) close(fd);
    if (!here.ok()) return here.status();
    if (here->has_value()) return **here;
    if (!walk_up || current == "/") return GitLayout{};
    const size_t slash = current.rfind('/');
    current.resize(slash == 0 ? 1 : slash);
  }
}

ProjectGit ReadProjectGit(absl::string_view project_real, int project_fd) {
  ProjectGit git;
  git.project_real = std::string(project_real);
  std::string dir = NormalizePath(project_real);
  // The opened project folder; without it, the folder the path names now.
  int fd = project_fd >= 0 ? fcntl(project_fd, F_DUPFD_CLOEXEC, 0)
                           : open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    git.own = git.repository = Invalid(dir, absl::StrCat("cannot be read: ", strerror(errno)));
    return git;
  }
  absl::StatusOr<std::optional<GitLayout>> own = LayoutAt(dir, fd);
  if (own.ok()) {
    git.own = own->value_or(GitLayout{});
  } else {
    git.own = own.status();
  }
  // Walking up from the project looks at the project's own `.git` first,
  // with the answer just read: only a project without one goes on upwards.
  if (!own.ok() || own->has_value() || dir == "/") {
    close(fd);
    git.repository = git.own;
    return git;
  }
  absl::Status up = StepUp(dir, fd);
  git.repository = up.ok() ? WalkUpFrom(dir, fd) : up;
  return git;
}

bool ProbeGitLevel(int dir_fd, int level, GitProbe& probe) {
  if (!GitStopsAt(dir_fd, probe.dot_git, probe.err)) return false;
  probe.done = true;
  probe.level = level;
  return true;
}

ProjectGit ReadProjectGitFrom(absl::string_view project_real, const GitProbe& probe) {
  ProjectGit git;
  git.project_real = std::string(project_real);
  if (probe.level < 0) return git;
  if (probe.dir == nullptr) {  // Found, but not held: never guessed as "none".
    git.own = git.repository = Invalid(std::string(project_real), "was not held by the walk");
    return git;
  }
  std::string top = NormalizePath(project_real);
  for (int up = 0; up < probe.level && top != "/"; ++up) top = ParentPath(top);
  git.repository = LayoutFound(top, probe.dir->fd(), probe.dot_git, probe.err);
  if (probe.level == 0) git.own = git.repository;
  return git;
}

absl::StatusOr<GitLayout> OwnGitLayout(absl::string_view project_real, const ProjectGit* git) {
  if (git != nullptr && git->project_real == project_real) return git->own;
  return ReadGitLayout(project_real, /*walk_up=*/false);
}

absl::StatusOr<GitLayout> RepositoryGitLayout(absl::string_view project_real,
                                              const ProjectGit* git) {
  if (git != nullptr && git->project_real == project_real) return git->repository;
  return ReadGitLayout(project_real, /*walk_up=*/true);
}

}  // namespace np
