#include "launcher/runtime/bwrap_seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "launcher/runtime/sealed_memfd.h"
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
  // Sealed, so nothing that gets hold of the descriptor can change the filter.
  const int fd = SealedMemfd("np-exec seccomp filter", SeccompFilterProgram());
  if (fd < 0) return SeccompFilterError("writing the filter", errno);
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
