// The rules of the bubblewrap sandbox's system-call filter, close to docker's
// default profile: the calls a normal program never needs and that reach the
// kernel surface a container must not (nested user namespaces, mounts, the
// keyring, bpf, perf, ptrace, kexec, modules, ...) fail with EPERM, so
// programs that probe for them degrade gracefully instead of being killed.
// Compiled with libseccomp, the well-kept tool for this, never as
// hand-written BPF: once, at build time (seccomp_filter_gen.cc writes the
// program into np-exec, bwrap_seccomp.h hands it over), and again by a unit
// test that checks np-exec carries exactly what libseccomp compiles.
#ifndef NP_EXEC_LAUNCHER_RUNTIME_SECCOMP_RULES_H_
#define NP_EXEC_LAUNCHER_RUNTIME_SECCOMP_RULES_H_

#include <string>
#include <vector>

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

// The filter as libseccomp compiles it for the native ABI: the BPF program
// bubblewrap loads (struct sock_filter entries). `seccomp-filter-failed`
// when libseccomp refuses.
absl::StatusOr<std::string> CompileSeccompFilter();

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_RUNTIME_SECCOMP_RULES_H_
