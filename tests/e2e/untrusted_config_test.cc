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
  // The risky widenings in plain words.
  EXPECT_THAT(trusted.out,
              HasSubstr("! forwards AWS_SECRET_ACCESS_KEY, which looks like a credential"));
  EXPECT_THAT(trusted.out, HasSubstr("! network \"host\""));
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
  // It names what changed, not every widening key.
  EXPECT_THAT(changed.err,
              HasSubstr("(changed: isolation.container.env, isolation.container.mounts)"));
  EXPECT_THAT(changed.out, Not(HasSubstr("planted-aws-secret")));
  RunResult shown = Np({"trust", "--show"});
  EXPECT_THAT(shown.out, HasSubstr("isolation.container.env: [\"AWS_SECRET_ACCESS_KEY\"] -> "
                                   "[\"AWS_SECRET_ACCESS_KEY\",\"OTHER\"]"));
}

// On a terminal `np-exec trust` asks, and anything but yes records nothing;
// --yes does not ask. The terminal is script(1)'s.
TEST(TrustOnATerminalTest, AsksAndOnlyYesTrusts) {
  TempDir dir;
  const std::string project = dir.MakeDir("project");
  MakeProject(project, ContainerConfig("bwrap", "", {{"network", "host"}}), /*trust=*/false);
  const std::vector<std::string> env = BaseEnv({"XDG_STATE_HOME=" + dir.MakeDir("state")});
  auto on_terminal = [&](const std::string& args, const std::string& typed) {
    RunOptions options = Options(env, 60000, project);
    options.stdin_data = typed;
    return RunProcess({"/usr/bin/script", "-qec", NpExecBin() + " " + args, "/dev/null"}, options);
  };
  auto state = [&] {
    RunResult r =
        RunProcess({NpExecBin(), "trust", "--show", "--json"}, Options(env, 60000, project));
    return nlohmann::json::parse(r.out, nullptr, false).value("state", "");
  };
  RunResult declined = on_terminal("trust", "n\n");
  EXPECT_NE(declined.exit_code, 0) << declined.out;
  EXPECT_THAT(declined.out, HasSubstr("Trust exactly this content? [y/N]"));
  EXPECT_THAT(declined.out, HasSubstr("! network \"host\""));
  EXPECT_THAT(declined.out, HasSubstr("(trust-declined)"));
  EXPECT_EQ(state(), "untrusted");
  RunResult accepted = on_terminal("trust", "yes\n");
  EXPECT_EQ(accepted.exit_code, 0) << accepted.out;
  EXPECT_THAT(accepted.out, HasSubstr("trusted the config of"));
  EXPECT_EQ(state(), "trusted");
  MakeProject(project, ContainerConfig("bwrap", "", {{"network", "none"}, {"env", {"A"}}}),
              /*trust=*/false);
  RunResult yes = on_terminal("trust --yes", "");
  EXPECT_EQ(yes.exit_code, 0) << yes.out;
  EXPECT_THAT(yes.out, Not(HasSubstr("[y/N]")));
  EXPECT_THAT(yes.out, HasSubstr("isolation.container.network: \"host\" -> \"none\""));
  EXPECT_EQ(state(), "trusted");
}

INSTANTIATE_TEST_SUITE_P(Runtimes, UntrustedConfigTest,
                         ::testing::Values("docker", "podman", "bwrap"), RuntimeName);

}  // namespace
}  // namespace np::testing
