// Handing a signal to the program inside a bubblewrap sandbox: reading
// bubblewrap's --info-fd report and finding the sandbox init's children.
// The real sandbox is covered by tests/e2e/lifecycle_test.cc.
#include "launcher/runtime/sandbox_signals.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "launcher/host.h"

namespace np {
namespace {

using ::testing::Contains;
using ::testing::Optional;

// The /proc/PID/stat reader that the parent check (field 4) and the
// reaper's owner labels (field 22) share.
TEST(SandboxSignalsTest, ProcStatFieldsOfThisProcess) {
  EXPECT_EQ(ProcStatField(getpid(), 4), static_cast<unsigned long long>(getppid()));
  EXPECT_GT(ProcessStartTime(getpid()), 0u);
  EXPECT_EQ(ProcStatField(getpid(), 22), ProcessStartTime(getpid()));
  EXPECT_EQ(ProcStatField(getpid(), 3), 0u) << "the state is a letter, not a number";
  EXPECT_EQ(ProcStatField(getpid(), 2), 0u) << "the command name is not a field after it";
  EXPECT_EQ(ProcStatField(getpid(), 999), 0u);
}

TEST(SandboxSignalsTest, InitPidFromTheInfoReport) {
  EXPECT_THAT(SandboxInitPid("{\n    \"child-pid\": 4242\n}\n"), Optional(4242));
  EXPECT_THAT(SandboxInitPid(R"({"child-pid": 17, "net-namespace": 4026531840})"), Optional(17));
}

TEST(SandboxSignalsTest, NoInitPidUntilAWholeReportHoldsAPositiveOne) {
  for (const char* text :
       {"", "{\n    \"child-pid\": 42", R"({"child-pid": 0})", R"({"child-pid": -3})",
        R"({"child-pid": "12"})", R"({"other": 1})", R"([42])", R"({"child-pid": 99999999999})"}) {
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

// A process tree like bubblewrap's: "bubblewrap" (the test's child) runs an
// "init", which runs two "programs" and exits with how many of them SIGTERM
// ended; "bubblewrap" exits with init's status. The test learns init's pid
// through a pipe, as np-exec does through --info-fd.
struct FakeSandbox {
  pid_t bwrap = -1;
  pid_t init = -1;
};

FakeSandbox StartFakeSandbox() {
  int report[2];
  FakeSandbox sandbox;
  if (pipe(report) != 0) return sandbox;
  sandbox.bwrap = fork();
  if (sandbox.bwrap == 0) {
    const pid_t init = fork();
    if (init == 0) {
      const pid_t programs[2] = {PausedChild(), PausedChild()};
      int ended_by_term = 0;
      for (pid_t program : programs) ended_by_term += EndedBy(program, SIGTERM) ? 1 : 0;
      _exit(ended_by_term);
    }
    (void)!write(report[1], &init, sizeof(init));
    int status = 0;
    waitpid(init, &status, 0);
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 100);
  }
  close(report[1]);
  if (read(report[0], &sandbox.init, sizeof(sandbox.init)) != sizeof(sandbox.init)) {
    sandbox.init = -1;
  }
  close(report[0]);
  return sandbox;
}

TEST(SandboxSignalsTest, SignalsTheInitsChildrenNotBubblewrap) {
  const FakeSandbox sandbox = StartFakeSandbox();
  ASSERT_GT(sandbox.bwrap, 0);
  ASSERT_GT(sandbox.init, 0);
  std::vector<pid_t> programs;
  // The programs start asynchronously: wait until init has both.
  for (int i = 0; i < 500 && programs.size() < 2; ++i) {
    programs = ChildrenOf(sandbox.init);
    if (programs.size() < 2) usleep(10000);
  }
  ASSERT_EQ(programs.size(), 2u);
  const std::string report = absl::StrCat("{\n    \"child-pid\": ", sandbox.init, "\n}\n");
  EXPECT_EQ(SignalSandbox(sandbox.bwrap, report, SIGTERM), 2);
  int status = 0;
  ASSERT_EQ(waitpid(sandbox.bwrap, &status, 0), sandbox.bwrap);
  ASSERT_TRUE(WIFEXITED(status)) << "bubblewrap itself was signalled";
  EXPECT_EQ(WEXITSTATUS(status), 2) << "both programs ended by SIGTERM";
}

// A report naming a process that is not bubblewrap's child (the sandbox has
// ended and the pid was reused): nothing inside is signalled, bubblewrap is.
TEST(SandboxSignalsTest, AReusedInitPidIsNotSignalled) {
  const pid_t bwrap = PausedChild();
  const pid_t stranger = PausedChild();  // A child of the test, not of bwrap.
  ASSERT_GT(bwrap, 0);
  ASSERT_GT(stranger, 0);
  EXPECT_EQ(SignalSandbox(bwrap, absl::StrCat(R"({"child-pid": )", getpid(), "}"), SIGTERM), 0);
  EXPECT_TRUE(EndedBy(bwrap, SIGTERM));
  EXPECT_EQ(kill(stranger, 0), 0) << "a process outside the sandbox was signalled";
  kill(stranger, SIGKILL);
  waitpid(stranger, nullptr, 0);
}

TEST(SandboxSignalsTest, BeforeTheReportTheSignalGoesToBubblewrap) {
  const pid_t bwrap = PausedChild();
  ASSERT_GT(bwrap, 0);
  EXPECT_EQ(SignalSandbox(bwrap, "", SIGTERM), 0);
  EXPECT_TRUE(EndedBy(bwrap, SIGTERM));
}

}  // namespace
}  // namespace np
