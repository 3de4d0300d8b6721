// Replacing np-exec with the program: no np-exec process remains, so stdin,
// stdout, stderr, signals and the exit status are the program's own. Execs.
#ifndef NP_EXEC_LAUNCHER_EXEC_H_
#define NP_EXEC_LAUNCHER_EXEC_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace np {

// execve()s `path` with `argv` and `env`; a file without a #! line is run by
// /bin/sh, as execvp would. Returns only on failure: `program-not-found`
// (ENOENT) or `program-not-executable` (EACCES, ENOEXEC, ...).
absl::Status ExecInPlace(const std::string& path, const std::vector<std::string>& argv,
                         const std::vector<std::string>& env);

// Marks every descriptor from `first` up close-on-exec (CLOSE_RANGE_CLOEXEC,
// one at a time on kernels without it): only what a child is meant to get
// survives its exec. Async-signal-safe.
void CloseOnExecFrom(int first);

// Pointer arrays for exec; they borrow the strings.
std::vector<char*> CStrings(const std::vector<std::string>& strings);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_EXEC_H_
