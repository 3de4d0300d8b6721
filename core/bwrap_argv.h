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

// One top-level entry of the host root that programs expect (/bin, /lib, ...):
// a symlink into /usr on a merged-/usr system, or a directory to bind.
struct RootEntry {
  std::string path;         // "/bin"
  std::string link_target;  // "usr/bin" when a symlink; empty for a directory.
};

// Reads /bin, /sbin, /lib, /lib32, /lib64 and /libx32 of the host.
std::vector<RootEntry> ReadHostRootLayout();

// The /etc files bound read-only (when present), never the whole /etc.
const std::vector<std::string>& SandboxEtcFiles();

// PATH inside the sandbox.
inline constexpr absl::string_view kSandboxPath = "/usr/local/bin:/usr/bin:/bin";

// The bwrap argv (element 0 is "bwrap"). Codes: `isolation-bwrap-unsupported`
// (memory, cpus, a bridge network or a user setting, which bubblewrap cannot
// deliver), `isolation-wrap-no-command`, `isolation-cwd-outside-project`,
// `invalid-path`, `isolation-mount-bad-source`, `isolation-mount-bad-target`.
absl::StatusOr<std::vector<std::string>> BuildBwrapArgv(const ContainerConfig& config,
                                                        const std::vector<ValidatedMount>& mounts,
                                                        const ContainerSpawn& spawn,
                                                        const std::vector<RootEntry>& root_layout);

// The environment bubblewrap is executed with, minus the forwarded variables'
// values, which only the launcher reads: PATH, HOME and, when set, TERM.
std::vector<std::string> BwrapBaseEnvironment(absl::string_view term);

}  // namespace np

#endif  // NP_EXEC_CORE_BWRAP_ARGV_H_
