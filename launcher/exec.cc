#include "launcher/exec.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/errors.h"

namespace np {

std::vector<char*> CStrings(const std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (const std::string& s : strings) pointers.push_back(const_cast<char*>(s.c_str()));
  pointers.push_back(nullptr);
  return pointers;
}

absl::Status ExecInPlace(const std::string& path, const std::vector<std::string>& argv,
                         const std::vector<std::string>& env) {
  std::vector<char*> args = CStrings(argv);
  std::vector<char*> envp = CStrings(env);
  execve(path.c_str(), args.data(), envp.data());
  int err = errno;
  if (err == ENOEXEC) {
    // No #! line: run it as a shell script, as execvp and the shells do.
    std::vector<std::string> shell_argv = {"/bin/sh", path};
    shell_argv.insert(shell_argv.end(), argv.begin() + 1, argv.end());
    std::vector<char*> shell_args = CStrings(shell_argv);
    execve("/bin/sh", shell_args.data(), envp.data());
    err = errno;
  }
  if (err == ENOENT) {
    return MakeError(absl::StatusCode::kNotFound, "program-not-found",
                     absl::StrCat("cannot run ", path, ": ", strerror(err)), {{"program", path}});
  }
  return MakeError(absl::StatusCode::kPermissionDenied, "program-not-executable",
                   absl::StrCat("cannot run ", path, ": ", strerror(err)),
                   {{"program", path}, {"errno", err}});
}

void CloseOnExecFrom(int first) {
  if (close_range(static_cast<unsigned>(first), ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    for (int fd = first; fd < 65536; ++fd) fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
}

}  // namespace np
