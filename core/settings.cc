#include "core/settings.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "core/config_file.h"
#include "core/errors.h"

namespace np {

absl::StatusOr<Settings> LoadSettings(const SettingsInputs& inputs) {
  Settings settings;
  // The operator file first: its isolation.container keys are the base the
  // project's keys are laid over.
  TierInputs tiers;
  ContainerConfig operator_container;
  if (!inputs.operator_config_path.empty()) {
    absl::StatusOr<nlohmann::json> operator_file = ReadConfigFile(inputs.operator_config_path);
    if (!operator_file.ok()) return operator_file.status();
    absl::StatusOr<std::optional<Tier>> floor = ParseOperatorTier(*operator_file);
    if (!floor.ok()) return floor.status();
    tiers.operator_file = *floor;
    absl::Status container = ParseOperatorContainer(*operator_file, operator_container);
    if (!container.ok()) return container;
  }
  absl::StatusOr<std::string> root = FindProjectRoot(inputs.cwd);
  if (root.ok()) {
    settings.project_root = *std::move(root);
    absl::StatusOr<nlohmann::json> file = ReadProjectConfigFile(settings.project_root);
    if (!file.ok()) return file.status();
    absl::StatusOr<ProjectConfig> config = ParseProjectConfig(*file, operator_container);
    if (!config.ok()) return config.status();
    settings.config = *std::move(config);
  } else if (!(inputs.allow_outside_project && HasErrorCode(root.status(), "not-in-project"))) {
    return root.status();
  } else {
    settings.config.container = operator_container;
  }
  tiers.project = settings.config.tier;
  tiers.worktree_isolation = settings.config.worktree_isolation;
  absl::StatusOr<std::optional<Tier>> env_floor = ParseEnvTier(inputs.env_tier);
  if (!env_floor.ok()) return env_floor.status();
  tiers.env = *env_floor;
  settings.resolved = ResolveTier(tiers);

  if (settings.project_root.empty()) return settings;
  struct stat st;
  const std::string milestones = absl::StrCat(
      settings.project_root == "/" ? "" : settings.project_root, "/.nubos-pilot/milestones");
  settings.has_milestones = stat(milestones.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  return settings;
}

}  // namespace np
