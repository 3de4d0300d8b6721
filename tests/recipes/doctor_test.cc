// doctor, the one place an operator looks, against a fake docker client and a
// fake engine socket (DOCKER_HOST=unix://...): tier and source, what the tier
// does not protect against, runtime and version, image presence and pinning,
// shims on PATH, the interposer, the audit log and its last refusal, --deep's
// no-op container, and a non-zero exit when the tier cannot be delivered.
#include <unistd.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/launcher/fakes.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace np::testing {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

class DoctorTest : public ::testing::Test {
 protected:
  DoctorTest() : engine_(lab_.tmp().Path("engine.sock")) {}

  // doctor --json (plus `extra`) in the project; the parsed report.
  nlohmann::json Doctor(const std::vector<std::string>& env,
                        const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"doctor", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    last_ = lab_.Run(args, env);
    nlohmann::json report = ParseJson(last_.out);
    EXPECT_TRUE(report.is_object()) << last_.out << last_.err;
    return report;
  }

  std::vector<std::string> EngineEnv() { return lab_.Env(engine_.docker_host()); }

  Lab lab_;
  FakeEngine engine_;
  RunResult last_;
};

TEST_F(DoctorTest, ReportsTierAndTheSourceThatDecidedIt) {
  EXPECT_EQ(Doctor(lab_.Env())["effective_from"], "default");
  lab_.Config(R"({"isolation": {"tier": "worktree"}})");
  nlohmann::json report = Doctor(lab_.Env());
  EXPECT_EQ(report["tier"], "worktree");
  EXPECT_EQ(report["effective_from"], "config");
  lab_.FakeDocker();
  std::vector<std::string> env = EngineEnv();
  SetEnv(env, "NP_EXEC_TIER", "container");
  report = Doctor(env);
  EXPECT_EQ(report["tier"], "container");
  EXPECT_EQ(report["effective_from"], "env");
}

TEST_F(DoctorTest, StatesWhatTheTierDoesNotProtectAgainst) {
  for (const char* tier : {"direct", "worktree", "container"}) {
    lab_.Config(std::string(R"({"isolation": {"tier": ")") + tier + "\"}}");
    lab_.FakeDocker();
    nlohmann::json report = Doctor(EngineEnv());
    nlohmann::json described = ParseJson(lab_.Run({"describe", tier, "--json"}, lab_.Env()).out);
    EXPECT_EQ(report["does_not_protect_against"], described["does_not_protect_against"]) << tier;
    EXPECT_FALSE(report["does_not_protect_against"].empty());
  }
  // The text form lists them too.
  RunResult text = lab_.Run({"doctor"}, lab_.Env());
  EXPECT_THAT(text.out, HasSubstr("does not protect against:"));
}

TEST_F(DoctorTest, ReportsTheRuntimeAndItsVersionThroughTheEngineSocket) {
  lab_.FakeDocker();
  nlohmann::json report = Doctor(EngineEnv());
  EXPECT_EQ(report["runtime"]["available"], true);
  EXPECT_EQ(report["runtime"]["version"], "99.0-fake");
  EXPECT_EQ(report["runtime"]["bin"], lab_.fakes() + "/docker");
  EXPECT_THAT(engine_.requests(), Contains("GET /version"));
}

TEST_F(DoctorTest, ReportsAnUnreachableDaemonWithItsReason) {
  lab_.FakeDocker();
  MakeRefusingSocket(lab_.tmp().Path("dead.sock"));
  nlohmann::json report = Doctor(lab_.Env("unix://" + lab_.tmp().Path("dead.sock")));
  EXPECT_EQ(report["runtime"]["available"], false);
  EXPECT_EQ(report["runtime"]["reason"], "daemon-unreachable");
  EXPECT_EQ(last_.exit_code, 0);  // direct needs no runtime.
}

