// The bubblewrap argument vector: rights isolation without a daemon or image.
//
// Same guarantees as the container argv, spelled out for bubblewrap: new user,
// pid, net, ipc, uts and mount namespaces; --die-with-parent; --new-session
// (against TIOCSTI injection); every capability dropped (bubblewrap already
// sets no_new_privs); a read-only root made of the host's /usr plus only the
// /etc files programs need to start; /proc, a minimal /dev, and tmpfs /tmp and
// HOME; the project read-write at its own path. Environment values never enter
// the argv: the launcher execs bubblewrap with an environment it built, and
// bubblewrap passes that on. Pure apart from lstat/readlink of the host's
// top-level /bin, /lib* and /sbin.
#ifndef NP_EXEC_CORE_BWRAP_ARGV_H_
#define NP_EXEC_CORE_BWRAP_ARGV_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/container_argv.h"

namespace np {

// Reads /bin, /sbin, /lib, /lib32, /lib64 and /libx32 of the host.
std::vector<RootEntry> ReadHostRootLayout();

// The /etc files bound read-only (when present), never the whole /etc.
const std::vector<std::string>& SandboxEtcFiles();

// bubblewrap refuses a command line of more arguments than this (its
// MAX_ARGS), the program's own included.
inline constexpr size_t kBwrapMaxArgs = 9000;
// What the launcher adds when it runs the argv: --info-fd N, --seccomp N.
inline constexpr size_t kBwrapLauncherArgs = 4;
// The internal verb of np-exec's own static binary inside the sandbox (bound
// read-only at kEgressSelfTarget) that reads the program's argv from a
// descriptor and execs it: the way past kBwrapMaxArgs.
inline constexpr absl::string_view kArgvEntryVerb = "argv-entry";

// The mode bubblewrap gives a directory it makes for a mount point (/etc for
// the per-file binds, the parents of a mount target): 0700 whatever the
// umask (bubblewrap 0.8). The prepared /etc's own directories get it too.
inline constexpr unsigned kBwrapMadeDirMode = 0700;

// PATH inside the sandbox, unless ContainerSpawn::sandbox_path (core/plan.h's
// SandboxPathFor) replaces it through --setenv.
inline constexpr absl::string_view kSandboxPath = "/usr/local/bin:/usr/bin:/bin";

// The bwrap argv (element 0 is "bwrap"). Codes: `isolation-bwrap-unsupported`
// (memory, cpus, a bridge network or a user setting, which bubblewrap cannot
// deliver), `isolation-wrap-no-command`, `isolation-cwd-outside-project`,
// `invalid-path`, `isolation-mount-bad-source`, `isolation-mount-bad-target`,
// `isolation-protected-path-unsafe`, `isolation-mount-target-symlink` (a target through a
// link on the host), `isolation-bwrap-too-many-arguments` (the options alone
// exceed kBwrapMaxArgs). The extra mounts are bound as CoalesceBwrapMounts
// gives them (bwrap_targets.h). A command line that would exceed
// kBwrapMaxArgs runs np-exec's entry point (`spawn.self_binary` bound at
// kEgressSelfTarget) as `... -- SELF argv-entry -- PROGRAM ARGS...`, whose
// tail the launcher hands over through a descriptor (ArgvHandoffStart).
absl::StatusOr<std::vector<std::string>> BuildBwrapArgv(const ContainerConfig& config,
                                                        const std::vector<ValidatedMount>& mounts,
                                                        const ContainerSpawn& spawn,
                                                        const std::vector<RootEntry>& root_layout);

// Where the part of a bwrap argv to hand to argv-entry through a descriptor
// begins (after `-- SELF argv-entry --`); npos when the argv does not use it.
size_t ArgvHandoffStart(const std::vector<std::string>& argv);

// Whether a program the host finds at `path` (absolute) exists inside too:
// `path` must lie under /usr, a top-level root entry, a bound /etc file, the
// project (`project`: its real path on the host, where the working directory
// and so a relative program are looked up) or an extra mount's target, and `real_path`, the host's
// real path of the same file, under /usr, a bound root directory or /etc file, the project or an
// extra mount's source; otherwise a link on the way dangles inside. bubblewrap reports a program it
// cannot find as its own exit status 1, so the launcher refuses these with 127 before starting it.
bool VisibleInSandbox(absl::string_view path, absl::string_view real_path,
                      absl::string_view project, const std::vector<ValidatedMount>& mounts,
                      const std::vector<RootEntry>& root_layout);

// The environment bubblewrap is executed with, minus the forwarded variables'
// values, which only the launcher reads: PATH, HOME and, when set, TERM.
std::vector<std::string> BwrapBaseEnvironment(absl::string_view term);

}  // namespace np

#endif  // NP_EXEC_CORE_BWRAP_ARGV_H_
