// Handing a signal to the program inside a bubblewrap sandbox: reading
// bubblewrap's --info-fd report and finding the sandbox init's children.
// The real sandbox is covered by tests/e2e/lifecycle_test.cc.
#include "launcher/sandbox_signals.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace np {
namespace {

using ::testing::Contains;
using ::testing::Optional;

TEST(SandboxSignalsTest, InitPidFromTheInfoReport) {
  EXPECT_THAT(SandboxInitPid("{\n    \"child-pid\": 4242\n}\n"), Optional(4242));
  EXPECT_THAT(SandboxInitPid(R"({"child-pid": 17, "net-namespace": 4026531840})"), Optional(17));
}

TEST(SandboxSignalsTest, NoInitPidUntilAWholeReportHoldsAPositiveOne) {
  for (const char* text : {"", "{\n    \"child-pid\": 42", R"({"child-pid": 0})",
                           R"({"child-pid": -3})", R"({"child-pid": "12"})", R"({"other": 1})",
                           R"([42])", R"({"child-pid": 99999999999})"}) {
    EXPECT_EQ(SandboxInitPid(text), std::nullopt) << text;
  }
}

pid_t PausedChild() {
  pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  return child;
}

bool EndedBy(pid_t pid, int sig) {
  int status = 0;
  return waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) && WTERMSIG(status) == sig;
}

// The test process plays the sandbox's init: its children play the programs
// inside and all get the signal; the pid given for bubblewrap (a grandchild
// here) does not, since the programs were reached.
TEST(SandboxSignalsTest, SignalsTheInitsChildrenNotBubblewrap) {
  const pid_t first = PausedChild();
  const pid_t second = PausedChild();
  ASSERT_GT(first, 0);
  ASSERT_GT(second, 0);
  EXPECT_THAT(ChildrenOf(getpid()), Contains(first));
  EXPECT_THAT(ChildrenOf(getpid()), Contains(second));
  // "bubblewrap": a grandchild, so not among the init's children.
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  const pid_t middle = fork();
  ASSERT_GE(middle, 0);
  if (middle == 0) {
    const pid_t grandchild = PausedChild();
    (void)!write(report[1], &grandchild, sizeof(grandchild));
    waitpid(grandchild, nullptr, 0);
    _exit(0);
  }
  pid_t bwrap = 0;
  ASSERT_EQ(read(report[0], &bwrap, sizeof(bwrap)), static_cast<ssize_t>(sizeof(bwrap)));
  EXPECT_THAT(ChildrenOf(getpid()), Contains(middle));
  // Three direct children (first, second, middle) get it; the grandchild
  // given as bubblewrap does not.
  EXPECT_EQ(SignalSandbox(bwrap, absl::StrCat(R"({"child-pid": )", getpid(), "}"), SIGTERM), 3);
  EXPECT_TRUE(EndedBy(first, SIGTERM));
  EXPECT_TRUE(EndedBy(second, SIGTERM));
  EXPECT_TRUE(EndedBy(middle, SIGTERM));
  EXPECT_EQ(kill(bwrap, 0), 0) << "bubblewrap was signalled although the programs were";
  kill(bwrap, SIGKILL);
}

TEST(SandboxSignalsTest, BeforeTheReportTheSignalGoesToBubblewrap) {
  const pid_t bwrap = PausedChild();
  ASSERT_GT(bwrap, 0);
  EXPECT_EQ(SignalSandbox(bwrap, "", SIGTERM), 0);
  EXPECT_TRUE(EndedBy(bwrap, SIGTERM));
}

}  // namespace
}  // namespace np