TEST_F(DoctorTest, ReportsTheImagePresentOrMissing) {
  lab_.FakeDocker();
  lab_.Config(R"({"isolation": {"tier": "container"}})");
  nlohmann::json report = Doctor(EngineEnv());
  EXPECT_EQ(report["image"]["reference"], "node:22-bookworm-slim");
  EXPECT_EQ(report["image"]["present"], true);
  EXPECT_EQ(last_.exit_code, 0) << last_.out;

  engine_.set_image_present(false);
  report = Doctor(EngineEnv());
  EXPECT_EQ(report["image"]["present"], false);
  EXPECT_EQ(report["ok"], false);
  EXPECT_EQ(report["deliverable"], false);
  EXPECT_THAT(report["problems"].dump(), HasSubstr("not present locally"));
  EXPECT_EQ(last_.exit_code, 1);
}

TEST_F(DoctorTest, ClassifiesImagePinning) {
  lab_.FakeDocker();
  const std::string digest(64, 'a');
  struct Case {
    std::string image;
    std::string pinning;
    bool warns;
  };
  for (const Case& c : std::vector<Case>{{"node:22-bookworm-slim", "tag", false},
                                         {"node:latest", "moving", true},
                                         {"node", "moving", true},
                                         {"node@sha256:" + digest, "digest", false}}) {
    lab_.Config(R"({"isolation": {"container": {"image": ")" + c.image + "\"}}}");
    nlohmann::json report = Doctor(EngineEnv());
    EXPECT_EQ(report["image"]["pinning"], c.pinning) << c.image;
    EXPECT_EQ(report["warnings"].dump().find("moving tag") != std::string::npos, c.warns)
        << c.image;
  }
}

TEST_F(DoctorTest, ListsTheShimsOnPath) {
  const std::string shims = lab_.tmp().Path("shims");
  ASSERT_EQ(lab_.Run({"shims", "install", shims, "node", "claude"}, lab_.Env()).exit_code, 0);
  std::vector<std::string> env = lab_.Env();
  SetEnv(env, "PATH", shims + ":" + lab_.FakePath());
  nlohmann::json report = Doctor(env);
  ASSERT_EQ(report["shims_on_path"].size(), 1u) << report.dump();
  EXPECT_EQ(report["shims_on_path"][0]["dir"], shims);
  EXPECT_THAT(report["shims_on_path"][0]["names"].get<std::vector<std::string>>(),
              ::testing::UnorderedElementsAre("node", "claude"));
  EXPECT_THAT(Doctor(lab_.Env())["shims_on_path"], IsEmpty());
}

// The text form is sentences, no JSON; a shim with nothing real behind it is
// a warning (in the JSON too), and the last line says there are warnings.
TEST_F(DoctorTest, TextNamesTheShimsAndFlagsOneWithNothingBehindIt) {
  const std::string shims = lab_.tmp().Path("shims");
  ASSERT_EQ(lab_.Run({"shims", "install", shims, "sh", "np-nothing-behind"}, lab_.Env()).exit_code,
            0);
  std::vector<std::string> env = lab_.Env();
  SetEnv(env, "PATH", shims + ":" + lab_.FakePath());
  RunResult text = lab_.Run({"doctor"}, env);
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("shims on PATH in " + shims + ": np-nothing-behind, sh\n"));
  EXPECT_THAT(text.out, HasSubstr("warning: shim " + shims + "/np-nothing-behind: "));
  EXPECT_THAT(text.out, HasSubstr("(np-exec shims remove DIR np-nothing-behind)"));
  EXPECT_THAT(text.out, Not(HasSubstr("[")));
  EXPECT_THAT(text.out, Not(HasSubstr("{")));
  EXPECT_THAT(text.out, ::testing::EndsWith("warning(s) above\n"));
  nlohmann::json report = Doctor(env);
  ASSERT_EQ(report["shims_without_program"].size(), 1u) << report.dump();
  EXPECT_EQ(report["shims_without_program"][0]["name"], "np-nothing-behind");
  EXPECT_EQ(report["shims_without_program"][0]["error"], "shim-no-program");
  EXPECT_EQ(report["ok"], true) << "a shim does not stop the tier from being delivered";
}

