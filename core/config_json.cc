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
  // A limit the config wrote as a number is echoed as that number (cpus: 2 is
  // 2, not "2"), as the reference echoes the file; the argv gets the text.
  auto limit = [&optional](const std::optional<std::string>& text, const nlohmann::json& written) {
    return text.has_value() && written.is_number() ? written : optional(text);
  };
  nlohmann::json out = {{"runtime", RuntimeName(config.runtime)},
                        {"image", config.image},
                        {"network", NetworkName(config.network)},
                        {"user", user},
                        {"memory", limit(config.memory, config.memory_as_written)},
                        {"cpus", limit(config.cpus, config.cpus_as_written)},
                        {"mounts", mounts},
                        {"env", config.env},
                        {"workdir", optional(config.workdir)},
                        {"pull", config.pull_missing ? "missing" : "never"}};
  // Only when set, so the other networks keep the reference's shape.
  if (config.network == Network::kAllowlist) {
    out["allow_hosts"] = AllowlistToStrings(config.allow_hosts);
    if (!config.credentials.empty()) out["credentials"] = CredentialsToJson(config.credentials);
  }
  // Only when set, so a config without it keeps the reference's shape.
  if (!config.images.empty()) out["images"] = config.images;
  if (config.persistent_home) {
    out["home"] = "persistent";
    out["home_seed"] = config.home_seed;
  }
  if (config.warm_idle_seconds.has_value()) {
    out["warm"] = {{"idle_seconds", *config.warm_idle_seconds}};
  }
  return out;
}

}  // namespace np
