#include "core/init_config.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/errors.h"

namespace np {
namespace {

const AgentRecipe* RecipeOf(absl::string_view name) {
  for (const AgentRecipe& recipe : AgentRecipes()) {
    if (recipe.name == name) return &recipe;
  }
  return nullptr;
}

bool Holds(const std::vector<std::string>& list, absl::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

void AddAll(const std::vector<std::string>& from, std::vector<std::string>& to) {
  for (const std::string& item : from) {
    if (!Holds(to, item)) to.push_back(item);
  }
}

// The agents' hosts and variables, on the egress allowlist.
void AddAgentNetwork(const std::vector<std::string>& agents, nlohmann::json& container) {
  if (agents.empty()) return;
  std::vector<std::string> hosts;
  std::vector<std::string> env;
  for (const std::string& agent : agents) {
    AddAll(RecipeOf(agent)->hosts, hosts);
    AddAll(RecipeOf(agent)->env, env);
  }
  container["network"] = "allowlist";
  container["allow_hosts"] = hosts;
  container["env"] = env;
}

nlohmann::json Wrap(nlohmann::json container) {
  return {{"isolation", {{"tier", "container"}, {"container", std::move(container)}}}};
}

// An engine's choice: the agents asked for (or every one whose image it
// holds, or claude when it holds none), the first one's image as `image`
// and the others per program.
InitChoice EngineChoice(const InitRuntimeState& state, const std::vector<std::string>& asked) {
  InitChoice choice;
  choice.runtime = state.runtime;
  choice.agents = !asked.empty()                ? asked
                  : !state.agent_images.empty() ? state.agent_images
                                                : std::vector<std::string>{"claude"};
  nlohmann::json container = {{"runtime", RuntimeName(state.runtime)},
                              {"image", RecipeOf(choice.agents.front())->image}};
  nlohmann::json images = nlohmann::json::object();
  for (size_t i = 1; i < choice.agents.size(); ++i) {
    images[choice.agents[i]] = RecipeOf(choice.agents[i])->image;
  }
  if (!images.empty()) container["images"] = images;
  AddAgentNetwork(choice.agents, container);
  choice.config = Wrap(std::move(container));
  for (const std::string& agent : choice.agents) {
    if (Holds(state.agent_images, agent)) continue;
    choice.todo.push_back(
        absl::StrCat("build ", RecipeOf(agent)->image,
                     " (np-exec pulls nothing): ", "bash scripts/build-agent-image.sh ", agent, " ",
                     RuntimeName(state.runtime), " in np-exec's checkout"));
  }
  return choice;
}

// A runtime that runs the host's programs (bubblewrap): the agents asked
// for, or those the host has, each with its directories mounted at their own
// paths.
InitChoice HostProgramsChoice(Runtime runtime, const std::vector<std::string>& asked,
                              const std::vector<HostAgent>& host_agents) {
  InitChoice choice;
  choice.runtime = runtime;
  std::vector<std::string> mounts;
  for (const HostAgent& found : host_agents) {
    if (!asked.empty() && !Holds(asked, found.name)) continue;
    choice.agents.push_back(found.name);
    AddAll(found.mounts, mounts);
  }
  for (const std::string& agent : asked) {
    if (Holds(choice.agents, agent)) continue;
    choice.agents.push_back(agent);
    choice.todo.push_back(absl::StrCat(
        "install ", agent, " on this host, whose programs ", TraitsOf(runtime).display_name,
        " runs (docs/agent-images.md, \"Agent CLIs on ", TraitsOf(runtime).display_name,
        "\"), then add its mounts to isolation.container.mounts (np-exec -- ", agent,
        " names them) and run np-exec trust"));
  }
  nlohmann::json container = {{"runtime", RuntimeName(runtime)}};
  if (!mounts.empty()) {
    nlohmann::json list = nlohmann::json::array();
    for (const std::string& dir : mounts) list.push_back({{"source", dir}, {"target", dir}});
    container["mounts"] = list;
  }
  AddAgentNetwork(choice.agents, container);
  choice.config = Wrap(std::move(container));
  return choice;
}

InitChoice ChoiceFor(const InitRuntimeState& state, const std::vector<std::string>& asked,
                     const std::vector<HostAgent>& host_agents) {
  return TraitsOf(state.runtime).program_from_host
             ? HostProgramsChoice(state.runtime, asked, host_agents)
             : EngineChoice(state, asked);
}

// An engine that holds every image asked for (or any, when none was asked).
bool HoldsAgents(const InitRuntimeState& state, const std::vector<std::string>& asked) {
  if (!TraitsOf(state.runtime).uses_image || state.agent_images.empty()) return false;
  return std::all_of(asked.begin(), asked.end(),
                     [&](const std::string& agent) { return Holds(state.agent_images, agent); });
}

std::string WhyNone(const std::vector<InitRuntimeState>& runtimes) {
  std::vector<std::string> parts;
  for (const InitRuntimeState& state : runtimes) {
    parts.push_back(absl::StrCat(TraitsOf(state.runtime).display_name, ": ", state.why_not));
  }
  return absl::StrJoin(parts, "; ");
}

}  // namespace

const std::vector<AgentRecipe>& AgentRecipes() {
  static const auto* recipes = new std::vector<AgentRecipe>{
      {"claude", "np-agent-claude:local", {"api.anthropic.com"}, {"ANTHROPIC_API_KEY"}},
      {"codex", "np-agent-codex:local", {"api.openai.com"}, {"OPENAI_API_KEY"}},
      {"gemini",
       "np-agent-gemini:local",
       {"generativelanguage.googleapis.com"},
       {"GEMINI_API_KEY", "GEMINI_CLI_TRUST_WORKSPACE"}},
  };
  return *recipes;
}

absl::Status ValidateInitAgents(const std::vector<std::string>& agents) {
  for (const std::string& agent : agents) {
    if (RecipeOf(agent) != nullptr) continue;
    std::vector<std::string> known;
    for (const AgentRecipe& recipe : AgentRecipes()) known.push_back(recipe.name);
    return MakeError(absl::StatusCode::kInvalidArgument, "init-unknown-agent",
                     absl::StrCat("np-exec init knows no agent \"", agent, "\"; it knows ",
                                  absl::StrJoin(known, ", ")),
                     {{"agent", agent}});
  }
  return absl::OkStatus();
}

absl::StatusOr<InitChoice> ChooseInitConfig(const InitRequest& request,
                                            const std::vector<InitRuntimeState>& runtimes,
                                            const std::vector<HostAgent>& host_agents) {
  absl::Status valid = ValidateInitAgents(request.agents);
  if (!valid.ok()) return valid;
  std::vector<std::string> asked;
  for (const std::string& agent : request.agents) {
    if (!Holds(asked, agent)) asked.push_back(agent);
  }
  if (request.runtime.has_value()) {
    for (const InitRuntimeState& state : runtimes) {
      if (state.runtime != *request.runtime) continue;
      if (!state.available) {
        return MakeError(
            absl::StatusCode::kUnavailable, "init-runtime-unavailable",
            absl::StrCat(TraitsOf(state.runtime).display_name,
                         " cannot be used here: ", state.why_not, "; nothing was written"),
            {{"runtime", RuntimeName(state.runtime)}});
      }
      InitChoice choice = ChoiceFor(state, asked, host_agents);
      choice.because = "asked for with --runtime";
      return choice;
    }
  }
  for (const InitRuntimeState& state : runtimes) {
    if (!state.available || !HoldsAgents(state, asked)) continue;
    InitChoice choice = ChoiceFor(state, asked, host_agents);
    choice.because = absl::StrCat("the engine answers and holds the image of ",
                                  absl::StrJoin(state.agent_images, ", "));
    return choice;
  }
  for (const InitRuntimeState& state : runtimes) {
    if (!state.available || !TraitsOf(state.runtime).program_from_host) continue;
    InitChoice choice = ChoiceFor(state, asked, host_agents);
    choice.because =
        "it builds a sandbox here, with no image and no group (no engine here holds "
        "an agent image)";
    return choice;
  }
  for (const InitRuntimeState& state : runtimes) {
    if (!state.available) continue;
    InitChoice choice = ChoiceFor(state, asked, host_agents);
    choice.because = "the engine answers (it holds no agent image yet)";
    return choice;
  }
  return MakeError(absl::StatusCode::kUnavailable, "init-no-runtime",
                   absl::StrCat("no runtime can deliver the container tier here (",
                                WhyNone(runtimes), "); nothing was written"));
}

bool GitignoreCoversAudit(absl::string_view text) {
  bool covered = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripTrailingAsciiWhitespace(line);
    // A later negation may undo an earlier line: the answer is "not yet".
    if (absl::StartsWith(line, "!")) {
      if (absl::StrContains(line, ".nubos-pilot")) covered = false;
      continue;
    }
    absl::ConsumePrefix(&line, "/");
    absl::ConsumeSuffix(&line, "/");
    if (line == ".nubos-pilot/audit" || line == ".nubos-pilot") covered = true;
  }
  return covered;
}

std::string GitignoreAuditAddition(absl::string_view text) {
  const bool needs_newline = !text.empty() && !absl::EndsWith(text, "\n");
  return absl::StrCat(needs_newline ? "\n" : "", "# np-exec's audit log (np-exec init)\n",
                      ".nubos-pilot/audit/\n");
}

}  // namespace np
