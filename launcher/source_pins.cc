#include "launcher/source_pins.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/config_file.h"
#include "core/egress_entry.h"
#include "core/errors.h"
#include "core/paths.h"
#include "launcher/state/nofollow_path.h"

namespace np {
namespace {

absl::Status Unstable(const std::string& source, absl::string_view why) {
  return MakeError(absl::StatusCode::kFailedPrecondition, "isolation-mount-source-unstable",
                   absl::StrCat("the mount source ", source, " ", why,
                                " between np-exec's check and the mount (a sandboxed program "
                                "can rename or link there); nothing ran"),
                   {{"source", source}});
}

// The kernel's name for what `fd` refers to; empty when it has none.
std::string OpenedPath(int fd) {
  char link[64];
  snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  char target[PATH_MAX];
  const ssize_t n = readlink(link, target, sizeof(target) - 1);
  return n > 0 ? std::string(target, static_cast<size_t>(n)) : std::string();
}

}  // namespace

SourcePins::~SourcePins() {
  std::vector<int> fds = handed_;
  if (root_fd_ >= 0) fds.push_back(root_fd_);
  for (const auto& [source, pin] : pinned_) {
    if (pin.fd >= 0) fds.push_back(pin.fd);
  }
  // The pins were opened one after another: each run of consecutive numbers,
  // all of them this object's, goes in one call (close_range, Linux 5.9; one
  // close each where it is missing).
  std::sort(fds.begin(), fds.end());
  for (size_t i = 0; i < fds.size();) {
    size_t j = i;
    while (j + 1 < fds.size() && fds[j + 1] == fds[j] + 1) ++j;
    if (j == i ||
        close_range(static_cast<unsigned>(fds[i]), static_cast<unsigned>(fds[j]), 0) != 0) {
      for (size_t k = i; k <= j; ++k) close(fds[k]);
    }
    i = j + 1;
  }
}

absl::StatusOr<SourcePin> SourcePins::Pin(const std::string& source) {
  auto known = pinned_.find(source);
  if (known != pinned_.end()) return Handed(known->second, /*first=*/false);
  struct stat st;
  const int fd = OpenSource(source, &st);
  if (fd < 0) {
    // Below the project a link on the way fails the no-follow walk with
    // ENOTDIR: a swap, not a removal.
    if (errno == ENOENT || (errno == ENOTDIR && !Below(source))) {
      return MakeError(absl::StatusCode::kFailedPrecondition, "isolation-mount-source-missing",
                       absl::StrCat("the mount source ", source,
                                    " is gone (moved or removed after np-exec checked it); "
                                    "nothing ran"),
                       {{"source", source}});
    }
    return Unstable(source, absl::StrCat("could not be opened (", strerror(errno), ")"));
  }
  // Every source np-exec pins is a real path (the plan resolved it), so any
  // other name for what was opened is a change: a link on the way or a
  // rename. Judging where the link points would be too late: a walk of the
  // swapped path goes through the link itself. Below the project the walk
  // from its held descriptor followed no link, so what it opened is the node
  // at that name below the judged folder: nothing to read back.
  if (!Below(source)) {
    const std::string opened = OpenedPath(fd);
    if (opened != source) {
      close(fd);
      return Unstable(source, absl::StrCat("resolved to ", opened.empty() ? "nothing" : opened));
    }
  }
  SourcePin pin;
  pin.dev = static_cast<uint64_t>(st.st_dev);
  pin.ino = static_cast<uint64_t>(st.st_ino);
  pin.type = static_cast<uint32_t>(st.st_mode & S_IFMT);
  if (keep_) {
    pin.fd = fd;
  } else {
    close(fd);
  }
  pinned_.emplace(source, pin);
  return Handed(pin, /*first=*/true);
}

absl::Status SourcePins::ReadBelow(const std::string& root, int fd) {
  if (fd < 0 || root_fd_ >= 0) return absl::OkStatus();
  root_fd_ = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (root_fd_ < 0)
    return Unstable(root, absl::StrCat("could not be kept (", strerror(errno), ")"));
  root_ = root;
  folders_.emplace(root_fd_);
  return absl::OkStatus();
}

bool SourcePins::Below(const std::string& source) const {
  return root_fd_ >= 0 && absl::StartsWith(source, absl::StrCat(root_, "/"));
}

int SourcePins::OpenSource(const std::string& source, struct stat* st) {
  if (!Below(source)) {
    const int fd = open(source.c_str(), O_PATH | O_CLOEXEC);
    if (fd >= 0 && fstat(fd, st) != 0) {
      const int error = errno;
      close(fd);
      errno = error;
      return -1;
    }
    return fd;
  }
  // A real path below the project has no link on the way: its folders are
  // opened without following one (a link swapped in fails with ELOOP or
  // ENOTDIR instead of leading elsewhere), and a final link is refused.
  const std::string relative = source.substr(root_.size() + 1);
  // A real path has no empty, "." or ".." component; one that has would not
  // name the node below the project it seems to.
  for (absl::string_view part : absl::StrSplit(relative, '/')) {
    if (part.empty() || part == "." || part == "..") {
      errno = EINVAL;
      return -1;
    }
  }
  const size_t slash = relative.rfind('/');
  // In the project folder itself: below its descriptor, not a copy of it.
  const int dir = slash == std::string::npos
                      ? root_fd_
                      : folders_->Open(absl::string_view(relative).substr(0, slash));
  if (dir < 0) return -1;
  const std::string name = slash == std::string::npos ? relative : relative.substr(slash + 1);
  const int fd = openat(dir, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  const int why = fstat(fd, st) != 0 ? errno : S_ISLNK(st->st_mode) ? ELOOP : 0;
  if (why != 0) {
    close(fd);
    errno = why;
    return -1;
  }
  return fd;
}

absl::Status SourcePins::Adopt(const std::string& source, int fd) {
  if (fd < 0 || pinned_.count(source) != 0) return absl::OkStatus();
  const std::string opened = OpenedPath(fd);
  if (opened != source) {
    return Unstable(source, absl::StrCat("was renamed to ", opened.empty() ? "nothing" : opened));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    return Unstable(source, absl::StrCat("could not be read (", strerror(errno), ")"));
  }
  SourcePin pin;
  pin.dev = static_cast<uint64_t>(st.st_dev);
  pin.ino = static_cast<uint64_t>(st.st_ino);
  pin.type = static_cast<uint32_t>(st.st_mode & S_IFMT);
  if (keep_) {
    pin.fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (pin.fd < 0)
      return Unstable(source, absl::StrCat("could not be kept (", strerror(errno), ")"));
  }
  pinned_.emplace(source, pin);
  return absl::OkStatus();
}

absl::Status AdoptProjectSnapshot(const Settings& settings, SourcePins& pins) {
  if (!settings.project.found()) return absl::OkStatus();
  const std::string& root = settings.project_root;
  absl::Status adopted = pins.ReadBelow(root, settings.project.fd());
  if (adopted.ok()) adopted = pins.Adopt(root, settings.project.fd());
  if (adopted.ok() && settings.state_dir_fd != nullptr) {
    adopted = pins.Adopt(JoinPath(root, ".nubos-pilot"), settings.state_dir_fd->fd());
  }
  if (adopted.ok() && settings.config_fd != nullptr) {
    adopted = pins.Adopt(ProjectConfigPath(root), settings.config_fd->fd());
  }
  return adopted;
}

SourcePin SourcePins::Handed(const SourcePin& pin, bool first) {
  // The first bind of a source takes the pin's own descriptor. bubblewrap
  // closes each descriptor once it has bound it, so a source bound again
  // (two targets of one folder) needs a descriptor per bind.
  if (pin.fd < 0) return pin;
  if (first) {
    by_fd_[pin.fd] = pin;
    return pin;
  }
  SourcePin handed = pin;
  handed.fd = fcntl(pin.fd, F_DUPFD_CLOEXEC, 3);
  if (handed.fd >= 0) {
    handed_.push_back(handed.fd);
    by_fd_[handed.fd] = handed;
  }
  return handed;
}

std::optional<SourcePin> SourcePins::HandedAs(int fd) const {
  auto known = by_fd_.find(fd);
  if (known == by_fd_.end()) return std::nullopt;
  return known->second;
}

absl::Status PrintedArgvLacks(absl::string_view what) {
  return MakeError(absl::StatusCode::kInternal, "spawn-failed",
                   absl::StrCat("the runtime's argv has no ", what, "; nothing ran"));
}

absl::Status ForEachPinnedPlaceholder(const std::vector<ProtectedBind>& binds,
                                      const std::string& project_real,
                                      const std::string& project_mount, SourcePins& pins,
                                      const PinnedPlaceholderFn& pinned) {
  for (const ProtectedBind& bind : binds) {
    if (!bind.placeholder || bind.writable) continue;
    // Inside, a git root's binds are at their host paths; the project's below
    // its mount point.
    const std::string source = BindHostPath(project_real, bind);
    absl::StatusOr<SourcePin> pin = pins.Pin(source);
    if (!pin.ok()) return pin.status();
    absl::Status done = pinned(source, BindHostPath(project_mount, bind), *pin);
    if (!done.ok()) return done;
  }
  return absl::OkStatus();
}

PinSourceFn SourcePins::AsFunction() {
  return [this](const std::string& source) { return Pin(source); };
}

}  // namespace np
