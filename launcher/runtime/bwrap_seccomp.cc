#include "launcher/runtime/bwrap_seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "launcher/runtime/seccomp_error.h"

namespace np {
namespace {

// kSeccompFilterBpf: written by seccomp_filter_gen at build time.
#include "seccomp_filter_bpf.inc"

}  // namespace

const std::string& SeccompFilterProgram() {
  static const auto* program =
      new std::string(reinterpret_cast<const char*>(kSeccompFilterBpf), sizeof(kSeccompFilterBpf));
  return *program;
}

absl::StatusOr<int> BuildSeccompFilterFd() {
  const std::string& program = SeccompFilterProgram();
  int fd = memfd_create("np-exec seccomp filter", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return SeccompFilterError("memfd_create", errno);
  if (write(fd, program.data(), program.size()) != static_cast<ssize_t>(program.size()) ||
      lseek(fd, 0, SEEK_SET) != 0) {
    const int err = errno != 0 ? errno : EIO;
    close(fd);
    return SeccompFilterError("writing the filter", err);
  }
  // Sealed, so nothing that gets hold of the descriptor can change the filter.
  if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) != 0) {
    int err = errno;
    close(fd);
    return SeccompFilterError("sealing the filter", err);
  }
  return fd;
}

absl::Status AddSeccompArg(std::vector<std::string>& argv, int fd) {
  if (argv.empty()) return SeccompFilterError("no bubblewrap argv", EINVAL);
  for (size_t i = 1; i < argv.size() && argv[i] != "--"; ++i) {
    if (argv[i] == "--seccomp" || argv[i] == "--add-seccomp-fd") {
      return MakeError(
          absl::StatusCode::kInvalidArgument, "seccomp-filter-failed",
          absl::StrCat("the bubblewrap argv already names a system-call filter (", argv[i],
                       "); np-exec passes its own and refuses to run "
                       "with another, since bubblewrap would apply only one"),
          {{"option", argv[i]}});
    }
  }
  argv.insert(argv.begin() + 1, {"--seccomp", absl::StrCat(fd)});
  return absl::OkStatus();
}

}  // namespace np
