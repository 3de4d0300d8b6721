// Forwarded values on podman, without a copy in its state database.
//
// podman keeps a container's configuration, the values of `-e NAME` included,
// in its state database (`bolt_state.db`) after the container is gone. So on
// the run path a forwarded variable that is set goes in as a podman secret of
// type env instead: `podman secret create --env SECRET NAME` just before the
// client starts, `--secret SECRET,type=env,target=NAME` in place of `-e NAME`
// (podman sets it in the container's runtime spec, which goes with the
// container), and `podman secret rm` when the spawn ends (the watchdog does it
// when np-exec is killed). Spawns the podman client.
#ifndef NP_EXEC_LAUNCHER_RUNTIME_PODMAN_SECRETS_H_
#define NP_EXEC_LAUNCHER_RUNTIME_PODMAN_SECRETS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace np {

// The forwarded names of `env_names` set in `envp`, in order, never the
// interposer's (a runtime client never gets them): each gets a secret.
std::vector<std::string> ForwardedNamesSet(const std::vector<std::string>& env_names, char** envp);

// The secret that carries the i-th of them for `container`.
std::string PodmanSecretName(const std::string& container, size_t i);

// Creates the secrets for `names` (set in `client_env`) and rewrites their
// `-e NAME` in the runtime argv `argv` (before its `-w`) into `--secret`.
// Returns the secrets' names. Code `podman-secret-failed` when one cannot be
// created (those made are removed again; nothing ran).
absl::StatusOr<std::vector<std::string>> MoveEnvToPodmanSecrets(
    const std::string& bin, const std::vector<std::string>& client_env,
    const std::string& container, const std::vector<std::string>& names,
    std::vector<std::string>& argv);

// `podman secret rm` of `secrets`; nothing when empty.
void RemovePodmanSecrets(const std::string& bin, const std::vector<std::string>& env,
                         const std::vector<std::string>& secrets);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_RUNTIME_PODMAN_SECRETS_H_
