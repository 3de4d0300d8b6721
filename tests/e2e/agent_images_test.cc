// Issue 17 item 3: the agent images scripts/build-agent-image.sh builds with
// no registry (np-agent-claude, -codex, -gemini) run their real CLI on the
// container tier, reached the way a user reaches it: through a shim from
// `np-exec shims install`, in a project configured for that image. What
// answers is the image's CLI (the runtime looks the name up on the image's
// PATH), at the version its Dockerfile pins, and the audit log records the
// container run.
//
// The test command builds the images (scripts/setup-runtimes.sh). A missing
// image skips, and fails under CI=true, as a missing runtime does elsewhere.
#include <fstream>
#include <regex>
#include <tuple>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"

namespace np::testing {
namespace {

using ::testing::HasSubstr;

using Param = std::tuple<std::string, std::string>;  // runtime, agent CLI

// The version in the Dockerfile's `ARG PACKAGE=NAME@VERSION`; empty if none.
std::string PinnedVersion(const std::string& agent) {
  std::ifstream in(SourceDir() + "/packaging/images/" + agent + "/Dockerfile");
  const std::regex arg(R"(^ARG PACKAGE=\S+@([0-9][^@\s]*)\s*$)");
  std::string line;
  std::smatch match;
  while (std::getline(in, line)) {
    if (std::regex_match(line, match, arg)) return match[1];
  }
  return "";
}

class AgentImageTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    RunResult inspect = RunRuntime(runtime(), {"image", "inspect", "--format", "{{.Id}}", image()});
    if (inspect.exit_code != 0) {
      const std::string why = image() + " is not in " + runtime() + " (bash " + SourceDir() +
                              "/scripts/build-agent-image.sh " + agent() +
                              " builds it): " + inspect.err;
      if (InCi()) FAIL() << why;
      GTEST_SKIP() << why;
    }
    project_ = dir_.MakeDir("project");
    MakeProject(project_, ContainerConfig(runtime(), image()));
  }

  const std::string& runtime() const { return std::get<0>(GetParam()); }
  const std::string& agent() const { return std::get<1>(GetParam()); }
  std::string image() const { return "np-agent-" + agent() + ":local"; }

  TempDir dir_;
  std::string project_;
};

TEST_P(AgentImageTest, CliVersionRunsInTheImageThroughItsShim) {
  const std::string version = PinnedVersion(agent());
  ASSERT_FALSE(version.empty()) << "no ARG PACKAGE=...@VERSION in the " << agent() << " Dockerfile";
  const std::string shims = dir_.Path("shims");
  RunResult installed = RunProcess({NpExecBin(), "shims", "install", shims, agent()},
                                   Options(RuntimeEnv(), 30000, project_));
  ASSERT_EQ(installed.exit_code, 0) << installed.err;

  // The shim directory first on PATH, as the README says.
  std::vector<std::string> env = RuntimeEnv();
  const char* path = getenv("PATH");
  SetEnv(env, "PATH", shims + ":" + (path != nullptr ? path : "/usr/bin:/bin"));
  RunResult r = RunProcess({shims + "/" + agent(), "--version"}, Options(env, 180000, project_));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr(version)) << r.err;

  int bad = 0;
  std::vector<nlohmann::json> audit = ReadAuditLog(project_, &bad);
  EXPECT_EQ(bad, 0);
  ASSERT_FALSE(audit.empty());
  const nlohmann::json& exit_line = audit.back();
  EXPECT_EQ(exit_line.value("event", ""), "exit") << exit_line.dump();
  EXPECT_EQ(exit_line.value("tier", ""), "container");
  EXPECT_EQ(exit_line.value("runtime", ""), runtime());
  EXPECT_EQ(exit_line.value("image", ""), image());
  EXPECT_EQ(exit_line.value("exit_status", -1), 0);
}

// "docker_claude", ...
std::string ParamName(const ::testing::TestParamInfo<Param>& param) {
  return std::get<0>(param.param) + "_" + std::get<1>(param.param);
}

INSTANTIATE_TEST_SUITE_P(Agents, AgentImageTest,
                         ::testing::Combine(::testing::Values("docker", "podman"),
                                            ::testing::Values("claude", "codex", "gemini")),
                         ParamName);

}  // namespace
}  // namespace np::testing
