// The effective container settings as JSON, for `status` and `doctor`. Pure.
#ifndef NP_EXEC_CORE_CONFIG_JSON_H_
#define NP_EXEC_CORE_CONFIG_JSON_H_

#include "core/config.h"
#include "nlohmann/json.hpp"

namespace np {

// {runtime, image, network, user, memory, cpus, mounts, env, workdir, pull},
// with nubos-pilot's key names and null for unset values; memory and cpus
// written as numbers are echoed as those numbers; `allow_hosts` on network
// "allowlist" and `home`, `home_seed` for a persistent home.
nlohmann::json ContainerConfigToJson(const ContainerConfig& config);

}  // namespace np

#endif  // NP_EXEC_CORE_CONFIG_JSON_H_
