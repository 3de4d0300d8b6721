#include "core/config_json.h"

namespace np {

nlohmann::json ContainerConfigToJson(const ContainerConfig& config) {
  nlohmann::json mounts = nlohmann::json::array();
  for (const MountSpec& m : config.mounts) {
    mounts.push_back(
        {{"source", m.source}, {"target", m.target}, {"mode", m.writable ? "rw" : "ro"}});
  }
  nlohmann::json user = nullptr;
  if (config.user.kind == UserSpec::Kind::kImage) user = "image";
  if (config.user.kind == UserSpec::Kind::kExplicit) user = config.user.value;
  auto optional = [](const std::optional<std::string>& v) {
    return v.has_value() ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  return {{"runtime", RuntimeName(config.runtime)},
          {"image", config.image},
          {"network", NetworkName(config.network)},
          {"user", user},
          {"memory", optional(config.memory)},
          {"cpus", optional(config.cpus)},
          {"mounts", mounts},
          {"env", config.env},
          {"workdir", optional(config.workdir)},
          {"pull", config.pull_missing ? "missing" : "never"}};
}

}  // namespace np
