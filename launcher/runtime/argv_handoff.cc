#include "launcher/runtime/argv_handoff.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/bwrap_argv.h"
#include "core/errors.h"
#include "launcher/runtime/sealed_memfd.h"

namespace np {

absl::StatusOr<int> HandOffArgv(std::vector<std::string>& argv) {
  const size_t start = ArgvHandoffStart(argv);
  if (start == std::string::npos) return -1;
  std::string data;
  for (size_t i = start; i < argv.size(); ++i) {
    data += argv[i];
    data.push_back('\0');
  }
  // Close-on-exec until Supervise clears it for bubblewrap alone; sealed:
  // nothing inside can change what the entry point reads.
  const int fd = SealedMemfd("np-exec argv", data);
  if (fd < 0) {
    return MakeError(absl::StatusCode::kInternal, "spawn-failed",
                     absl::StrCat("cannot write the argv descriptor: ", strerror(errno)));
  }
  argv.resize(start - 1);  // Keeps "-- SELF argv-entry".
  argv.insert(argv.end(), {"--fd", absl::StrCat(fd)});
  return fd;
}

absl::StatusOr<std::vector<std::string>> ReadHandedOffArgv(int fd) {
  std::string data;
  char buffer[65536];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) data.append(buffer, static_cast<size_t>(n));
  const int err = errno;
  close(fd);
  if (n < 0) {
    return MakeError(absl::StatusCode::kInvalidArgument, "usage",
                     absl::StrCat("argv-entry cannot read its descriptor: ", strerror(err)));
  }
  std::vector<std::string> argv;
  size_t begin = 0;
  for (size_t i = 0; i < data.size(); ++i) {
    if (data[i] != '\0') continue;
    argv.emplace_back(data, begin, i - begin);
    begin = i + 1;
  }
  if (argv.empty() || argv.front().empty() || begin != data.size()) {
    return MakeError(absl::StatusCode::kInvalidArgument, "usage",
                     "argv-entry's descriptor holds no NUL-terminated program");
  }
  return argv;
}

}  // namespace np
