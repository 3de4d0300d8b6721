// Issue 14: a cloned repository's config, under an operator floor of
// `container`, asks to mount ~/.ssh, to forward AWS_SECRET_ACCESS_KEY and
// for the host's network. On docker, podman and bubblewrap alike nothing runs
// (no key read, no secret passed, no network) until the operator trusts that
// exact content; then it runs, and an edit needs trust again.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"

namespace np::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class UntrustedConfigTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    NP_REQUIRE_RUNTIME(GetParam());
    project_ = dir_.MakeDir("project");
    home_ = dir_.MakeDir("home");
    dir_.Write("home/.ssh/id_rsa", "FAKE-PRIVATE-KEY\n", 0600);
    dir_.Write("operator/nubos-pilot/config.json", R"({"isolation":{"tier":"container"}})");
    state_ = dir_.MakeDir("state");
    nlohmann::json widen = {{"mounts", {{{"source", home_ + "/.ssh"}, {"target", "/keys"}}}},
                            {"env", {"AWS_SECRET_ACCESS_KEY"}}};
    // bubblewrap has no bridge: the host's network there.
    widen["network"] = "host";
    // Written as a clone brings it: no trust.
    MakeProject(project_, ContainerConfig(GetParam(), "np-test:local", widen), /*trust=*/false);
    env_ = RuntimeEnv({"XDG_CONFIG_HOME=" + dir_.Path("operator"), "XDG_STATE_HOME=" + state_,
                       "AWS_SECRET_ACCESS_KEY=planted-aws-secret"});
  }

  RunResult Np(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {NpExecBin()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, Options(env_, 120000, project_));
  }

  TempDir dir_;
  std::string project_, home_, state_;
  std::vector<std::string> env_;
};

TEST_P(UntrustedConfigTest, NothingRunsUntilTheOperatorTrustsThatContent) {
  const std::string program = "cat /keys/id_rsa; printenv AWS_SECRET_ACCESS_KEY; echo ran";
  RunResult refused = Np({"--", "sh", "-c", program});
  EXPECT_EQ(refused.exit_code, 125) << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("isolation-config-untrusted"));
  EXPECT_THAT(refused.out, Not(HasSubstr("ran")));
  EXPECT_THAT(refused.out + refused.err, Not(HasSubstr("FAKE-PRIVATE-KEY")));
  EXPECT_THAT(refused.out + refused.err, Not(HasSubstr("planted-aws-secret")));
  // wrap prints no plan for it either.
  EXPECT_EQ(Np({"wrap", "--", "true"}).exit_code, 1);

  RunResult trusted = Np({"trust"});
  ASSERT_EQ(trusted.exit_code, 0) << trusted.err;
  EXPECT_THAT(trusted.out, HasSubstr("isolation.container.mounts"));
  RunResult ran = Np({"--", "sh", "-c", program});
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_THAT(ran.out, HasSubstr("ran"));

  // Any edit of np-exec's part needs trust again.
  MakeProject(project_,
              ContainerConfig(GetParam(), "np-test:local",
                              {{"env", {"AWS_SECRET_ACCESS_KEY", "OTHER"}}, {"network", "host"}}),
              /*trust=*/false);
  RunResult changed = Np({"--", "sh", "-c", program});
  EXPECT_EQ(changed.exit_code, 125);
  EXPECT_THAT(changed.err, HasSubstr("isolation-config-untrusted"));
  EXPECT_THAT(changed.out, Not(HasSubstr("planted-aws-secret")));
}

INSTANTIATE_TEST_SUITE_P(Runtimes, UntrustedConfigTest,
                         ::testing::Values("docker", "podman", "bwrap"), RuntimeName);

}  // namespace
}  // namespace np::testing
