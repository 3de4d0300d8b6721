// Mount validation: "the project and nothing else".
//
// Sources are compared by real path (symlinks resolved; a path that does not
// exist yet resolves through its deepest existing ancestor), component-wise, so
// "/project-secrets" is outside "/project". A writable mount outside the
// project is refused; a host control surface (the engine sockets, /proc, /sys,
// /dev), anything under one, or anything containing one, is refused even
// read-only, because a read-only bind still lets a process reach an engine
// endpoint inside it. Reads the filesystem (realpath, lstat); never spawns.
#ifndef NP_EXEC_CORE_MOUNTS_H_
#define NP_EXEC_CORE_MOUNTS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/config.h"

namespace np {

// Host paths that are never mounted, as written; their real paths are added
// when a policy is made.
std::vector<std::string> DefaultForbiddenSources();

// Resolves `path` (absolute) to its real path. A path that does not exist yet
// resolves through its deepest existing ancestor. Errors (with `code`): not
// absolute, NUL, too long, "..", a symlink loop, a dangling symlink.
absl::StatusOr<std::string> ResolveRealPath(absl::string_view path, absl::string_view code);

// Where each symbolic link lives that resolving the absolute `path` follows,
// in the order they are met (a link's own path, not its target). Resolution
// stops quietly where a component is missing or after 40 links: the real
// path's own resolution reports those. `reached` (when given) is set to the
// path this walk resolved to ("" when it stopped early): a caller compares
// it with the real path it judged, since the two are separate looks and a
// link can be swapped for a file (or back) in between.
std::vector<std::string> LinksOnTheWay(absl::string_view path, std::string* reached = nullptr);

struct MountPolicy {
  std::string project_real;            // Real path of the project root.
  std::vector<std::string> forbidden;  // Real paths never mounted.
};

// Builds the policy: resolves the project root and the forbidden sources
// (defaults plus `extra_forbidden`, such as the engine endpoint named by DOCKER_HOST).
// An extra entry that is not a clean absolute path (or has "..") is `invalid-path`.
absl::StatusOr<MountPolicy> MakeMountPolicy(absl::string_view project_root,
                                            const std::vector<std::string>& extra_forbidden);

struct ValidatedMount {
  std::string source;  // Real path on the host.
  std::string target;  // Normalised absolute path inside the container.
  bool writable = false;
  // Every link the configured source went through (LinksOnTheWay): each is
  // a place that, renamed or retargeted, changes what gets mounted.
  std::vector<std::string> links = {};
};

// Validates one extra mount. Codes: `isolation-mount-bad-source`,
// `isolation-mount-bad-target`, `isolation-mount-forbidden-source` (also for a
// source reached through a link that lies in a forbidden place, such as a
// persistent home in np-exec's state store, where a sandbox can plant one),
// `isolation-mount-writable-outside-project`, `isolation-mount-source-missing`,
// `isolation-mount-source-unstable` (the path resolved differently on a
// second look: something changed it while np-exec looked).
absl::StatusOr<ValidatedMount> ValidateMount(const MountSpec& mount, const MountPolicy& policy);

// True when `real_path` is, is under, or contains a forbidden source.
bool TouchesForbidden(absl::string_view real_path, const MountPolicy& policy);

// Checks that the project itself may be mounted read-write: not a control
// surface and not an ancestor of one, not `/`, and not the caller's home
// directory or an ancestor of it (that would mount every credential).
// Codes: `isolation-mount-forbidden-source`, `isolation-project-too-broad`,
// `invalid-path` (a home that is not a clean absolute path; empty: no home).
absl::Status ValidateProjectMount(const MountPolicy& policy, absl::string_view home_real);

// Validates every extra mount and checks that no two mounts (the project
// target, /tmp and HOME included in `reserved_targets`) share a target.
absl::StatusOr<std::vector<ValidatedMount>> ValidateMounts(
    const std::vector<MountSpec>& mounts, const MountPolicy& policy,
    const std::vector<std::string>& reserved_targets);

// Refuses (`isolation-mount-source-unstable`) an extra mount whose source
// could be replaced between np-exec's check and the runtime's own resolution
// of the path, which would mount whatever a link put there (the host's `/`):
// a source inside a project (a folder with `.nubos-pilot/` at or above it),
// where a sandboxed program of that project can rename it and put a link in
// its place; or below a directory someone else may write in (world-writable,
// or group-writable by a group other than `gid`), unless that directory is
// sticky and the entry on the way belongs to `uid` or root. Reads the
// filesystem (lstat).
absl::Status CheckMountSourceStable(const ValidatedMount& mount, uint32_t uid, uint32_t gid);

}  // namespace np

#endif  // NP_EXEC_CORE_MOUNTS_H_
