// The system-call filter of the bubblewrap sandbox (bubblewrap's --seccomp
// FD), close to docker's default profile: the calls a normal program never
// needs and that reach the kernel surface a container must not (nested user
// namespaces, mounts, the keyring, bpf, perf, ptrace, kexec, modules, ...)
// fail with EPERM, so programs that probe for them degrade gracefully instead
// of being killed. Built with libseccomp, the well-kept tool for this, never
// as hand-written BPF. Both the run path and the printed plan's sandbox-exec
// pass it, so a printed plan is as strict as a run.
#ifndef NP_EXEC_LAUNCHER_RUNTIME_BWRAP_SECCOMP_H_
#define NP_EXEC_LAUNCHER_RUNTIME_BWRAP_SECCOMP_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace np {

// The names of the calls the filter refuses outright.
const std::vector<std::string>& SeccompBlockedCalls();

// The values personality() may be called with (docker's default profile);
// any other fails with EPERM.
const std::vector<unsigned long>& SeccompAllowedPersonalities();

// The ioctl requests refused with EPERM on any descriptor: the terminal's
// TIOCSTI, TIOCLINUX and TIOCSETD.
const std::vector<unsigned long>& SeccompRefusedIoctls();

// The namespace flags clone and unshare are refused with (CLONE_NEWUSER,
// CLONE_NEWNS, ...): creating namespaces is bubblewrap's job, not the
// program's.
unsigned long SeccompRefusedCloneFlags();

// Compiles the filter and returns a close-on-exec descriptor (a sealed memfd)
// whose content, from offset 0, is the BPF program bubblewrap loads. The
// caller owns it. `seccomp-filter-failed` when libseccomp refuses.
absl::StatusOr<int> BuildSeccompFilterFd();

// Inserts "--seccomp FD" right after argv[0] of a bubblewrap argv. Refuses
// (`seccomp-filter-failed`) an argv whose bubblewrap options already name a
// filter (--seccomp, --add-seccomp-fd), since bubblewrap would apply only the
// last one.
absl::Status AddSeccompArg(std::vector<std::string>& argv, int fd);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_RUNTIME_BWRAP_SECCOMP_H_
