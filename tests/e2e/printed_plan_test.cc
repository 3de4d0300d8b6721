// A printed plan is safe to run as printed (issue 13): `np-exec wrap` prints
// {bin, args}; a caller whose environment holds anything at all runs exactly
// that, and only the forwarded names arrive inside, on docker, podman and
// bubblewrap, with no value in any argv. And `wrap --workdir` never yields a
// weaker plan: it is where the project is mounted inside.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
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
    // A printed plan runs a sandbox of its own (never a warm one), so the
    // run path it is compared with runs cold too, whatever the operator file
    // says (NP_E2E_WARM turns warm sandboxes on there).
    MakeProject(project_, ContainerConfig(runtime(), "np-test:local", {{"warm", false}}));
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

// Which forwarded value goes in as the runtime's secret (podman keeps a
// plain `-e` value in its state) is decided where the plan is printed. Run
// where a forwarded variable is set that was unset then, or unset that was
// set then, the plan is refused and nothing runs; on the other runtimes the
// environment the plan runs in is simply what it forwards.
TEST_P(PrintedPlanTest, RunInAnotherEnvironmentTheSecretsAreNeverDecidedWrongly) {
  const std::string marker = project_ + "/ran";
  for (const bool set_when_printed : {false, true}) {
    std::vector<std::string> printed_env =
        RuntimeEnv(set_when_printed ? std::vector<std::string>{"STALE_KEY=stale-value-3"}
                                    : std::vector<std::string>{});
    RunResult wrap = Wrap({"--env", "STALE_KEY", "--", "sh", "-c", "touch " + marker}, printed_env);
    ASSERT_EQ(wrap.exit_code, 0) << wrap.err;
    const nlohmann::json plan = nlohmann::json::parse(wrap.out);
    std::vector<std::string> command = {plan["bin"].get<std::string>()};
    for (const auto& arg : plan["args"]) command.push_back(arg.get<std::string>());
    std::vector<std::string> run_env =
        RuntimeEnv(set_when_printed ? std::vector<std::string>{}
                                    : std::vector<std::string>{"STALE_KEY=stale-value-3"});
    RunResult ran = RunProcess(command, Options(run_env, 120000, project_));
    struct stat st;
    if (runtime() != "podman") {
      EXPECT_EQ(ran.exit_code, 0) << ran.err;
      EXPECT_EQ(stat(marker.c_str(), &st), 0);
      unlink(marker.c_str());
      continue;
    }
    EXPECT_NE(ran.exit_code, 0) << set_when_printed;
    EXPECT_THAT(ran.err, HasSubstr("printed-plan-stale")) << ran.err;
    EXPECT_NE(stat(marker.c_str(), &st), 0) << "the plan ran";
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

// What a sandbox shows of itself: every mount point with its read-only or
// read-write flag (/proc/self/mountinfo's fields 5 and 6), the account, the
// passwd entry of the caller.
constexpr char kSandboxShape[] =
    "awk '{split($6, o, \",\"); print $5, o[1]}' /proc/self/mountinfo | sort -u; "
    "id -u; id -un; grep \"^$(id -un):\" /etc/passwd";

// A printed plan run as printed and the run path give the same sandbox, mount
// by mount, the caller's account view included; and the printed run goes
// through the run path's executor: its run and exit lines are in the audit
// log, and the view it made is gone afterwards.
TEST_P(PrintedPlanTest, RunAsPrintedIsTheRunPathsSandbox) {
  RunResult run = RunProcess({NpExecBin(), "--", "sh", "-c", kSandboxShape},
                             Options(RuntimeEnv(), 120000, project_));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  RunResult wrap = Wrap({"--", "sh", "-c", kSandboxShape}, RuntimeEnv());
  ASSERT_EQ(wrap.exit_code, 0) << wrap.err;
  const nlohmann::json plan = nlohmann::json::parse(wrap.out);
  const std::string args = plan["args"].dump();
  EXPECT_THAT(args, HasSubstr("\"--account-view\"")) << wrap.out;
  EXPECT_THAT(args, HasSubstr("/etc/passwd")) << wrap.out;
  std::string view;
  for (size_t i = 0; i + 1 < plan["args"].size(); ++i) {
    if (plan["args"][i] == "--account-view") view = plan["args"][i + 1].get<std::string>();
  }
  ASSERT_FALSE(view.empty()) << wrap.out;
  std::vector<std::string> command = {plan["bin"].get<std::string>()};
  for (const auto& arg : plan["args"]) command.push_back(arg.get<std::string>());
  int lines_before = 0;
  const size_t audit_before = ReadAuditLog(project_, &lines_before).size();
  RunResult printed = RunProcess(command, Options(RuntimeEnv(), 120000, project_));
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  // bubblewrap binds a run's sources by descriptor; a printed plan carries
  // none, so its entry point, np-exec's own binary, proves each by-path mount
  // inside before the program runs: that one read-only mount is its only
  // difference.
  std::string expected = run.out;
  if (runtime() == "bwrap") {
    const size_t tmp = expected.find("/tmp rw\n");
    ASSERT_NE(tmp, std::string::npos) << expected;
    expected.insert(tmp, "/run/np-exec/np-exec ro\n");
  }
  EXPECT_EQ(printed.out, expected);
  EXPECT_THAT(printed.out, HasSubstr(" ro\n")) << printed.out;
  // The view was made for the run and removed with it.
  struct stat st;
  EXPECT_NE(lstat(view.c_str(), &st), 0) << view;
  int bad = 0;
  const std::vector<nlohmann::json> audit = ReadAuditLog(project_, &bad);
  EXPECT_EQ(bad, 0);
  ASSERT_GE(audit.size(), audit_before + 2);
  const nlohmann::json& run_line = audit[audit.size() - 2];
  const nlohmann::json& exit_line = audit.back();
  EXPECT_EQ(run_line.value("decision", ""), "run") << run_line.dump();
  EXPECT_EQ(run_line.value("tier", ""), "container") << run_line.dump();
  EXPECT_EQ(exit_line.value("event", ""), "exit") << exit_line.dump();
  EXPECT_EQ(exit_line.value("exit_status", -1), 0) << exit_line.dump();
  // A view a killed sandbox-exec left (its directory there, no process
  // holding its lock) does not stop the plan from running again.
  std::error_code made;
  ASSERT_TRUE(std::filesystem::create_directories(view, made)) << view << made.message();
  sleep(3);
  RunResult again = RunProcess(command, Options(RuntimeEnv(), 120000, project_));
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, printed.out);
  if (runtime() == "bwrap") {
    // bubblewrap takes the view's files as data: it never looks there.
    EXPECT_EQ(lstat(view.c_str(), &st), 0) << view;
    ASSERT_EQ(rmdir(view.c_str()), 0) << view;
  } else {
    EXPECT_NE(lstat(view.c_str(), &st), 0) << view;
  }
  // An --account-view that names anything but a printed view of this
  // account's store is refused, and nothing runs.
  std::vector<std::string> planted = command;
  const std::string marker = project_ + "/ran";
  for (size_t i = 0; i + 1 < planted.size(); ++i) {
    if (planted[i] == "--account-view") planted[i + 1] = dir_.path() + "/printed-00000000";
  }
  planted.back() = "touch " + marker;
  RunResult refused = RunProcess(planted, Options(RuntimeEnv(), 120000, project_));
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.err, HasSubstr("usage")) << refused.err;
  EXPECT_NE(lstat(marker.c_str(), &st), 0);
}

INSTANTIATE_TEST_SUITE_P(Runtimes, PrintedPlanTest, ::testing::Values("docker", "podman", "bwrap"),
                         RuntimeName);

}  // namespace
}  // namespace np::testing
