// `np-exec init`: the config a project gets for what this machine has. Pure:
// the launcher says which runtimes answer, which agent images each engine
// holds and where the host keeps each agent CLI; this picks the runtime and
// writes the content.
//
// Which runtime: the one asked for (--runtime), else docker or podman when
// the engine answers and holds an agent image (np-exec pulls nothing), else
// bubblewrap when it can build a sandbox (it needs no image and no group),
// else docker or podman that answer with no agent image (the config names
// the image to build). None usable is an error that says, per runtime, why.
#ifndef NP_EXEC_CORE_INIT_CONFIG_H_
#define NP_EXEC_CORE_INIT_CONFIG_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/runtime.h"
#include "nlohmann/json.hpp"

namespace np {

// An agent CLI np-exec has a recipe for (docs/agent-images.md): its image,
// the hosts its API-key login reaches and the variables it reads for it.
struct AgentRecipe {
  std::string name;                // claude, codex, gemini
  std::string image;               // np-agent-NAME:local
  std::vector<std::string> hosts;  // allow_hosts
  std::vector<std::string> env;    // forwarded by name
};
const std::vector<AgentRecipe>& AgentRecipes();

// What the launcher found about one runtime.
struct InitRuntimeState {
  Runtime runtime = kDefaultRuntime;
  bool available = false;
  std::string why_not;                    // For a person: the probe's detail and fix.
  std::vector<std::string> agent_images;  // Agents whose image the engine holds.
};

// An agent CLI found on the host's PATH (for bubblewrap, which runs the
// host's programs): the directories a sandbox must show for it at their own
// paths, empty when /usr already holds it.
struct HostAgent {
  std::string name;
  std::vector<std::string> mounts;
};

struct InitRequest {
  std::optional<Runtime> runtime;   // --runtime
  std::vector<std::string> agents;  // --agent; empty: what this machine has
};

struct InitChoice {
  Runtime runtime = kDefaultRuntime;
  std::string because;              // Why this runtime, one clause.
  std::vector<std::string> agents;  // The agents the config is for.
  nlohmann::json config;            // The file's content.
  std::vector<std::string> todo;    // What is left to do before an agent runs.
};

// OK when every name is an agent of AgentRecipes(); else `init-unknown-agent`.
absl::Status ValidateInitAgents(const std::vector<std::string>& agents);

// Picks the runtime and writes the config. `runtimes` in AllRuntimes' order.
// Codes: `init-unknown-agent`, `init-runtime-unavailable` (the runtime asked
// for cannot be used), `init-no-runtime`.
absl::StatusOr<InitChoice> ChooseInitConfig(const InitRequest& request,
                                            const std::vector<InitRuntimeState>& runtimes,
                                            const std::vector<HostAgent>& host_agents);

// True when a .gitignore's text already ignores .nubos-pilot/audit/ (that
// line, or the whole .nubos-pilot/, with or without the leading or trailing
// slash). Negations and globs are not interpreted: an unclear file gets the
// line added.
bool GitignoreCoversAudit(absl::string_view text);

// What to append to a .gitignore holding `text` so it ignores the audit log.
std::string GitignoreAuditAddition(absl::string_view text);

}  // namespace np

#endif  // NP_EXEC_CORE_INIT_CONFIG_H_
