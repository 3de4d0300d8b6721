#include "launcher/source_pins.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/config_file.h"
#include "core/errors.h"

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
  for (const auto& [source, pin] : pinned_) {
    if (pin.fd >= 0) close(pin.fd);
  }
}

absl::StatusOr<SourcePin> SourcePins::Pin(const std::string& source) {
  auto known = pinned_.find(source);
  if (known != pinned_.end()) return known->second;
  const int fd = open(source.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) {
      return MakeError(absl::StatusCode::kFailedPrecondition, "isolation-mount-source-missing",
                       absl::StrCat("the mount source ", source,
                                    " is gone (moved or removed after np-exec checked it); "
                                    "nothing ran"),
                       {{"source", source}});
    }
    return Unstable(source, absl::StrCat("could not be opened (", strerror(errno), ")"));
  }
  const std::string opened = OpenedPath(fd);
  if (opened != source && (opened.empty() || !ProjectsAtOrAbove(source).empty() ||
                           !ProjectsAtOrAbove(opened).empty())) {
    close(fd);
    return Unstable(source, absl::StrCat("resolved to ", opened.empty() ? "nothing" : opened));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int error = errno;
    close(fd);
    return Unstable(source, absl::StrCat("could not be read (", strerror(error), ")"));
  }
  SourcePin pin;
  pin.dev = static_cast<uint64_t>(st.st_dev);
  pin.ino = static_cast<uint64_t>(st.st_ino);
  if (keep_) {
    pin.fd = fd;
  } else {
    close(fd);
  }
  pinned_.emplace(source, pin);
  return pin;
}

PinSourceFn SourcePins::AsFunction() {
  return [this](const std::string& source) { return Pin(source); };
}

}  // namespace np
