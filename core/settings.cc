#include "core/settings.h"

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
  ProjectLocation located;
  if (inputs.project == nullptr) {
    absl::StatusOr<ProjectLocation> found = LocateProjectFrom(inputs.cwd);
    if (!found.ok()) return found.status();
    located = *std::move(found);
  }
  const ProjectLocation& project = inputs.project != nullptr ? *inputs.project : located;
  if (project.found()) {
    // That `root` names the opened folder was proved by the walk that found
    // it (LocateProject stats every level's path, the project's first); the
    // run path proves it again once everything is decided (JudgeRun).
    settings.project = project;
    settings.project_root = project.root;
    absl::StatusOr<ProjectConfigRead> file = ReadProjectConfigAt(project);
    if (!file.ok()) return file.status();
    settings.config_exists = file->exists;
    settings.raw_config = std::move(file->json);
    settings.state_dir_fd = std::move(file->state_dir);
    settings.config_fd = std::move(file->file);
    absl::StatusOr<ProjectConfig> config =
        ParseProjectConfig(settings.raw_config, operator_container);
    if (!config.ok()) return config.status();
    settings.config = *std::move(config);
    settings.git = std::make_shared<const ProjectGit>(
        project.git.done ? ReadProjectGitFrom(settings.project_root, project.git)
                         : ReadProjectGit(settings.project_root, project.fd()));
  } else if (!inputs.allow_outside_project) {
    return NotInProject(inputs.cwd);
  } else {
    settings.config.container = operator_container;
  }
  tiers.project = settings.config.tier;
  tiers.worktree_isolation = settings.config.worktree_isolation;
  absl::StatusOr<std::optional<Tier>> env_floor = ParseEnvTier(inputs.env_tier);
  if (!env_floor.ok()) return env_floor.status();
  tiers.env = *env_floor;
  settings.resolved = ResolveTier(tiers);
  return settings;
}

}  // namespace np
