// Parse, then plan, then execute: the plan for one spawn.
//
// `PlanSpawn` turns settings, an injected probe result and per-spawn facts
// into exactly one plan: exec the program in place (direct, worktree) or run
// this runtime argv (container). The launcher carries it out; `wrap` prints it.
// Reads the filesystem for mount validation; never spawns.
#ifndef NP_EXEC_CORE_PLAN_H_
#define NP_EXEC_CORE_PLAN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/bwrap_argv.h"
#include "core/container_argv.h"
#include "core/gate.h"
#include "core/mounts.h"
#include "core/settings.h"

namespace np {

struct SpawnFacts {
  std::string cwd;   // Real path.
  std::string home;  // Real path of the caller's home; may be empty.
  uint32_t uid = 0;
  uint32_t gid = 0;
  bool stdin_tty = false;
  bool stdout_tty = false;
  std::string container_name;
  std::string owner;
  std::string init_path;  // Podman's --init binary when not its default (see ContainerSpawn).
  std::vector<std::string> extra_forbidden;  // E.g. the engine endpoint of DOCKER_HOST.
};

struct SpawnPlan {
  ResolvedTier resolved;
  Runtime runtime = Runtime::kDocker;
  bool wrapped = false;           // True: run `argv` (a runtime command).
  std::vector<std::string> argv;  // Container: runtime argv; else the program.
  std::vector<std::string> env_names;
  std::vector<ValidatedMount> mounts;
  std::string workdir;        // Container only: the working directory inside.
  std::string project_mount;  // Container only: where the project is mounted.
  std::string project_real;   // Container only: the project's real path on the host.
  std::vector<RootEntry> root_layout;  // bwrap only: the host root the argv was built from.
  // Container only: bound read-only (or pinned) in the argv; the launcher
  // creates the placeholders before running it (protected_placeholders.h).
  std::vector<ProtectedBind> protected_binds;
  std::string image;
};

// Plans one spawn of `program` with the extra forwarded `env_names` (from
// --env). On the container tier the probe is required (see gate.h) and every
// mount is validated before any argv exists.
absl::StatusOr<SpawnPlan> PlanSpawn(const Settings& settings, const ProbeResult* probe,
                                    const SpawnFacts& facts,
                                    const std::vector<std::string>& program,
                                    const std::vector<std::string>& env_names);

// The plan as `wrap` prints it: {tier, wrapped:true, bin, args, workdir,
// project_mount} or {tier, wrapped:false, bin, args, note}.
nlohmann::json PlanToJson(const SpawnPlan& plan, const std::string& runtime_bin);

}  // namespace np

#endif  // NP_EXEC_CORE_PLAN_H_
