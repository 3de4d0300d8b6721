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
#include "core/git_layout.h"
#include "core/project_location.h"
#include "core/resolve_tier.h"
#include "nlohmann/json.hpp"

namespace np {

struct SettingsInputs {
  std::string cwd;                   // Absolute working directory.
  std::string operator_config_path;  // Empty: no operator file.
  std::string env_tier;              // Value of NP_EXEC_TIER; empty: unset.
  // Outside any project, settle for the operator floor and NP_EXEC_TIER with
  // an empty project_root instead of failing with `not-in-project`; the
  // container tier then refuses, since there is no project to mount.
  bool allow_outside_project = false;
  // The project found from the working directory's descriptor (host.h),
  // which every decision of the spawn uses; null: located from `cwd` here.
  const ProjectLocation* project = nullptr;
};

struct Settings {
  std::string project_root;  // Empty outside a project (allow_outside_project).
  ProjectLocation project;   // The opened project folder (project.root == project_root).
  // The project file as read, once: what the plan is parsed from and what
  // trust and the ratchet hash and judge. Empty object without a file.
  nlohmann::json raw_config = nlohmann::json::object();
  bool config_exists = false;
  // The directory and file that read came through, still open (null: none).
  std::shared_ptr<const OpenFd> state_dir_fd;
  std::shared_ptr<const OpenFd> config_fd;
  ProjectConfig config;
  ResolvedTier resolved;
  // The project's git, read once (core/git_layout.h) for everything the
  // spawn decides about it: protected paths, git mounts, the spawn lock and
  // the state store's key. Null outside a project (and in hand-made settings:
  // each user then reads it itself).
  std::shared_ptr<const ProjectGit> git;
};

// Finds the project (or takes inputs.project), reads its config once through
// the project's descriptor, validates it and the operator floor, and
// resolves the tier. Every error is coded (see config_file.h, config.h,
// project_location.h).
absl::StatusOr<Settings> LoadSettings(const SettingsInputs& inputs);

}  // namespace np

#endif  // NP_EXEC_CORE_SETTINGS_H_
