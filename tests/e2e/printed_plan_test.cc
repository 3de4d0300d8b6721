// A printed plan is safe to run as printed (issue 13): `np-exec wrap` prints
// {bin, args}; a caller whose environment holds anything at all runs exactly
// that, and only the forwarded names arrive inside, on docker, podman and
// bubblewrap, with no value in any argv. And `wrap --workdir` never yields a
// weaker plan: it is where the project is mounted inside.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"

namespace np::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class PrintedPlanTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    NP_REQUIRE_RUNTIME(runtime());
    project_ = dir_.MakeDir("project");
    MakeProject(project_, ContainerConfig(runtime(), "np-test:local"));
  }
  const std::string& runtime() const { return GetParam(); }

  RunResult Wrap(const std::vector<std::string>& args, const std::vector<std::string>& env) {
    std::vector<std::string> argv = {NpExecBin(), "wrap"};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, Options(env, 60000, project_));
  }

  TempDir dir_;
  std::string project_;
};

TEST_P(PrintedPlanTest, RunAsPrintedOnlyTheForwardedNamesArriveInside) {
  std::vector<std::string> env =
      RuntimeEnv({"FORWARDED_NAME=forwarded-value-1", "SECRET_TOKEN=planted-secret-2"});
  RunResult wrap = Wrap({"--env", "FORWARDED_NAME", "--", "env"}, env);
  ASSERT_EQ(wrap.exit_code, 0) << wrap.err;
  const nlohmann::json plan = nlohmann::json::parse(wrap.out);
  ASSERT_EQ(plan["wrapped"], true) << wrap.out;
  // No value in the printed plan at all.
  EXPECT_THAT(wrap.out, Not(HasSubstr("forwarded-value-1")));
  EXPECT_THAT(wrap.out, Not(HasSubstr("planted-secret-2")));
  std::vector<std::string> command = {plan["bin"].get<std::string>()};
  for (const auto& arg : plan["args"]) command.push_back(arg.get<std::string>());

  // Run it exactly as printed, by a caller whose environment holds the secret.
  RunResult ran = RunProcess(command, Options(env, 120000, project_));
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_THAT(ran.out, HasSubstr("FORWARDED_NAME=forwarded-value-1"));
  EXPECT_THAT(ran.out, Not(HasSubstr("SECRET_TOKEN")));
  EXPECT_THAT(ran.out, Not(HasSubstr("planted-secret-2")));
  // The caller's own variables (its PATH, for instance) never arrive either.
  EXPECT_THAT(ran.out, Not(HasSubstr("CONTAINERS_CONF=")));
  if (runtime() == "bwrap") {
    EXPECT_EQ(plan["args"][0], "sandbox-exec") << wrap.out;
  }
}

TEST_P(PrintedPlanTest, WorkdirIsTheProjectsMountPointNeverAWeakerPlan) {
  RunResult wrap = Wrap({"--workdir", "/work", "--", "pwd"}, RuntimeEnv());
  ASSERT_EQ(wrap.exit_code, 0) << wrap.err;
  const nlohmann::json plan = nlohmann::json::parse(wrap.out);
  EXPECT_EQ(plan["tier"], "container");
  EXPECT_EQ(plan["wrapped"], true);
  EXPECT_EQ(plan["project_mount"], "/work");
  EXPECT_EQ(plan["workdir"], "/work");
  std::vector<std::string> command = {plan["bin"].get<std::string>()};
  for (const auto& arg : plan["args"]) command.push_back(arg.get<std::string>());
  RunResult ran = RunProcess(command, Options(RuntimeEnv(), 120000, project_));
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_EQ(ran.out, "/work\n");

  // A folder outside the project, or anything that cannot be a mount point,
  // is a coded error, never a direct plan.
  for (const char* bad : {"relative", "/", "/a,b", "/a/../b"}) {
    RunResult refused = Wrap({"--workdir", bad, "--", "pwd"}, RuntimeEnv());
    EXPECT_EQ(refused.exit_code, 1) << bad << ": " << refused.out;
    EXPECT_THAT(refused.err, HasSubstr("isolation-invalid-value")) << bad;
    EXPECT_THAT(refused.out, Not(HasSubstr("\"wrapped\": false"))) << bad;
  }
}

INSTANTIATE_TEST_SUITE_P(Runtimes, PrintedPlanTest, ::testing::Values("docker", "podman", "bwrap"),
                         RuntimeName);

}  // namespace
}  // namespace np::testing
