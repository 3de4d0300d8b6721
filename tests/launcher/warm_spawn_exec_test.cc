// How a warm sandbox's keeper starts a spawn's program (launcher/warm/
// spawn_exec.h), run here in the test's own process: the environment, the
// search along the program's PATH as execvpe does it, the session, signal
// state and directory the program starts with, and the errors it reports.
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "launcher/warm/spawn_exec.h"
#include "tests/support/temp_dir.h"

namespace np::warm {
namespace {

using ::np::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Ran {
  int status = -1;
  bool own_session = false;
  std::string out;
  std::string err;
};

std::string Drain(int fd) {
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  close(fd);
  return text;
}

Ran RunSpawn(const WarmRequest& request, std::vector<char*> envp) {
  envp.push_back(nullptr);
  PreparedExec exec = PrepareExec(request, envp.data());
  int out[2], err[2];
  EXPECT_EQ(pipe2(out, O_CLOEXEC), 0);
  EXPECT_EQ(pipe2(err, O_CLOEXEC), 0);
  const int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int stdio[3] = {in, out[1], err[1]};
  Ran ran;
  const pid_t pid = StartPrepared(exec, stdio);
  EXPECT_GT(pid, 0);
  ran.own_session = getsid(pid) == pid;
  close(in);
  close(out[1]);
  close(err[1]);
  ran.out = Drain(out[0]);
  ran.err = Drain(err[0]);
  waitpid(pid, &ran.status, 0);
  return ran;
}

TEST(WarmSpawnExecTest, TheEnvironmentIsTheKeepersWithTheSpawnsOnTopAndNoTerm) {
  std::vector<char*> envp = {const_cast<char*>("PATH=/keeper/bin"),
                             const_cast<char*>("HOME=/home/np-exec"),
                             const_cast<char*>("TERM=dumb")};
  envp.push_back(nullptr);
  PreparedExec exec = PrepareExec({{"prog", "x"}, "/w", {"PATH=/a::/b", "FOO=1"}}, envp.data());
  EXPECT_THAT(exec.env, ElementsAre("FOO=1", "HOME=/home/np-exec", "PATH=/a::/b"));
  EXPECT_EQ(exec.path, "/a::/b");
  exec = PrepareExec({{"prog"}, "/w", {"TERM=xterm"}}, envp.data());
  EXPECT_THAT(exec.env, ElementsAre("HOME=/home/np-exec", "PATH=/keeper/bin", "TERM=xterm"));
  EXPECT_EQ(exec.path, "/keeper/bin");
  envp.erase(envp.begin());
  EXPECT_EQ(PrepareExec({{"prog"}, "/w", {}}, envp.data()).path, "/bin:/usr/bin");
}

TEST(WarmSpawnExecTest, TheProgramStartsAloneInItsSessionDirectoryAndSignalState) {
  TempDir dir;
  dir.Write("bin/show", "exit 3\n", 0755);
  // No #! line: the shell runs it, as execvpe does. grep reads its own
  // status, which it has from the shell as the shell started (the shell's own
  // has every signal blocked for a moment while it forks).
  dir.Write("show", "echo \"$PWD $1\"\n/bin/grep -E '^Sig(Blk|Ign):' /proc/self/status\nexit 7\n",
            0755);
  sigset_t blocked, old;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGUSR1);
  sigprocmask(SIG_BLOCK, &blocked, &old);
  struct sigaction ignore = {}, old_pipe = {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &old_pipe);
  // A missing folder, an element longer than PATH_MAX (skipped, as execvpe
  // does), then the empty element: the working directory.
  const std::string path =
      "PATH=" + dir.path() + "/missing:/" + std::string(5000, 'x') + "::" + dir.path() + "/bin";
  const Ran ran = RunSpawn({{"show", "arg"}, dir.path(), {path}}, {});
  sigaction(SIGPIPE, &old_pipe, nullptr);
  sigprocmask(SIG_SETMASK, &old, nullptr);
  ASSERT_TRUE(WIFEXITED(ran.status)) << ran.status;
  EXPECT_EQ(WEXITSTATUS(ran.status), 7) << ran.err;
  EXPECT_TRUE(ran.own_session);
  EXPECT_EQ(ran.out, dir.path() + " arg\nSigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
}

TEST(WarmSpawnExecTest, AProgramThatCannotRunSaysWhyOnItsStderr) {
  TempDir dir;
  dir.Write("plain", "data\n", 0644);
  const std::string path = "PATH=" + dir.path();
  Ran ran = RunSpawn({{"nope"}, dir.path(), {path}}, {});
  EXPECT_EQ(WEXITSTATUS(ran.status), 127);
  EXPECT_EQ(ran.err, "np-exec: cannot run nope: No such file or directory\n");
  ran = RunSpawn({{"plain"}, dir.path(), {path}}, {});
  EXPECT_EQ(WEXITSTATUS(ran.status), 126);
  EXPECT_EQ(ran.err, "np-exec: cannot run plain: Permission denied\n");
  ran = RunSpawn({{"true"}, dir.path() + "/gone", {"PATH=/usr/bin:/bin"}}, {});
  EXPECT_EQ(WEXITSTATUS(ran.status), 126);
  EXPECT_THAT(ran.err, HasSubstr("np-exec: cannot change to " + dir.path() + "/gone: "));
  EXPECT_TRUE(ran.out.empty());
  const std::string long_name(300, 'n');
  ran = RunSpawn({{long_name}, dir.path(), {path}}, {});
  EXPECT_EQ(WEXITSTATUS(ran.status), 126);
  EXPECT_EQ(ran.err, "np-exec: cannot run " + long_name + ": File name too long\n");
}

// A request the keeper gets may carry a long name and a PATH of many
// elements (PATH is a variable a project may forward): what the keeper
// prepares stays the request's size, one candidate buffer, not a string per
// element (20,000 elements of a 255-byte name had been 5 MB, a 100 KB name
// 1.9 GB), and the search still runs to its end.
TEST(WarmSpawnExecTest, AManyElementPathCostsOneCandidateBuffer) {
  TempDir dir;
  const std::string name(NAME_MAX, 'n');
  const std::string path = "PATH=" + std::string(20000, ':');
  std::vector<char*> envp = {nullptr};
  PreparedExec exec = PrepareExec({{name}, dir.path(), {path}}, envp.data());
  EXPECT_EQ(exec.candidate.size(), static_cast<size_t>(PATH_MAX + 1 + NAME_MAX + 1));
  EXPECT_EQ(exec.path.size(), 20000u);
  const Ran ran = RunSpawn({{name}, dir.path(), {path}}, {});
  EXPECT_EQ(WEXITSTATUS(ran.status), 127);
  EXPECT_EQ(ran.err, "np-exec: cannot run " + name + ": No such file or directory\n");
}

}  // namespace
}  // namespace np::warm