TEST_F(DoctorTest, DeepReportsInText) {
  FakeRuntimeOptions options;
  lab_.FakeDocker(options);
  lab_.Config(R"({"isolation": {"tier": "container"}})");
  RunResult ran = lab_.Run({"doctor", "--deep"}, EngineEnv());
  EXPECT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  EXPECT_THAT(ran.out, HasSubstr("deep check: a no-op container planned as a real run ran and "
                                 "exited 0\n"));
  options.run_exit = 125;
  lab_.FakeDocker(options);
  RunResult failed = lab_.Run({"doctor", "--deep"}, EngineEnv());
  EXPECT_EQ(failed.exit_code, 1);
  EXPECT_THAT(failed.out, HasSubstr("deep check: a no-op container planned as a real run exited "
                                    "125\n"));
  EXPECT_THAT(failed.out, ::testing::EndsWith("the configured tier cannot be delivered\n"));
  // Without --deep, no such line.
  EXPECT_THAT(lab_.Run({"doctor"}, EngineEnv()).out, Not(HasSubstr("deep check")));
}

TEST_F(DoctorTest, ReportsTheInterposerLoadedAndInstalled) {
  std::vector<std::string> env = lab_.Env();
  nlohmann::json report = Doctor(env);
  EXPECT_EQ(report["interposer"]["active"], false);
  // np-exec is static, so LD_PRELOAD does not load anything into it; doctor
  // reads it to tell the operator what the host's children will get.
  SetEnv(env, "LD_PRELOAD", "/usr/lib/np-exec/libnp-exec-preload.so");
  report = Doctor(env);
  EXPECT_EQ(report["interposer"]["active"], true);
  EXPECT_EQ(report["interposer"]["ld_preload"], "/usr/lib/np-exec/libnp-exec-preload.so");
  // Installed: next to the np-exec under test when the build made it.
  const std::string dir = NpExecBin().substr(0, NpExecBin().rfind('/'));
  if (FileExists(dir + "/libnp-exec-preload.so")) {
    EXPECT_THAT(report["interposer"]["installed"].get<std::string>(),
                HasSubstr("libnp-exec-preload.so"));
  } else {
    EXPECT_TRUE(report["interposer"]["installed"].is_null());
  }
}

TEST_F(DoctorTest, ReportsTheAuditLogAndItsLastRefusal) {
  lab_.Config(R"({"isolation": {"tier": "container"}})");
  nlohmann::json report = Doctor(lab_.Env());
  EXPECT_EQ(report["audit_log"]["path"], lab_.audit_log());
  EXPECT_TRUE(report["audit_log"]["last_refusal"].is_null());

  // A refused spawn (no runtime on PATH) is the last refusal doctor shows.
  RunResult refused = lab_.Run({"--", lab_.sentinel_program()}, lab_.Env());
  EXPECT_EQ(refused.exit_code, 69);
  EXPECT_FALSE(FileExists(lab_.sentinel()));
  report = Doctor(lab_.Env());
  EXPECT_EQ(report["audit_log"]["exists"], true);
  EXPECT_EQ(report["audit_log"]["last_refusal"]["code"], "isolation-container-unavailable");
  EXPECT_EQ(report["audit_log"]["last_refusal"]["tier"], "container");
  RunResult text = lab_.Run({"doctor"}, lab_.Env());
  EXPECT_THAT(text.out, HasSubstr("last refusal: isolation-container-unavailable"));
}

