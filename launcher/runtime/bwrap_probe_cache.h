// bubblewrap's probe result, reused for a plan.
//
// Proving that bubblewrap works means building a no-op sandbox (10 ms here),
// and `wrap`, which only prints a plan, paid for it every time. A successful
// full probe is therefore remembered for kProbeCacheSeconds in the operator's
// state store (`<store>/bwrap-probe.json`, launcher/state/state_store.h), keyed by
// everything that decides it: bubblewrap's file identity (path, device,
// inode, mode, size, modification and change times), the kernel's
// user-namespace settings (/proc/sys/kernel/unprivileged_userns_clone,
// /proc/sys/user/max_user_namespaces,
// /proc/sys/kernel/apparmor_restrict_unprivileged_userns), the boot and the
// uid. `wrap` reuses a record whose key matches and that is younger than the
// window; `probe`, `status` and `doctor` always probe and refresh it. The
// record is written atomically (a temporary file, then rename) and read only
// when it is the caller's own regular file, not a link and not open to
// others; anything else is as if there were none. A failed probe is never
// remembered. The run path does not use it: its own sandbox's --info-fd
// report is the proof (runtime/bwrap.cc). Touches the filesystem.
#ifndef NP_EXEC_LAUNCHER_RUNTIME_BWRAP_PROBE_CACHE_H_
#define NP_EXEC_LAUNCHER_RUNTIME_BWRAP_PROBE_CACHE_H_

#include <sys/types.h>

#include <optional>
#include <string>

#include "core/gate.h"
#include "launcher/host.h"

namespace np {

// How long a successful probe of bubblewrap is reused for a plan.
inline constexpr int kProbeCacheSeconds = 60;

// What decides whether bubblewrap at `bin` works for this caller, as one
// string; empty when bubblewrap cannot be examined.
std::string BwrapProbeKey(const std::string& bin, uid_t uid);

// The remembered version of a successful probe under `key`, younger than
// kProbeCacheSeconds; nullopt when there is none to trust.
std::optional<std::string> CachedBwrapProbe(const HostFacts& host, const std::string& key);

// Remembers a successful probe (best effort: a store that cannot be written
// only means the next plan probes again).
void RememberBwrapProbe(const HostFacts& host, const std::string& key, const std::string& version);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_RUNTIME_BWRAP_PROBE_CACHE_H_
