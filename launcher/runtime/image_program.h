// Asking an image what it holds without running anything in it: a created,
// never started container and the engine's copy-out, through the runtime's
// own client (CopyOutOfImage). Two questions use it:
//
// - Why a container run exited 127: tini (docker's and np-exec's podman
//   init) reports a program it cannot exec as `[FATAL tini (7)] exec X
//   failed` and 127, which reads like the program's own status. After such an
//   exit np-exec asks the image whether the program is there and, when it is
//   not, says so with a code and the fix. Only ever after a run that exited
//   127.
// - The image's own /etc/passwd and /etc/group, the base of the spawn's
//   account view (launcher/state/account_view.h), copied out once per image ID (the
//   view's cache keeps them).
//
// Spawns the runtime client.
#ifndef NP_EXEC_LAUNCHER_RUNTIME_IMAGE_PROGRAM_H_
#define NP_EXEC_LAUNCHER_RUNTIME_IMAGE_PROGRAM_H_

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/plan.h"
#include "launcher/host.h"
#include "launcher/runtime/driver.h"
#include "launcher/subprocess.h"

namespace np {

// A container created from `image` (never started, no network, np-exec's
// labels with this np-exec as its owner, so the reaper removes it should
// np-exec die first) named `name`, the engine's copy-out of each of `paths`
// in turn (what `bin cp NAME:PATH -` writes: a tar stream of the path itself,
// a link copied as a link; at most `max_bytes` of it kept) until `enough` says
// so, then the container removed; all through the runtime's own client `bin`,
// whose answers name the engine's own failures. One result per path copied;
// nullopt when no container could be created.
std::optional<std::vector<CaptureResult>> CopyOutOfImage(
    const std::string& bin, const std::string& image, const std::string& name,
    const std::vector<std::string>& paths, const HostFacts& host, const Endpoint& endpoint,
    size_t max_bytes, const std::function<bool(const CaptureResult&)>& enough = nullptr);

// An image's passwd and group as account view bases (core/passwd_view.h's
// ImageAccountBase): each nullopt when the image's file cannot serve (not
// there, a link, not a regular file, over kMaxImageAccountBytes, no
// well-formed line), and the minimal base applies.
// /etc/passwd and /etc/group of `image` through the client `bin`, the
// created container named after `container_name`: CopyOutOfImage of /etc,
// whose archive keeps a link a link (core/tar_file.h). nullopt when no
// container could be created (it cannot be told: not worth remembering).
// The engine drivers' ImageAccounts.
std::optional<ImageAccountBases> CopyImageAccounts(const std::string& bin, const std::string& image,
                                                   const std::string& container_name,
                                                   const HostFacts& host, const Endpoint& endpoint);

// The paths inside the image where `program` would be found: itself when
// absolute, each directory of the image's `path_list` joined with it for a
// bare name; empty (cannot tell) for a relative path with a slash, or when a
// candidate lies under the project's or an extra mount's target (which
// shadows the image there).
std::vector<std::string> ImageCandidates(const SpawnPlan& plan, const std::string& path_list);

// `program-not-in-image` (naming the image, where np-exec looked, where the
// host has the program, and the fix) when none of the candidates exists in
// the plan's image; OK when one does or it cannot be told.
absl::Status ExplainExitNotFound(const SpawnPlan& plan, const HostFacts& host,
                                 const Endpoint& endpoint);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_RUNTIME_IMAGE_PROGRAM_H_