TEST_F(DoctorTest, DeepRunsANoOpContainerThroughTheRuntime) {
  lab_.FakeDocker();
  lab_.Config(R"({"isolation": {"tier": "container"}})");
  nlohmann::json report = Doctor(EngineEnv(), {"--deep"});
  EXPECT_EQ(last_.exit_code, 0) << last_.out << last_.err;
  EXPECT_EQ(report["deep"]["ran"], true);
  EXPECT_EQ(report["deep"]["exit_code"], 0);
  std::vector<std::string> argv = ReadNulSeparated(lab_.fakes() + "/docker.argv");
  ASSERT_FALSE(argv.empty());
  EXPECT_EQ(argv.front(), "run");
  EXPECT_EQ(argv.back(), "true");
  EXPECT_THAT(argv, Contains("--network"));
  EXPECT_THAT(argv, Contains("no-new-privileges"));
}

TEST_F(DoctorTest, DeepFailsWhenTheNoOpContainerFails) {
  FakeRuntimeOptions options;
  options.run_exit = 125;
  lab_.FakeDocker(options);
  lab_.Config(R"({"isolation": {"tier": "container"}})");
  nlohmann::json report = Doctor(EngineEnv(), {"--deep"});
  EXPECT_EQ(report["deep"]["exit_code"], 125);
  EXPECT_EQ(report["ok"], false);
  EXPECT_EQ(last_.exit_code, 1);
  // A failed (or timed-out, killed) client may leave its container: doctor
  // removes it by name through the engine.
  EXPECT_THAT(engine_.requests(),
              Contains(::testing::StartsWith("DELETE /containers/np-exec-doctor-")));
}

TEST_F(DoctorTest, DeepRemovesNothingAfterASuccessfulRun) {
  lab_.FakeDocker();
  lab_.Config(R"({"isolation": {"tier": "container"}})");
  Doctor(EngineEnv(), {"--deep"});
  EXPECT_EQ(last_.exit_code, 0) << last_.err;
  EXPECT_THAT(engine_.requests(), Not(Contains(::testing::StartsWith("DELETE "))));
}

TEST_F(DoctorTest, DeepIsANoOpOffTheContainerTier) {
  lab_.FakeDocker();
  nlohmann::json report = Doctor(EngineEnv(), {"--deep"});
  EXPECT_TRUE(report["deep"].is_null());
  EXPECT_EQ(last_.exit_code, 0);
  EXPECT_FALSE(FileExists(lab_.fakes() + "/docker.argv")) << "nothing may run";
}

TEST_F(DoctorTest, ExitsNonZeroWhenTheConfiguredTierCannotBeDelivered) {
  lab_.Config(R"({"isolation": {"tier": "container"}})");
  nlohmann::json report = Doctor(lab_.Env());  // No docker on PATH.
  EXPECT_EQ(last_.exit_code, 1);
  EXPECT_EQ(report["deliverable"], false);
  EXPECT_EQ(report["ok"], false);
  EXPECT_EQ(report["runtime"]["reason"], "runtime-not-installed");
  EXPECT_THAT(report["problems"], Not(IsEmpty()));
  RunResult text = lab_.Run({"doctor"}, lab_.Env());
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_THAT(text.out, HasSubstr("the configured tier cannot be delivered"));

  // The same machine on direct: nothing to deliver, exit 0.
  lab_.Config(R"({"isolation": {"tier": "direct"}})");
  Doctor(lab_.Env());
  EXPECT_EQ(last_.exit_code, 0);
}

TEST_F(DoctorTest, RealDaemonInCi) {
  const char* ci = getenv("CI");
  if (ci == nullptr || std::string(ci) != "true" || !FileExists("/var/run/docker.sock")) {
    GTEST_SKIP() << "a real daemon is used only with CI=true";
  }
  std::vector<std::string> env = BaseEnv();
  RunResult r = lab_.Run({"doctor", "--json"}, env);
  nlohmann::json report = ParseJson(r.out);
  ASSERT_TRUE(report.is_object()) << r.out << r.err;
  EXPECT_EQ(report["runtime"]["available"], true) << r.out;
  EXPECT_EQ(r.exit_code, 0);
}

}  // namespace
}  // namespace np::testing
