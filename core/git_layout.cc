#include "core/git_layout.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "core/paths.h"

namespace np {
namespace {

absl::Status Invalid(absl::string_view path, absl::string_view why) {
  return MakeError(absl::StatusCode::kFailedPrecondition, "project-git-invalid",
                   absl::StrCat("git's ", path, " ", why,
                                "; np-exec cannot tell which repository the project belongs to"),
                   {{"path", path}});
}

// The first line of a small file (git writes `.git` and `commondir` as one
// line); nullopt-like empty status NotFound when the file is absent.
absl::StatusOr<std::string> ReadFirstLine(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
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

// Fills git_dir and common_dir from `top`/.git, which is a directory or file.
absl::Status ReadRepository(GitLayout& layout) {
  const std::string dot_git = JoinPath(layout.top, ".git");
  std::string git_dir = dot_git;
  if (layout.kind == GitLayout::Kind::kFile) {
    absl::StatusOr<std::string> line = ReadFirstLine(dot_git);
    if (!line.ok())
      return absl::IsNotFound(line.status()) ? Invalid(dot_git, "vanished") : line.status();
    if (!absl::StartsWith(*line, "gitdir:")) return Invalid(dot_git, "does not say gitdir: PATH");
    std::string named(absl::StripLeadingAsciiWhitespace(line->substr(7)));
    absl::StatusOr<std::string> real = RealDirectory(layout.top, named, dot_git);
    if (!real.ok()) return real.status();
    git_dir = *real;
  } else {
    char real[PATH_MAX];
    if (realpath(dot_git.c_str(), real) == nullptr) return Invalid(dot_git, "does not resolve");
    git_dir = real;
  }
  layout.git_dir = git_dir;
  layout.common_dir = git_dir;
  const std::string commondir_file = JoinPath(git_dir, "commondir");
  absl::StatusOr<std::string> common = ReadFirstLine(commondir_file);
  if (absl::IsNotFound(common.status())) return absl::OkStatus();
  if (!common.ok()) return common.status();
  absl::StatusOr<std::string> real = RealDirectory(git_dir, *common, commondir_file);
  if (!real.ok()) return real.status();
  layout.common_dir = *real;
  absl::StatusOr<std::string> backlink = ReadFirstLine(JoinPath(git_dir, "gitdir"));
  if (backlink.ok() && !backlink->empty() && backlink->find('\0') == std::string::npos) {
    const std::string named = backlink->front() == '/' ? *backlink : JoinPath(git_dir, *backlink);
    char resolved[PATH_MAX];
    if (realpath(named.c_str(), resolved) != nullptr) layout.backlink = resolved;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<GitLayout> ReadGitLayout(absl::string_view dir, bool walk_up) {
  absl::Status valid = CheckAbsolutePath(dir, "invalid-path");
  if (!valid.ok()) return valid;
  std::string current = NormalizePath(dir);
  for (;;) {
    const std::string dot_git = JoinPath(current, ".git");
    struct stat st;
    // stat, not lstat: git itself follows a `.git` link. The protected paths
    // refuse such a link separately (it could be retargeted from inside).
    // A `.git` directory is a repository only when it holds HEAD, as git's
    // own discovery requires: an empty one (np-exec's placeholder for a
    // missing `.git`, or anything the sandboxed program left) is not, and
    // the search goes on upwards as git's does, so it never changes which
    // repository, and so which trust record, a project belongs to.
    struct stat head;
    const bool not_a_repository = stat(dot_git.c_str(), &st) == 0 && S_ISDIR(st.st_mode) &&
                                  stat(JoinPath(dot_git, "HEAD").c_str(), &head) != 0;
    if (!not_a_repository && stat(dot_git.c_str(), &st) == 0) {
      GitLayout layout;
      layout.top = current;
      if (S_ISDIR(st.st_mode)) {
        layout.kind = GitLayout::Kind::kDirectory;
      } else if (S_ISREG(st.st_mode)) {
        layout.kind = GitLayout::Kind::kFile;
      } else {
        return Invalid(dot_git, "is neither a directory nor a file");
      }
      absl::Status read = ReadRepository(layout);
      if (!read.ok()) return read;
      return layout;
    }
    if (!not_a_repository && errno != ENOENT && errno != ENOTDIR) {
      return Invalid(dot_git, absl::StrCat("cannot be examined: ", strerror(errno)));
    }
    if (!walk_up || current == "/") return GitLayout{};
    const size_t slash = current.rfind('/');
    current.resize(slash == 0 ? 1 : slash);
  }
}

ProjectGit ReadProjectGit(absl::string_view project_real) {
  ProjectGit git;
  git.project_real = std::string(project_real);
  git.own = ReadGitLayout(project_real, /*walk_up=*/false);
  // Walking up from the project looks at the project's own `.git` first,
  // with the answer just read: only a project without one goes on upwards.
  const std::string normal = NormalizePath(project_real);
  if (!git.own.ok() || git.own->kind != GitLayout::Kind::kNone || normal == "/") {
    git.repository = git.own;
  } else {
    const size_t slash = normal.rfind('/');
    git.repository = ReadGitLayout(slash == 0 ? "/" : normal.substr(0, slash), /*walk_up=*/true);
  }
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
