#include "core/env_notice.h"

#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace np {
namespace {

using ::testing::HasSubstr;

std::function<bool(const std::string&)> SetNames(std::set<std::string> names) {
  return [names](const std::string& name) { return names.count(name) > 0; };
}

TEST(EnvNoticeTest, NamesTheSetUnforwardedVariablesAndTheListToPaste) {
  EXPECT_EQ(UnforwardedVariablesNotice("/home/u/.np-exec/shims/claude", {"TERM_PROGRAM"},
                                       SetNames({"ANTHROPIC_API_KEY", "OPENAI_API_KEY"})),
            "np-exec: ANTHROPIC_API_KEY is set here but not passed into the sandbox, which gets "
            "only the variables it is told; for claude to see it, add to isolation.container.env: "
            "\"env\": [\"TERM_PROGRAM\",\"ANTHROPIC_API_KEY\"] (.nubos-pilot/config.json, then "
            "np-exec trust; or the operator file ~/.config/nubos-pilot/config.json, for every "
            "project)\n");
  EXPECT_THAT(UnforwardedVariablesNotice(
                  "gemini", {}, SetNames({"GEMINI_API_KEY", "GEMINI_CLI_TRUST_WORKSPACE"})),
              HasSubstr("GEMINI_API_KEY, GEMINI_CLI_TRUST_WORKSPACE are set here"));
  EXPECT_THAT(UnforwardedVariablesNotice("codex", {}, SetNames({"OPENAI_API_KEY"})),
              HasSubstr("\"env\": [\"OPENAI_API_KEY\"]"));
}

TEST(EnvNoticeTest, NothingWhenForwardedUnsetOrAnUnknownProgram) {
  EXPECT_EQ(
      UnforwardedVariablesNotice("claude", {"ANTHROPIC_API_KEY"}, SetNames({"ANTHROPIC_API_KEY"})),
      "");
  EXPECT_EQ(UnforwardedVariablesNotice("claude", {}, SetNames({})), "");
  // node, a shell: np-exec cannot tell what they read.
  for (const char* program : {"node", "sh", "/usr/bin/env", "claude-wrapper"}) {
    EXPECT_EQ(UnforwardedVariablesNotice(program, {}, SetNames({"ANTHROPIC_API_KEY", "GH_TOKEN"})),
              "")
        << program;
  }
}

}  // namespace
}  // namespace np
