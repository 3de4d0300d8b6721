// Everything np-exec needs to know about a project before it plans a spawn:
// the project root, its validated config and the effective tier.
//
// Host facts (the working directory, the operator file's path, NP_EXEC_TIER)
// come in as arguments; the launcher reads them once. Reads files; never
// spawns and never reads the environment.
#ifndef NP_EXEC_CORE_SETTINGS_H_
#define NP_EXEC_CORE_SETTINGS_H_

#include <string>

#include "absl/status/statusor.h"
#include "core/config.h"
#include "core/resolve_tier.h"

namespace np {

struct SettingsInputs {
  std::string cwd;                   // Absolute working directory.
  std::string operator_config_path;  // Empty: no operator file.
  std::string env_tier;              // Value of NP_EXEC_TIER; empty: unset.
  // Outside any project, settle for the operator floor and NP_EXEC_TIER with
  // an empty project_root instead of failing with `not-in-project`; the
  // container tier then refuses, since there is no project to mount.
  bool allow_outside_project = false;
};

struct Settings {
  std::string project_root;  // Empty outside a project (allow_outside_project).
  ProjectConfig config;
  ResolvedTier resolved;
  bool has_milestones = false;  // `.nubos-pilot/milestones/` exists.
};

// Finds the project, reads and validates its config and the operator floor,
// and resolves the tier. Every error is coded (see config_file.h, config.h).
absl::StatusOr<Settings> LoadSettings(const SettingsInputs& inputs);

}  // namespace np

#endif  // NP_EXEC_CORE_SETTINGS_H_
