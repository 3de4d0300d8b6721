#include "core/project_location.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/config_file.h"
#include "core/errors.h"
#include "core/paths.h"

namespace np {
namespace {

constexpr int kPathDir = O_PATH | O_DIRECTORY | O_CLOEXEC;

absl::Status Unopenable(absl::string_view name, int err) {
  return MakeError(absl::StatusCode::kFailedPrecondition, "invalid-path",
                   absl::StrCat("cannot open the working directory ", name, ": ", strerror(err)),
                   {{"path", name}});
}

absl::Status Moved(absl::string_view root, absl::string_view why) {
  return MakeError(absl::StatusCode::kFailedPrecondition, "project-moved",
                   absl::StrCat("the project ", root, " ", why,
                                " while np-exec decided this spawn (renamed, removed or replaced "
                                "by a link); nothing ran. Something else is changing the folders "
                                "around the project: run np-exec again once it stopped"),
                   {{"project", root}, {"reason", why}});
}

// The kernel's name for the folder open at `fd`; "" when /proc cannot say.
std::string KernelName(int fd) {
  char buffer[PATH_MAX];
  const std::string link = absl::StrCat("/proc/self/fd/", fd);
  const ssize_t n = readlink(link.c_str(), buffer, sizeof(buffer) - 1);
  if (n <= 0) return "";
  return std::string(buffer, static_cast<size_t>(n));
}

// `path` less its last `levels` components ("/" at most).
std::string Ancestor(std::string path, int levels) {
  for (int i = 0; i < levels && path != "/"; ++i) {
    const size_t slash = path.rfind('/');
    path.resize(slash == 0 || slash == std::string::npos ? 1 : slash);
  }
  return path;
}

// Whether `dir` holds a `.nubos-pilot` directory; an error other than its
// absence (a folder made unreadable for the moment of the walk) is no answer.
absl::StatusOr<bool> IsStateDir(int dir, int flags, absl::string_view start_name) {
  struct stat st;
  if (fstatat(dir, ".nubos-pilot", &st, flags) == 0) return S_ISDIR(st.st_mode);
  if (errno == ENOENT || errno == ENOTDIR) return false;
  return Unopenable(start_name, errno);
}

}  // namespace

OpenFd::~OpenFd() {
  if (fd_ >= 0) close(fd_);
}

int KeepAboveStandardFds(int fd) {
  if (fd < 0 || fd >= 3) return fd;
  const int above = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  const int err = errno;
  close(fd);
  errno = err;
  return above;
}

namespace {

// What the walk from the start up to "/" saw.
struct Walk {
  ProjectLocation location;           // The nearest project's folder, held open.
  int project_level = -1;             // How far above the start it is.
  std::vector<int> enclosing_levels;  // How far above it the enclosing projects are.
  // Each level's identity, so the names derived from the project's path are
  // proved to be the folders the walk went through.
  std::vector<std::pair<dev_t, ino_t>> chain;
};

// Closes a level's descriptor unless the location keeps it.
void Release(const ProjectLocation& location, int fd) {
  if (fd != location.fd() && (location.git.dir == nullptr || fd != location.git.dir->fd())) {
    close(fd);
  }
}

// From the project's level up, until git's discovery stops: the repository
// is found on this walk (GitProbe), not on a second one.
void ProbeGit(ProjectLocation& location, int current, int level) {
  if (!location.found() || location.git.done) return;
  if (!ProbeGitLevel(current, level, location.git)) return;
  location.git.dir =
      current == location.fd() ? location.dir : std::make_shared<const OpenFd>(current);
}

// From the start's descriptor up through "..", never by path: each level's
// `.nubos-pilot` is looked for relative to the level's own descriptor.
absl::StatusOr<Walk> WalkUp(int start_fd, absl::string_view start_name) {
  int current = openat(start_fd, ".", kPathDir);
  if (current < 0) return Unopenable(start_name, errno);
  Walk walk;
  ProjectLocation& location = walk.location;
  struct stat here;
  if (fstat(current, &here) != 0) {
    const int err = errno;
    close(current);
    return Unopenable(start_name, err);
  }
  for (int levels = 0;; ++levels) {
    walk.chain.emplace_back(here.st_dev, here.st_ino);
    absl::StatusOr<bool> state =
        IsStateDir(current, location.found() ? AT_SYMLINK_NOFOLLOW : 0, start_name);
    if (!state.ok()) {
      Release(location, current);
      return state.status();
    }
    if (!location.found() && *state) {
      location.dir = std::make_shared<const OpenFd>(current);
      location.dev = here.st_dev;
      location.ino = here.st_ino;
      walk.project_level = levels;
    } else if (*state) {
      walk.enclosing_levels.push_back(levels - walk.project_level);
    }
    ProbeGit(location, current, levels - walk.project_level);
    // A ".." that cannot be opened is no top: fail rather than stop early.
    const int parent = openat(current, "..", kPathDir);
    const int err = errno;
    struct stat above;
    if (parent < 0 || fstat(parent, &above) != 0) {
      Release(location, current);
      if (parent >= 0) close(parent);
      return Unopenable(start_name, parent < 0 ? err : errno);
    }
    const bool top = above.st_dev == here.st_dev && above.st_ino == here.st_ino;
    Release(location, current);
    if (top) {
      close(parent);
      location.git.done = location.found();
      return walk;
    }
    // The parent's stat, taken through the descriptor the next level uses.
    current = parent;
    here = above;
  }
}

// The path's every ancestor must be the folder the walk passed at that
// level: a folder moved between the walk and the name (the project renamed
// to another depth) would otherwise name enclosing projects that are not the
// ones above it, and skip their ratchet. lstat: a name that passes through a
// link is not the folders' own name.
bool AncestorsWalked(const Walk& walk, const std::string& root) {
  const size_t above_project = walk.chain.size() - static_cast<size_t>(walk.project_level);
  for (size_t up = 0; up < above_project; ++up) {
    const std::string path = Ancestor(root, static_cast<int>(up));
    struct stat st;
    const auto& [dev, ino] = walk.chain[static_cast<size_t>(walk.project_level) + up];
    if (lstat(path.c_str(), &st) != 0 || st.st_dev != dev || st.st_ino != ino) return false;
    if (path == "/" && up + 1 != above_project) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<ProjectLocation> LocateProject(int start_fd, absl::string_view start_name) {
  absl::StatusOr<Walk> walk = WalkUp(start_fd, start_name);
  if (!walk.ok()) return walk.status();
  ProjectLocation& location = walk->location;
  if (!location.found()) return location;
  // The folder's path: the start's path less the levels walked (the working
  // directory's name from getcwd is already the kernel's), or, when that is
  // not the folders' own name (not a clean absolute path, a path through a
  // link, a folder renamed since), the kernel's name for the descriptor.
  // Either is proved to name, level by level, the folders the walk went through.
  const bool clean = !start_name.empty() && start_name.front() == '/' && !HasDotDot(start_name) &&
                     NormalizePath(start_name) == start_name;
  std::string name = clean ? Ancestor(std::string(start_name), walk->project_level) : "";
  if (name.empty() || !AncestorsWalked(*walk, name)) {
    name = KernelName(location.fd());
    if (name.empty() || name.front() != '/' || !AncestorsWalked(*walk, name)) {
      return Moved(start_name, "changed its place among the folders above it");
    }
  }
  location.root = name;
  for (int up : walk->enclosing_levels) {
    location.enclosing.push_back(Ancestor(location.root, up));
  }
  // `root` named the opened folder at this moment (the check's first level);
  // the run path proves it again once everything is decided (JudgeRun).
  return location;
}

absl::StatusOr<ProjectLocation> LocateProjectFrom(absl::string_view path) {
  absl::Status valid = CheckAbsolutePath(path, "invalid-path");
  if (!valid.ok()) return valid;
  const int fd = open(std::string(path).c_str(), kPathDir);
  if (fd < 0) return Unopenable(path, errno);
  absl::StatusOr<ProjectLocation> location = LocateProject(fd, path);
  close(fd);
  return location;
}

absl::StatusOr<ProjectConfigRead> ReadProjectConfigAt(const ProjectLocation& project) {
  ProjectConfigRead read;
  const int state =
      openat(project.fd(), ".nubos-pilot", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (state < 0) {
    // Found as a directory through a link: a link is never read.
    if (errno == ELOOP || errno == ENOTDIR) return ProjectConfigLinkError(".nubos-pilot");
    return MakeError(absl::StatusCode::kFailedPrecondition, "config-unreadable",
                     absl::StrCat("cannot read .nubos-pilot: ", strerror(errno)),
                     {{"file", ".nubos-pilot"}, {"reason", strerror(errno)}});
  }
  read.state_dir = std::make_shared<const OpenFd>(state);
  // O_NONBLOCK so that a FIFO planted as config.json cannot block every spawn.
  const int fd =
      openat(state, "config.json", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  const int err = errno;
  struct stat st;
  const bool is_link =
      fd < 0 && fstatat(state, "config.json", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
  if (fd < 0) {
    if (is_link) return ProjectConfigLinkError("config.json");
    if (err == ENOENT) return read;  // No file: defaults.
    return MakeError(absl::StatusCode::kFailedPrecondition, "config-unreadable",
                     absl::StrCat("cannot read config.json: ", strerror(err)),
                     {{"file", "config.json"}, {"reason", strerror(err)}});
  }
  read.exists = true;
  absl::StatusOr<nlohmann::json> json = ReadConfigOpen(fd, "config.json");
  // The file read stays open (the container tier pins it).
  const int kept = KeepAboveStandardFds(fd);
  if (kept >= 0) read.file = std::make_shared<const OpenFd>(kept);
  if (!json.ok()) return json.status();
  read.json = *std::move(json);
  return read;
}

bool HasMilestonesAt(const ProjectLocation& project) {
  struct stat st;
  return project.found() && fstatat(project.fd(), ".nubos-pilot/milestones", &st, 0) == 0 &&
         S_ISDIR(st.st_mode);
}

absl::Status CheckProjectStillAt(const ProjectLocation& project) {
  if (!project.found()) return absl::OkStatus();
  struct stat st;
  // Not followed: `root` was proved to be the folder's own name, with no link
  // at any level (LocateProject); a link put there since, even one to the
  // very folder, is a change of the path.
  if (lstat(project.root.c_str(), &st) != 0) return Moved(project.root, "is gone from its path");
  if (!S_ISDIR(st.st_mode) || st.st_dev != project.dev || st.st_ino != project.ino) {
    return Moved(project.root, "is no longer the folder at its path");
  }
  return absl::OkStatus();
}

absl::Status ProjectMovedError(const std::string& root, const std::string& planned) {
  return MakeError(
      absl::StatusCode::kFailedPrecondition, "project-moved",
      absl::StrCat("the project ", root, " resolved to ", planned,
                   " while np-exec planned this spawn (renamed or replaced by a link); "
                   "nothing ran. Something else is changing the folders around the "
                   "project: run np-exec again once it stopped"),
      {{"project", root}, {"planned", planned}});
}

}  // namespace np
