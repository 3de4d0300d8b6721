#include "core/env_notice.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/paths.h"
#include "nlohmann/json.hpp"

namespace np {

std::vector<std::string> KnownProgramVariables(absl::string_view program) {
  const std::string name = BaseName(program);
  if (name == "claude") {
    return {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"};
  }
  if (name == "codex") return {"OPENAI_API_KEY", "CODEX_API_KEY"};
  if (name == "gemini") {
    return {"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT",
            "GEMINI_CLI_TRUST_WORKSPACE"};
  }
  if (name == "gh") return {"GH_TOKEN", "GITHUB_TOKEN"};
  return {};
}

std::string UnforwardedVariablesNotice(absl::string_view program,
                                       const std::vector<std::string>& forwarded,
                                       const std::function<bool(const std::string&)>& is_set) {
  std::vector<std::string> missing;
  for (const std::string& name : KnownProgramVariables(program)) {
    if (is_set(name) && std::find(forwarded.begin(), forwarded.end(), name) == forwarded.end()) {
      missing.push_back(name);
    }
  }
  if (missing.empty()) return "";
  nlohmann::json list = nlohmann::json::array();
  for (const std::string& name : forwarded) list.push_back(name);
  for (const std::string& name : missing) list.push_back(name);
  return absl::StrCat(
      "np-exec: ", absl::StrJoin(missing, ", "), missing.size() == 1 ? " is" : " are",
      " set here but not passed into the sandbox, which gets only the variables it is told; ",
      "for ", BaseName(program), " to see ", missing.size() == 1 ? "it" : "them",
      ", add to isolation.container.env: \"env\": ", list.dump(),
      " (.nubos-pilot/config.json, then np-exec trust; or the operator file "
      "~/.config/nubos-pilot/config.json, for every project)\n");
}

}  // namespace np
