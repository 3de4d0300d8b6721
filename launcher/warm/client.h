// A spawn's side of a warm sandbox (core/warm.h): the request with its three
// standard descriptors sent to the sandbox's holder, which hands the
// connection on to the keeper; then the signals np-exec receives forwarded
// to the program, until the keeper answers with how it ended. Touches
// sockets and signals.
#ifndef NP_EXEC_LAUNCHER_WARM_CLIENT_H_
#define NP_EXEC_LAUNCHER_WARM_CLIENT_H_

#include "absl/status/statusor.h"
#include "core/warm.h"
#include "nlohmann/json.hpp"

namespace np::warm {

// Whether a warm spawn forwards `signal` to its program: the cold path's
// (kForwardedSignals), and the terminal's window size.
bool ForwardedToWarmSpawn(int signal);

// Runs `request` through the holder connected at `connection`, handing over
// descriptors 0, 1 and 2; `record` is the spawn's run line, from which the
// holder writes the exit line if this np-exec is killed. Codes:
// `warm-sandbox-gone` (the sandbox ended before it started the program:
// nothing ran, and the spawn may try another sandbox), `warm-sandbox-lost`
// (it ended after, before it answered), the holder's refusal (the sandbox
// could not be set up: `isolation-container-unavailable` and the like),
// `warm-interrupted` (a terminating signal before the program started:
// nothing ran).
absl::StatusOr<WarmResult> RunInSandbox(int connection, const WarmRequest& request,
                                        const nlohmann::json& record);

}  // namespace np::warm

#endif  // NP_EXEC_LAUNCHER_WARM_CLIENT_H_
