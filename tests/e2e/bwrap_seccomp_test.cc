// Issue 15, item 12: bubblewrap had no system-call filter, so a program in the
// sandbox could create a nested user namespace (and with it a full set of
// capabilities over a fresh mount namespace) and reach the kernel surface
// docker's default profile closes. Checked from inside, on the run path and on
// a printed plan run as printed (np-exec sandbox-exec): each refused call
// fails with EPERM, and node, git and a shell still work. Issue 26, item 4:
// personality beyond docker's values, modify_ldt and the terminal's TIOCSTI,
// TIOCLINUX and TIOCSETD (also with the request's upper half set) are
// refused too, while a personality query still works.
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"

namespace np::testing {
namespace {

class BwrapSeccompTest : public ::testing::Test {
 protected:
  void SetUp() override {
    NP_REQUIRE_RUNTIME("bwrap");
    project_ = dir_.MakeDir("project");
    MakeProject(project_, ContainerConfig("bwrap", ""));
    // The probe is copied into the project, which the sandbox sees.
    RunResult copied =
        RunProcess({"/bin/cp", NP_SYSCALL_PROBE, project_ + "/np-probe"}, Options({}, 10000));
    ASSERT_EQ(copied.exit_code, 0) << copied.err;
  }
  RunResult Run(const std::vector<std::string>& program) {
    std::vector<std::string> argv = {NpExecBin(), "--"};
    argv.insert(argv.end(), program.begin(), program.end());
    return RunProcess(argv, Options(RuntimeEnv(), 120000, project_));
  }
  TempDir dir_;
  std::string project_;
};

// Every line but the last names a call that was not refused with EPERM.
constexpr char kAllRefused[] = "probed 35\n";

TEST_F(BwrapSeccompTest, RefusedCallsFailWithEpermOnTheRunPath) {
  RunResult r = Run({project_ + "/np-probe"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, kAllRefused);
}

TEST_F(BwrapSeccompTest, RefusedCallsFailWithEpermOnAPrintedPlan) {
  RunResult wrap = RunProcess({NpExecBin(), "wrap", "--", project_ + "/np-probe"},
                              Options(RuntimeEnv(), 60000, project_));
  ASSERT_EQ(wrap.exit_code, 0) << wrap.err;
  const nlohmann::json plan = nlohmann::json::parse(wrap.out);
  std::vector<std::string> command = {plan["bin"].get<std::string>()};
  for (const auto& arg : plan["args"]) command.push_back(arg.get<std::string>());
  RunResult r = RunProcess(command, Options(RuntimeEnv(), 120000, project_));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, kAllRefused);
}

TEST_F(BwrapSeccompTest, NodeGitAndAShellStillWork) {
  RunResult r = Run({"sh", "-c",
                     "node -e 'require(\"fs\").writeFileSync(\"n.txt\", String(6*7))' &&"
                     " git init -q repo && git -C repo -c user.name=t -c user.email=t@t"
                     " commit -q --allow-empty -m m && git -C repo log --format=%s &&"
                     " cat n.txt && echo && (echo sub) | cat"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "m\n42\nsub\n");
}

}  // namespace
}  // namespace np::testing
