// End-to-end lifecycle and fault tests on real runtimes:
//   - issue 6 item 1 / issue 4 item 2: SIGTERM, SIGINT, SIGHUP and SIGKILL to
//     np-exec during a long-running program: np-exec exits 128+n and within
//     10 s no container with np-exec's label and no sandboxed process is left;
//   - issue 4 item 4: the daemon stopped -> 69 and nothing ran (a private
//     second dockerd, started and stopped here; the main daemon is never touched);
//   - a non-root caller: files written inside appear on the host owned by the
//     caller's uid and gid. Docker: a private dockerd whose socket (in its own
//     directory) is opened to everyone with chmod 0666, so uid 1000 can reach it
//     without a group; bubblewrap: directly, it needs no daemon. Rootless podman
//     needs subuid/subgid maps and newuidmap, which these machines lack, so it
//     is not part of the non-root test.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "launcher/host.h"
#include "tests/e2e/e2e_support.h"
#include "tests/egress/loopback.h"

namespace np::testing {
namespace {

using ::testing::HasSubstr;

std::string SignalName(int sig) {
  switch (sig) {
    case SIGTERM:
      return "TERM";
    case SIGINT:
      return "INT";
    case SIGHUP:
      return "HUP";
    case SIGKILL:
      return "KILL";
  }
  return std::to_string(sig);
}

class SignalTest : public ::testing::TestWithParam<std::tuple<std::string, int>> {
 protected:
  void SetUp() override { NP_REQUIRE_RUNTIME(runtime()); }
  const std::string& runtime() const { return std::get<0>(GetParam()); }
  int sig() const { return std::get<1>(GetParam()); }
};

TEST_P(SignalTest, NpExecExits128PlusNAndLeavesNothingBehind) {
  TempDir dir;
  const std::string project = dir.MakeDir("project");
  MakeProject(project, ContainerConfig(runtime(), "np-test:local"));
  // A distinct duration marks this run's sleep in the host's process table.
  const std::string seconds = std::to_string(300 + std::random_device()() % 600);
  // The sleep itself: its cmdline starts so (a client carries it later on).
  const std::string marker = std::string("sleep\0", 6) + seconds + std::string("\0", 1);
  RunOptions options = Options(RuntimeEnv(), 0, project);
  // For TERM, INT and HUP the program traps the signal, records it in the
  // project and exits 128+n: it must get the signal itself, not only die.
  const std::string name = SignalName(sig());
  const std::string got = project + "/got-signal";
  std::vector<std::string> program = {"sleep", seconds};
  if (sig() != SIGKILL) {
    program = {"sh", "-c",
               absl::StrCat("trap 'echo ", name, " > \"", got, "\"; exit ", 128 + sig(), "' ", name,
                            "; sleep ", seconds, " & wait")};
  }
  std::vector<std::string> argv = {NpExecBin(), "--"};
  argv.insert(argv.end(), program.begin(), program.end());
  pid_t pid = StartProcess(argv, options, dir.Path("out"), dir.Path("err"));
  ASSERT_GT(pid, 0);
  const std::string prefix = ContainerPrefix(pid);
  bool running = WaitFor([&] { return !PidsWithCmdlinePrefix(marker).empty(); }, 60000);
  if (!running) {
    kill(pid, SIGKILL);
    WaitProcess(pid, 10000);
    FAIL() << "the program never started: " << ReadFile(dir.Path("err"));
  }
  if (runtime() != "bwrap") {
    EXPECT_EQ(LabelledContainers(runtime(), prefix).size(), 1u);
  }

  ASSERT_EQ(kill(pid, sig()), 0);
  EXPECT_EQ(WaitProcess(pid, 20000), 128 + sig()) << ReadFile(dir.Path("err"));
  if (sig() != SIGKILL) {
    EXPECT_EQ(ReadFile(got), name + "\n") << "the program did not get SIG" << name;
  }
  // Within 10 s: no container of this np-exec with np-exec's label, and no
  // process of the program.
  bool gone = WaitFor(
      [&] {
        return LabelledContainers(runtime(), prefix).empty() && PidsWithCmdline(marker).empty();
      },
      10000);
  EXPECT_TRUE(gone) << "left behind: containers "
                    << ::testing::PrintToString(LabelledContainers(runtime(), prefix))
                    << ", processes " << ::testing::PrintToString(PidsWithCmdline(marker));
  if (!gone) {
    // Do not leave it for the next test.
    for (const std::string& container : LabelledContainers(runtime(), prefix)) {
      RunRuntime(runtime(), {"rm", "-f", container});
    }
    for (pid_t p : PidsWithCmdline(marker)) kill(p, SIGKILL);
  }
}

// Issue 15, item 7: a program that ignores every signal it can outlived a
// SIGKILLed np-exec (docker until a later spawn reaped it, podman without its
// API service forever), and the log got no exit line. np-exec's watchdog now
// removes the container and writes the exit line.
class WatchdogTest : public ::testing::TestWithParam<std::string> {};

// A container spawn of `sh -c "<prelude>sleep N & wait"` in a new project
// `project` below `dir`, with N random so its sleep is found by command line
// (`marker`); `running` once the sleep is seen.
struct SleepingSpawn {
  std::string project;
  std::string marker;
  pid_t pid = -1;
  bool running = false;
};

SleepingSpawn StartSleepingSpawn(const std::string& runtime, TempDir& dir,
                                 const std::string& prelude) {
  SleepingSpawn spawn;
  spawn.project = dir.MakeDir("project");
  MakeProject(spawn.project, ContainerConfig(runtime, "np-test:local"));
  const std::string seconds = std::to_string(300 + std::random_device()() % 600);
  spawn.marker = std::string("sleep\0", 6) + seconds + std::string("\0", 1);
  spawn.pid =
      StartProcess({NpExecBin(), "--", "sh", "-c", prelude + "sleep " + seconds + " & wait"},
                   Options(RuntimeEnv(), 0, spawn.project), dir.Path("out"), dir.Path("err"));
  spawn.running =
      spawn.pid > 0 && WaitFor([&] { return !PidsWithCmdlinePrefix(spawn.marker).empty(); }, 60000);
  return spawn;
}

TEST_P(WatchdogTest, ASigkilledNpExecLeavesNoContainerEvenIfTheProgramIgnoresSignals) {
  const std::string runtime = GetParam();
  NP_REQUIRE_RUNTIME(runtime);
  TempDir dir;
  const SleepingSpawn spawn =
      StartSleepingSpawn(runtime, dir, "trap '' TERM INT HUP QUIT USR1 USR2; ");
  ASSERT_TRUE(spawn.running) << ReadFile(dir.Path("err"));
  const std::string& project = spawn.project;
  const std::string& marker = spawn.marker;
  const pid_t pid = spawn.pid;
  const std::string prefix = ContainerPrefix(pid);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  EXPECT_EQ(WaitProcess(pid, 20000), 128 + SIGKILL);
  const bool gone = WaitFor(
      [&] {
        return LabelledContainers(runtime, prefix).empty() && PidsWithCmdline(marker).empty();
      },
      30000);
  EXPECT_TRUE(gone) << "left behind: containers "
                    << ::testing::PrintToString(LabelledContainers(runtime, prefix));
  if (!gone) {
    for (const std::string& c : LabelledContainers(runtime, prefix)) {
      RunRuntime(runtime, {"rm", "-f", c});
    }
    for (pid_t p : PidsWithCmdline(marker)) kill(p, SIGKILL);
  }
  // The exit line, saying np-exec was killed.
  nlohmann::json exit_line;
  const bool logged = WaitFor(
      [&] {
        int bad = 0;
        for (const nlohmann::json& line : ReadAuditLog(project, &bad)) {
          if (line.value("event", "") == "exit") exit_line = line;
        }
        return exit_line.is_object();
      },
      10000);
  ASSERT_TRUE(logged) << ReadFile(project + "/.nubos-pilot/audit/np-exec.jsonl");
  EXPECT_EQ(exit_line["np_exec"], "killed");
  EXPECT_TRUE(exit_line["exit_status"].is_null());
  // The line of this spawn: its container, named after this np-exec.
  EXPECT_EQ(exit_line.value("container", "").rfind(prefix, 0), 0u) << exit_line.dump();
}

INSTANTIATE_TEST_SUITE_P(Engines, WatchdogTest, ::testing::Values("docker", "podman"), RuntimeName);

// The exit line of a SIGKILLed np-exec goes to the log of the project folder
// it opened: a folder moved in at the project's path meanwhile (by a program
// in an enclosing project's sandbox) gets no line, and the spawn's own log is
// not left without one.
class KilledExitLineTest : public ::testing::TestWithParam<std::string> {};

TEST_P(KilledExitLineTest, GoesToTheOpenedProjectNeverToAFolderMovedInAtItsPath) {
  const std::string runtime = GetParam();
  NP_REQUIRE_RUNTIME(runtime);
  TempDir dir;
  const SleepingSpawn spawn = StartSleepingSpawn(runtime, dir, "");
  ASSERT_TRUE(spawn.running) << ReadFile(dir.Path("err"));
  const std::string& project = spawn.project;
  const std::string& marker = spawn.marker;
  const pid_t pid = spawn.pid;
  const std::string away = dir.Path("project-away");
  ASSERT_EQ(rename(project.c_str(), away.c_str()), 0);
  dir.MakeDir("project/.nubos-pilot/audit");
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  EXPECT_EQ(WaitProcess(pid, 20000), 128 + SIGKILL);
  nlohmann::json exit_line;
  const bool logged = WaitFor(
      [&] {
        int bad = 0;
        for (const nlohmann::json& line : ReadAuditLog(away, &bad)) {
          if (line.value("event", "") == "exit") exit_line = line;
        }
        return exit_line.is_object();
      },
      30000);
  for (pid_t p : PidsWithCmdline(marker)) kill(p, SIGKILL);
  const std::string prefix = ContainerPrefix(pid);
  for (const std::string& c : LabelledContainers(runtime, prefix)) {
    RunRuntime(runtime, {"rm", "-f", c});
  }
  int bad = 0;
  EXPECT_TRUE(ReadAuditLog(project, &bad).empty())
      << ReadFile(project + "/.nubos-pilot/audit/np-exec.jsonl");
  ASSERT_TRUE(logged) << ReadFile(away + "/.nubos-pilot/audit/np-exec.jsonl");
  EXPECT_EQ(exit_line["np_exec"], "killed");
}

INSTANTIATE_TEST_SUITE_P(Runtimes, KilledExitLineTest,
                         ::testing::Values("docker", "podman", "bwrap"), RuntimeName);

INSTANTIATE_TEST_SUITE_P(Runtimes, SignalTest,
                         ::testing::Combine(::testing::Values("docker", "podman", "bwrap"),
                                            ::testing::Values(SIGTERM, SIGINT, SIGHUP, SIGKILL)),
                         [](const ::testing::TestParamInfo<std::tuple<std::string, int>>& p) {
                           return std::get<0>(p.param) + SignalName(std::get<1>(p.param));
                         });

bool IsRoot() { return geteuid() == 0; }

#define NP_REQUIRE_ROOT()                                                       \
  do {                                                                          \
    if (!IsRoot()) {                                                            \
      if (InCi()) FAIL() << "CI runs the tests as root";                        \
      GTEST_SKIP() << "needs root (a private dockerd, or setpriv to uid 1000)"; \
    }                                                                           \
  } while (0)

// Ctrl-C at a terminal on bubblewrap: the terminal sends SIGINT to its
// foreground process group. bubblewrap runs in a group of its own, so only
// np-exec gets it, and hands it to the program, which traps it; bubblewrap
// in the foreground group would have died of it and SIGKILLed the program.
TEST(TerminalSignalTest, CtrlCReachesTheProgramOnBubblewrap) {
  NP_REQUIRE_RUNTIME("bwrap");
  TempDir dir;
  const std::string project = dir.MakeDir("project");
  MakeProject(project, ContainerConfig("bwrap", ""));
  const std::string got = project + "/got-signal";
  const std::string seconds = std::to_string(300 + std::random_device()() % 600);
  const std::string marker = std::string("sleep\0", 6) + seconds + std::string("\0", 1);
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  ASSERT_GE(master, 0);
  ASSERT_EQ(grantpt(master), 0);
  ASSERT_EQ(unlockpt(master), 0);
  const std::string slave_name = ptsname(master);
  // Built before fork: the child makes async-signal-safe calls only.
  std::vector<std::string> args = {
      NpExecBin(), "--", "sh", "-c",
      absl::StrCat("trap 'echo INT > \"", got, "\"; exit 130' INT; sleep ", seconds, " & wait")};
  std::vector<std::string> env = RuntimeEnv();
  std::vector<char*> argv, envp;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // A new session whose controlling terminal is the pty: np-exec is then
    // the foreground process group the terminal signals.
    setsid();
    int slave = open(slave_name.c_str(), O_RDWR);
    if (slave < 0) _exit(120);
    dup2(slave, 0);
    dup2(slave, 1);
    dup2(slave, 2);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGINT, SIG_DFL);
    if (chdir(project.c_str()) != 0) _exit(121);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  // Drained meanwhile, so nothing blocks on a full pty.
  std::string output;
  auto drain = [&] {
    char buffer[4096];
    pollfd fd = {master, POLLIN, 0};
    while (poll(&fd, 1, 0) > 0 && (fd.revents & POLLIN)) {
      ssize_t n = read(master, buffer, sizeof(buffer));
      if (n <= 0) break;
      output.append(buffer, static_cast<size_t>(n));
    }
  };
  const bool running = WaitFor(
      [&] {
        drain();
        return !PidsWithCmdlinePrefix(marker).empty();
      },
      30000);
  if (!running) {
    kill(pid, SIGKILL);
    WaitProcess(pid, 10000);
    close(master);
    FAIL() << "the program never started: " << output;
  }
  ASSERT_EQ(write(master, "\x03", 1), 1);  // ^C: VINTR of a new pty.
  int status = -1;
  WaitFor(
      [&] {
        drain();
        status = WaitProcess(pid, 0);
        return status != -1;
      },
      20000);
  if (status == -1) {
    kill(pid, SIGKILL);
    WaitProcess(pid, 10000);
  }
  close(master);
  EXPECT_EQ(status, 130) << output;
  EXPECT_EQ(ReadFile(got), "INT\n") << "the program did not get the terminal's SIGINT: " << output;
  EXPECT_TRUE(WaitFor([&] { return PidsWithCmdline(marker).empty(); }, 10000));
}

// Issue 6.1: a container run removes the labelled containers whose owner,
// recorded as pid and start time, no longer exists, as a SIGKILLed np-exec
// whose client also died could leave; one whose owner lives is left alone.
TEST(ReaperTest, AContainerRunRemovesContainersOfDeadOwnersOnly) {
  NP_REQUIRE_RUNTIME("docker");
  const std::string tag = "np-exec-reaper-test-" + std::to_string(std::random_device()());
  const pid_t self = getpid();
  const unsigned long long started = ProcessStartTime(self);
  ASSERT_GT(started, 0u);
  const std::vector<std::pair<std::string, std::string>> containers = {
      // This very pid with another start time: the pid was reused.
      {tag + "-reused", absl::StrCat(self, ":", started + 1)},
      {tag + "-gone", "999999999:5"},
      {tag + "-alive", absl::StrCat(self, ":", started)},
  };
  for (const auto& [name, owner] : containers) {
    RunResult made =
        RunRuntime("docker",
                   {"run", "-d", "--network=none", "--name", name, "--label", "dev.nubos.np-exec=1",
                    "--label", "dev.nubos.np-exec.owner=" + owner, "np-test:local", "sleep", "600"},
                   RuntimeEnv());
    ASSERT_EQ(made.exit_code, 0) << made.err;
  }
  TempDir dir;
  const std::string project = dir.MakeDir("project");
  MakeProject(project, ContainerConfig("docker", "np-test:local"));
  RunResult r = RunProcess({NpExecBin(), "--", "true"}, Options(RuntimeEnv(), 120000, project));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const bool reaped = WaitFor(
      [&] {
        std::vector<std::string> left = LabelledContainers("docker", tag);
        return left == std::vector<std::string>{tag + "-alive"};
      },
      10000);
  EXPECT_TRUE(reaped) << ::testing::PrintToString(LabelledContainers("docker", tag));
  for (const std::string& name : LabelledContainers("docker", tag)) {
    RunRuntime("docker", {"rm", "-f", name}, RuntimeEnv());
  }
}

TEST(DockerFaultTest, DaemonStoppedRefuses69AndNothingRuns) {
  NP_REQUIRE_RUNTIME("docker");
  NP_REQUIRE_ROOT();
  TempDir dir;
  PrivateDockerd daemon(dir.MakeDir("d"));
  const std::string why = daemon.Start();
  ASSERT_EQ(why, "");
  ASSERT_TRUE(daemon.LoadImageFromMain("np-test:local"));
  const std::string project = dir.MakeDir("project");
  MakeProject(project, ContainerConfig("docker", "np-test:local"));
  const std::vector<std::string> env = RuntimeEnv({"DOCKER_HOST=" + daemon.docker_host()});
  const std::string sentinel = project + "/sentinel";

  // With the daemon up, the same command runs (so the refusal below is the
  // daemon's absence and nothing else).
  RunResult up = RunProcess({NpExecBin(), "--", "touch", sentinel}, Options(env, 120000, project));
  ASSERT_EQ(up.exit_code, 0) << up.err;
  ASSERT_TRUE(FileExists(sentinel));
  std::filesystem::remove(sentinel);

  daemon.Stop();
  RunResult down =
      RunProcess({NpExecBin(), "--", "touch", sentinel}, Options(env, 120000, project));
  EXPECT_EQ(down.exit_code, 69) << down.err;
  EXPECT_THAT(down.err, HasSubstr("isolation-container-unavailable"));
  EXPECT_FALSE(FileExists(sentinel)) << "the program ran although the daemon was down";
}

// docker's client (20.10 to 24, Debian's docker.io) dials a tcp:// engine
// through ALL_PROXY's SOCKS server, loopback included, so the engine np-exec
// took for this host's would be the one on the proxy's host, with the run,
// the forwarded values and the terminal. Here the engine's socket is served
// on a loopback port (socat) and ALL_PROXY names a loopback server that
// counts its connections and speaks no SOCKS: the spawn must run on the
// engine np-exec checked, the server must see no connection. Before, the client went to the
// listener (the spawn then failed, 69).
TEST(DockerEndpointTest, ALoopbackPortIsNeverDialedThroughAProxy) {
  NP_REQUIRE_RUNTIME("docker");
  NP_REQUIRE_ROOT();
  if (!FileExists("/usr/bin/socat") || !FileExists("/usr/bin/docker")) {
    if (InCi()) FAIL() << "socat and docker.io are required under CI=true (scripts/test.sh)";
    GTEST_SKIP() << "socat or Debian's docker client is not installed";
  }
  TempDir dir;
  const std::string project = dir.MakeDir("project");
  MakeProject(project, ContainerConfig("docker", "np-test:local"));
  const uint16_t engine_port = UnusedPort();
  ASSERT_GT(engine_port, 0);
  const pid_t forward = StartProcess(
      {"/usr/bin/socat", absl::StrCat("TCP-LISTEN:", engine_port, ",bind=127.0.0.1,reuseaddr,fork"),
       "UNIX-CONNECT:/var/run/docker.sock"},
      Options(BaseEnv()), dir.Path("socat.out"), dir.Path("socat.err"));
  ASSERT_GT(forward, 0);
  const std::string docker_host = absl::StrCat("tcp://127.0.0.1:", engine_port);
  bool up = false;
  for (int i = 0; i < 100 && !up; ++i) {
    up = RunProcess({"/bin/sh", "-c", "docker version >/dev/null 2>&1"},
                    Options(RuntimeEnv({"DOCKER_HOST=" + docker_host})))
             .exit_code == 0;
    if (!up) usleep(50 * 1000);
  }
  LoopbackHttpServer proxy;
  ASSERT_GT(proxy.port(), 0);
  const std::string socks = absl::StrCat("socks5://127.0.0.1:", proxy.port());
  std::vector<std::string> env =
      RuntimeEnv({"DOCKER_HOST=" + docker_host, "ALL_PROXY=" + socks, "all_proxy=" + socks});
  // Debian's client, the one a fresh machine has (a newer one elsewhere on
  // PATH dials loopback directly, and would hide what this test checks).
  SetEnv(env, "PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
  RunResult r = RunProcess({NpExecBin(), "--", "sh", "-c", "echo ran-on-the-checked-engine"},
                           Options(env, 120000, project));
  kill(forward, SIGTERM);
  WaitProcess(forward, 10000);
  ASSERT_TRUE(up) << ReadFile(dir.Path("socat.err"));
  EXPECT_EQ(proxy.connections(), 0) << "docker's client dialed the engine through ALL_PROXY";
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("ran-on-the-checked-engine"));
}

class NonRootCallerTest : public ::testing::TestWithParam<std::string> {};

TEST_P(NonRootCallerTest, FilesWrittenInsideBelongToTheCaller) {
  const std::string runtime = GetParam();
  NP_REQUIRE_RUNTIME(runtime);
  NP_REQUIRE_ROOT();
  TempDir dir;
  // The binary under test may live where uid 1000 cannot reach it.
  const std::string np_exec = dir.Path("np-exec");
  std::filesystem::copy_file(NpExecBin(), np_exec);
  chmod(np_exec.c_str(), 0755);
  const std::string project = dir.MakeDir("project");
  MakeProject(project, ContainerConfig(runtime, "np-test:local"));
  dir.Write("project/host.txt", "readable\n");
  const std::string home = dir.MakeDir("home");
  ChownTree(project, 1000, 1000);
  ChownTree(home, 1000, 1000);
  std::vector<std::string> env = RuntimeEnv({"HOME=" + home});

  std::unique_ptr<PrivateDockerd> daemon;
  if (runtime == "docker") {
    ASSERT_EQ(StartDockerdForUser1000(dir.MakeDir("d"), &daemon, env), "");
  }
  // The caller's own operator state store, and its own trust of the config.
  const std::string state = dir.MakeDir("state");
  ChownTree(state, 1000, 1000);
  SetEnv(env, "XDG_STATE_HOME", state);
  RunResult trusted = RunAsUser1000(np_exec, {"trust"}, env, project);
  ASSERT_EQ(trusted.exit_code, 0) << trusted.err;
  RunResult r = RunAsUser1000(
      np_exec,
      {"--", "sh", "-c", "id -u; id -g; cat host.txt; echo inside > written.txt; mkdir sub"}, env,
      project);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "1000\n1000\nreadable\n");
  for (const char* name : {"written.txt", "sub"}) {
    struct stat st;
    ASSERT_EQ(stat((project + "/" + name).c_str(), &st), 0) << name;
    EXPECT_EQ(st.st_uid, 1000u) << name;
    EXPECT_EQ(st.st_gid, 1000u) << name;
  }
  if (daemon) daemon->Stop();
}

INSTANTIATE_TEST_SUITE_P(Runtimes, NonRootCallerTest, ::testing::Values("docker", "bwrap"),
                         RuntimeName);

}  // namespace
}  // namespace np::testing
