// The system-call filter of the bubblewrap sandbox (bubblewrap's --seccomp
// FD; its rules in seccomp_rules.h). libseccomp compiled it when np-exec was
// built, so a spawn only copies the program into a sealed memfd: compiling
// it took about a tenth of a millisecond of every spawn. Both the run path
// and the printed plan's sandbox-exec pass it, so a printed plan is as strict
// as a run.
#ifndef NP_EXEC_LAUNCHER_RUNTIME_BWRAP_SECCOMP_H_
#define NP_EXEC_LAUNCHER_RUNTIME_BWRAP_SECCOMP_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace np {

// The BPF program compiled at build time (CompileSeccompFilter's bytes).
const std::string& SeccompFilterProgram();

// A close-on-exec descriptor (a sealed memfd) whose content, from offset 0,
// is SeccompFilterProgram(). The caller owns it. `seccomp-filter-failed`
// when the memfd cannot be made.
absl::StatusOr<int> BuildSeccompFilterFd();

// Inserts "--seccomp FD" right after argv[0] of a bubblewrap argv. Refuses
// (`seccomp-filter-failed`) an argv whose bubblewrap options already name a
// filter (--seccomp, --add-seccomp-fd), since bubblewrap would apply only the
// last one.
absl::Status AddSeccompArg(std::vector<std::string>& argv, int fd);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_RUNTIME_BWRAP_SECCOMP_H_
