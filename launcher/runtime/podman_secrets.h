// Forwarded values on podman, without a copy in its state database.
//
// podman keeps a container's configuration, the values of `-e NAME` included,
// in its state database (`bolt_state.db`) after the container is gone. So on
// the run path a forwarded variable that is set goes in as a podman secret of
// type env instead: `podman secret create --env SECRET NAME` just before the
// client starts, `--secret SECRET,type=env,target=NAME` in place of `-e NAME`
// (in the plan's argv as core built it; podman sets it in the container's runtime spec, which goes
// with the container), and `podman secret rm` when the spawn ends (the watchdog does it when
// np-exec is killed). Spawns the podman client.
#ifndef NP_EXEC_LAUNCHER_RUNTIME_PODMAN_SECRETS_H_
#define NP_EXEC_LAUNCHER_RUNTIME_PODMAN_SECRETS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/container_argv.h"

namespace np {

// Creates `secrets` (the plan's EnvSecret list), each from its variable's
// value in `client_env`. Returns the names made. Code `podman-secret-failed`
// when one cannot be created (those made are removed again; nothing ran).
absl::StatusOr<std::vector<std::string>> CreatePodmanSecrets(
    const std::string& bin, const std::vector<std::string>& client_env,
    const std::vector<EnvSecret>& secrets);

// `podman secret rm` of `secrets`; nothing when empty.
void RemovePodmanSecrets(const std::string& bin, const std::vector<std::string>& env,
                         const std::vector<std::string>& secrets);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_RUNTIME_PODMAN_SECRETS_H_
