// Why a container run exited 127: tini (docker's and np-exec's podman init)
// reports a program it cannot exec as `[FATAL tini (7)] exec X failed` and
// 127, which reads like the program's own status. After such an exit np-exec
// asks the image itself whether the program is there (a created, never
// started container and the engine's copy-out, through the runtime's own
// client) and, when it is not, says so with a code and the fix. Spawns the
// runtime client; only ever after a run that exited 127.
#ifndef NP_EXEC_LAUNCHER_RUNTIME_IMAGE_PROGRAM_H_
#define NP_EXEC_LAUNCHER_RUNTIME_IMAGE_PROGRAM_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/plan.h"
#include "launcher/host.h"

namespace np {

// The paths inside the image where `program` would be found: itself when
// absolute, each directory of the image's `path_list` joined with it for a
// bare name; empty (cannot tell) for a relative path with a slash, or when a
// candidate lies under the project's or an extra mount's target (which
// shadows the image there).
std::vector<std::string> ImageCandidates(const SpawnPlan& plan, const std::string& path_list);

// `program-not-in-image` (naming the image, where np-exec looked, where the
// host has the program, and the fix) when none of the candidates exists in
// the plan's image; OK when one does or it cannot be told.
absl::Status ExplainExitNotFound(const SpawnPlan& plan, const HostFacts& host);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_RUNTIME_IMAGE_PROGRAM_H_
