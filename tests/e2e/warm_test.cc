// Warm sandboxes (isolation.container.warm, core/warm.h) on docker, podman and
// bubblewrap, checked on the host: two consecutive spawns run in one sandbox,
// and nothing of the first (a background process that called setsid and
// ignores TERM, files in /tmp, HOME and /dev/shm, SysV IPC objects and a
// POSIX message queue, its forwarded value) is there when the second starts; the program
// cannot reach its keeper (no path to the channel, no descriptor to read,
// no signal that ends it); SIGKILL of np-exec during a warm spawn leaves no
// process, and the idle sandbox ends; exit statuses and forwarded signals are
// the cold path's; another plan, or a spawn while the sandbox is busy, gets a
// sandbox of its own.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"

namespace np::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class WarmTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    NP_REQUIRE_RUNTIME(runtime());
    project_ = dir_.MakeDir("project");
    MakeProject(project_, ContainerConfig(runtime(), "np-test:local",
                                          {{"warm", {{"idle_seconds", idle_seconds_}}},
                                           {"env", {"NP_WARM_VALUE"}}}));
    // The SysV IPC probe is copied into the project, which the sandbox sees.
    RunResult copied =
        RunProcess({"/bin/cp", NP_SYSV_PROBE, project_ + "/sysv-probe"}, Options({}, 10000));
    ASSERT_EQ(copied.exit_code, 0) << copied.err;
  }
  void TearDown() override {
    if (project_.empty()) return;
    Np({"warm", "--stop"});
    // Each test leaves no sandbox of its project behind.
    WaitFor([&] { return Sandboxes().empty(); }, 30000);
  }

  const std::string& runtime() const { return GetParam(); }

  RunResult Np(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
    std::vector<std::string> argv = {NpExecBin()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, Options(RuntimeEnv(env), 120000, project_));
  }

  RunResult Spawn(const std::string& script, const std::string& value) {
    return Np({"--", "sh", "-c", script}, {absl::StrCat("NP_WARM_VALUE=", value)});
  }

  // This project's warm sandboxes, as `np-exec warm --json` lists them.
  std::vector<nlohmann::json> Sandboxes() {
    RunResult listed = Np({"warm", "--json"});
    std::vector<nlohmann::json> out;
    nlohmann::json parsed = nlohmann::json::parse(listed.out, nullptr, false);
    if (parsed.is_discarded()) return out;
    for (const nlohmann::json& sandbox : parsed.value("warm_sandboxes", nlohmann::json::array())) {
      if (sandbox.value("project", "") == project_) out.push_back(sandbox);
    }
    return out;
  }

  // Waits (30 s at most) until no warm sandbox of the project is listed and
  // no keeper and no container of np-exec's is left.
  bool NothingOfASandboxLeft() {
    const std::string keeper = std::string("/run/np-exec/np-exec\0keeper", 27);
    return WaitFor(
        [&] {
          return Sandboxes().empty() && PidsWithCmdline(keeper).empty() &&
                 (runtime() == "bwrap" || LabelledContainers(runtime(), "np-exec-").empty());
        },
        30000);
  }

  // The audit log's run lines of the container tier, in order.
  std::vector<nlohmann::json> RunLines() {
    int bad = 0;
    std::vector<nlohmann::json> out;
    for (const nlohmann::json& line : ReadAuditLog(project_, &bad)) {
      if (line.value("decision", "") == "run") out.push_back(line);
    }
    return out;
  }

  static std::string Seconds() { return std::to_string(300 + std::random_device()() % 600); }
  // The cmdline a `sleep SECONDS` starts with (np-exec's own, which names the
  // program later, never does).
  static std::string SleepMarker(const std::string& seconds) {
    return std::string("sleep\0", 6) + seconds + std::string("\0", 1);
  }

  int idle_seconds_ = 60;
  TempDir dir_;
  std::string project_;
};

TEST_P(WarmTest, TheSecondSpawnRunsInTheSameSandboxAndFindsNothingOfTheFirst) {
  const std::string seconds = Seconds();
  const std::string first_value = absl::StrCat("first-value-", seconds);
  // A process that leaves the spawn's session and ignores TERM, a double
  // fork, files in every scratch place, a shared memory segment.
  RunResult first =
      Spawn(absl::StrCat("setsid sh -c 'trap \"\" TERM; exec sleep ", seconds,
                         "' </dev/null >/dev/null 2>&1 & "
                         "(sleep ",
                         seconds,
                         " </dev/null >/dev/null 2>&1 &); "
                         "echo left >/tmp/left-behind && echo left >\"$HOME/left-behind\" && "
                         "echo left >/dev/shm/left-behind && echo wrote; "
                         "./sysv-probe make; ./sysv-probe count; "
                         "echo \"value=$NP_WARM_VALUE\""),
            first_value);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_THAT(first.out, HasSubstr("value=" + first_value));
  EXPECT_THAT(first.out, HasSubstr("wrote\n")) << "the scratch files were not written";
  EXPECT_THAT(first.out, HasSubstr("made\nsysv=3\nmq=1\n")) << "the IPC objects were not made";
  // Gone before np-exec returned, not merely later.
  EXPECT_THAT(PidsWithCmdlinePrefix(SleepMarker(seconds)), ::testing::IsEmpty())
      << "a process of the first spawn outlived it";

  RunResult second = Spawn(
      "echo \"tmp=[$(ls -A /tmp)] home=[$(ls -A \"$HOME\")] shm=[$(ls -A /dev/shm)]\" && "
      "./sysv-probe count; "
      "echo \"value=$NP_WARM_VALUE\"; "
      "cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' '\\n' | "
      "grep -c 'first-valu[e]'; "
      "echo \"init=$(tr '\\0' ' ' </proc/1/cmdline)\"",
      "second-value");
  ASSERT_EQ(second.exit_code, 0) << second.err;
  // /tmp holds nothing but the folder the project's mount point is in, when
  // the project is below /tmp (as the tests' are).
  std::string mount_point_folder;
  if (absl::StartsWith(project_, "/tmp/")) {
    const std::string below_tmp = project_.substr(5);
    mount_point_folder = below_tmp.substr(0, below_tmp.find('/'));
  }
  EXPECT_THAT(second.out,
              HasSubstr(absl::StrCat("tmp=[", mount_point_folder, "] home=[] shm=[]\n")));
  EXPECT_THAT(second.out, HasSubstr("sysv=0\nmq=0\n"));
  EXPECT_THAT(second.out, HasSubstr("value=second-value"));
  EXPECT_THAT(second.out, Not(HasSubstr("value=first")));
  EXPECT_THAT(second.out, HasSubstr("\n0\n")) << "the first spawn's value is readable";
  EXPECT_THAT(second.out, HasSubstr("init=/run/np-exec/np-exec keeper"));

  const std::vector<nlohmann::json> runs = RunLines();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].value("warm", false), true);
  EXPECT_EQ(runs[1].value("warm", false), true);
  // One sandbox served both, and np-exec's log and the listing agree.
  EXPECT_EQ(Sandboxes().size(), 1u);
  if (runtime() != "bwrap") {
    // No value of a warm spawn reaches the engine's state.
    for (const std::string& name : LabelledContainers(runtime(), "np-exec-")) {
      RunResult inspected = RunRuntime(runtime(), {"inspect", name});
      EXPECT_THAT(inspected.out, Not(HasSubstr("second-value")));
      EXPECT_THAT(inspected.out, Not(HasSubstr(first_value)));
    }
  }
}

// Nothing of the first spawn reaches the second: a process it leaves behind
// to read every later process's variables and standard input and to write to
// their standard output (it does to its own spawn's) is gone before the second
// starts, so it records and writes nothing of the second's.
TEST_P(WarmTest, NothingOfTheFirstSpawnReachesTheSecondsValuesOrDescriptors) {
  const std::string seconds = Seconds();
  const std::string spy = project_ + "/spy.txt";
  RunResult first = Spawn(
      absl::StrCat("setsid sh -c 'trap \"\" TERM; while :; do "
                   "for p in /proc/[0-9]*; do "
                   "tr \"\\\\0\" \"\\\\n\" <$p/environ | grep NP_WARM_VALUE; "
                   "timeout 0.2 cat $p/fd/0; echo injected-by-first >>$p/fd/1; echo seen $p; "
                   "done 2>/dev/null; sleep 0.05; done >>spy.txt' </dev/null >/dev/null 2>&1 & "
                   // Until the spy has been through this shell once (up to
                   // 10 s: a loaded machine runs its loop late). It appends:
                   // its own output is spy.txt, which `>` would truncate.
                   "i=0; until grep -qx \"seen /proc/$$\" spy.txt 2>/dev/null || [ $i -ge 100 ]; "
                   "do sleep 0.1; i=$((i+1)); done; echo started"),
      "first-value-" + seconds);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  // The spy worked while its own spawn ran: it read the spawn's variables
  // and wrote to its output.
  ASSERT_THAT(ReadFile(spy), HasSubstr("first-value-" + seconds))
      << "out: " << first.out << "\nerr: " << first.err;
  ASSERT_THAT(first.out, HasSubstr("injected-by-first"));
  const std::string second_value = "second-value-" + seconds;
  const std::string second_input = "second-input-" + seconds;
  RunResult second = RunProcess(
      {NpExecBin(), "--", "sh", "-c", "sleep 1; cat; echo finished"},
      Options(RuntimeEnv({"NP_WARM_VALUE=" + second_value}), 120000, project_, second_input));
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.out, second_input + "finished\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const std::string spied = ReadFile(spy);
  EXPECT_THAT(spied, Not(HasSubstr(second_value)));
  EXPECT_THAT(spied, Not(HasSubstr(second_input)));
  for (const nlohmann::json& run : RunLines()) EXPECT_EQ(run.value("warm", false), true);
  EXPECT_EQ(Sandboxes().size(), 1u);
}

// `status`, `doctor` and `warm` list the project's warm sandbox; `warm --stop`
// ends it: no listing, no keeper, no container.
TEST_P(WarmTest, StatusDoctorAndWarmListTheSandboxAndWarmStopEndsIt) {
  ASSERT_EQ(Spawn("true", "v").exit_code, 0);
  const std::vector<nlohmann::json> listed = Sandboxes();
  ASSERT_EQ(listed.size(), 1u);
  for (const char* verb : {"status", "doctor"}) {
    RunResult shown = Np({verb, "--json"});
    nlohmann::json out = nlohmann::json::parse(shown.out, nullptr, false);
    ASSERT_FALSE(out.is_discarded()) << verb << ": " << shown.out << shown.err;
    const nlohmann::json sandboxes = out.value("warm_sandboxes", nlohmann::json::array());
    ASSERT_EQ(sandboxes.size(), 1u) << verb << ": " << out.dump();
    EXPECT_EQ(sandboxes[0].value("name", ""), listed[0].value("name", "?")) << verb;
    EXPECT_EQ(sandboxes[0].value("project", ""), project_) << verb;
    EXPECT_EQ(sandboxes[0].value("runtime", ""), runtime()) << verb;
    RunResult text = Np({verb});
    EXPECT_THAT(text.out, HasSubstr("warm sandboxes:\n" + runtime() + " ")) << verb;
  }
  RunResult stopped = Np({"warm", "--stop"});
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_TRUE(NothingOfASandboxLeft()) << "warm --stop left a sandbox";
  RunResult shown = Np({"status"});
  EXPECT_THAT(shown.out, Not(HasSubstr("warm sandboxes:")));
}

// What a reset cannot undo (a link planted in /dev, the keeper's limits
// lowered from outside) ends the sandbox: the next spawn starts in a new one
// that has neither; a directory made unreadable is emptied all the same.
TEST_P(WarmTest, WhatAResetCannotUndoEndsTheSandbox) {
  // The keeper's start time (/proc/1/stat's 22nd field) names its sandbox.
  const std::string keeper_started = "echo \"keeper=$(cut -d' ' -f22 /proc/1/stat)\"; ";
  RunResult plant = Spawn(
      keeper_started +
          "rm -f /dev/stderr 2>/dev/null && echo planted >/dev/stderr && "
          "[ -f /dev/stderr ] && echo planted-ok; "
          "mkdir /tmp/locked && echo secret >/tmp/locked/f && chmod 0400 /tmp/locked; echo done",
      "v");
  ASSERT_EQ(plant.exit_code, 0) << plant.err;
  ASSERT_THAT(plant.out, HasSubstr("planted-ok")) << "no file took /dev/stderr's place";
  RunResult after = Spawn(keeper_started +
                              "echo \"stderr=$(readlink /dev/stderr)\"; ls -A /tmp; "
                              "echo \"init=$(cat /proc/1/cmdline | tr '\\0' ' ')\"",
                          "v");
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_THAT(after.out, HasSubstr("stderr=/proc/self/fd/2"));
  EXPECT_THAT(after.out, Not(HasSubstr("locked")));
  EXPECT_THAT(after.out, HasSubstr("init=/run/np-exec/np-exec keeper"));
  const auto keeper_of = [](const std::string& out) {
    const size_t at = out.find("keeper=");
    return at == std::string::npos ? std::string() : out.substr(at, out.find('\n', at) - at);
  };
  ASSERT_THAT(keeper_of(plant.out), ::testing::MatchesRegex("keeper=[0-9]+")) << plant.out;
  EXPECT_NE(keeper_of(plant.out), keeper_of(after.out)) << "the planted sandbox served again";
  RunResult lower = Spawn("./sysv-probe limit-init", "v");
  ASSERT_EQ(lower.exit_code, 0) << lower.err;
  EXPECT_THAT(lower.out, HasSubstr("lowered"));
  RunResult limits = Spawn("grep 'Max file size' /proc/1/limits", "v");
  ASSERT_EQ(limits.exit_code, 0) << limits.err;
  EXPECT_THAT(limits.out, HasSubstr("unlimited"));
  EXPECT_THAT(limits.out, Not(HasSubstr("4096")));
  for (const nlohmann::json& run : RunLines()) EXPECT_EQ(run.value("warm", false), true);
}

TEST_P(WarmTest, TheProgramCannotReachOrEndItsKeeper) {
  RunResult probe = Spawn(
      "echo \"rendezvous=[$(ls -A /run/np-exec/warm)]\"; "
      "for p in $(awk 'NR > 1 && $8 ~ /^\\// { print $8 }' /proc/net/unix); do "
      "  [ -e \"$p\" ] && echo \"reachable $p\"; done; "
      "echo \"descriptors=$(readlink /proc/1/fd/* 2>/dev/null | grep -c .)\"; "
      "echo \"environ=$(cat /proc/1/environ 2>/dev/null | wc -c)\"; "
      "./sysv-probe connect-all; "
      "kill -KILL 1 2>/dev/null; kill -TERM 1 2>/dev/null; kill -INT 1 2>/dev/null; echo alive",
      "v");
  ASSERT_EQ(probe.exit_code, 0) << probe.err;
  EXPECT_THAT(probe.out, HasSubstr("rendezvous=[]"));
  EXPECT_THAT(probe.out, Not(HasSubstr("reachable")));
  EXPECT_THAT(probe.out, HasSubstr("descriptors=0"));
  EXPECT_THAT(probe.out, HasSubstr("environ=0"));
  // Its own socket answers it; no other socket in the sandbox does.
  EXPECT_THAT(probe.out, HasSubstr("own=1 others=0"));
  EXPECT_THAT(probe.out, HasSubstr("alive"));
  // The keeper took no signal: the next spawn runs in the same sandbox.
  RunResult next = Spawn("tr '\\0' ' ' </proc/1/cmdline", "v");
  EXPECT_EQ(next.exit_code, 0) << next.err;
  EXPECT_THAT(next.out, HasSubstr("/run/np-exec/np-exec keeper"));
  EXPECT_EQ(Sandboxes().size(), 1u);
}

TEST_P(WarmTest, ExitStatusesAndForwardedSignalsAreTheColdPaths) {
  EXPECT_EQ(Spawn("exit 7", "v").exit_code, 7);
  EXPECT_EQ(Spawn("kill -TERM $$", "v").exit_code, 128 + SIGTERM);
  EXPECT_EQ(Np({"--", "/no/such/program"}).exit_code, 127);
  // SIGTERM to np-exec reaches the program, which records it.
  const std::string got = project_ + "/got-signal";
  const std::string seconds = Seconds();
  std::vector<std::string> argv = {
      NpExecBin(), "--", "sh", "-c",
      absl::StrCat("trap 'echo TERM > \"", got, "\"; exit 143' TERM; sleep ", seconds, " & wait")};
  const pid_t pid = StartProcess(argv, Options(RuntimeEnv({"NP_WARM_VALUE=v"}), 0, project_),
                                 dir_.Path("out"), dir_.Path("err"));
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(WaitFor([&] { return !PidsWithCmdlinePrefix(SleepMarker(seconds)).empty(); }, 60000))
      << ReadFile(dir_.Path("err"));
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  EXPECT_EQ(WaitProcess(pid, 20000), 143) << ReadFile(dir_.Path("err"));
  EXPECT_EQ(ReadFile(got), "TERM\n");
  EXPECT_THAT(PidsWithCmdlinePrefix(SleepMarker(seconds)), ::testing::IsEmpty());
  for (const nlohmann::json& run : RunLines()) EXPECT_EQ(run.value("warm", false), true);
}

// A signal while the sandbox is still coming up ends np-exec with 128+n, as
// it ends a cold spawn's runtime then; the program never starts.
TEST_P(WarmTest, ASignalBeforeTheProgramStartsExitsAsOnTheColdPath) {
  const std::string seconds = Seconds();
  const pid_t pid = StartProcess({NpExecBin(), "--", "sleep", seconds},
                                 Options(RuntimeEnv({"NP_WARM_VALUE=v"}), 0, project_),
                                 dir_.Path("out"), dir_.Path("err"));
  ASSERT_GT(pid, 0);
  // The runtime is starting this project's sandbox (its client runs), the
  // program not yet.
  const std::string client =
      runtime() == "bwrap" ? std::string("bwrap\0", 6) : runtime() + std::string("\0run\0", 5);
  const auto starting = [&] {
    for (pid_t runner : PidsWithCmdlinePrefix(client)) {
      if (absl::StrContains(ReadFile(absl::StrCat("/proc/", runner, "/cmdline")), project_)) {
        return true;
      }
    }
    return false;
  };
  ASSERT_TRUE(WaitFor(starting, 60000)) << ReadFile(dir_.Path("err"));
  // On an engine the sandbox takes long enough to come up that the signal
  // lands before the program starts; on bubblewrap it may come after (the
  // checks below then hold as for any forwarded signal).
  const bool before = PidsWithCmdlinePrefix(SleepMarker(seconds)).empty();
  if (runtime() != "bwrap") {
    ASSERT_TRUE(before) << "the program started before the signal";
  }
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  EXPECT_EQ(WaitProcess(pid, 30000), 128 + SIGTERM) << ReadFile(dir_.Path("err"));
  EXPECT_TRUE(WaitFor([&] { return PidsWithCmdlinePrefix(SleepMarker(seconds)).empty(); }, 10000));
  if (before) {
    EXPECT_THAT(ReadFile(dir_.Path("err")), Not(HasSubstr("error")));
  }
  int bad = 0;
  bool exit_line = false;
  for (const nlohmann::json& line : ReadAuditLog(project_, &bad)) {
    if (line.value("event", "") == "exit") {
      exit_line = true;
      EXPECT_EQ(line.value("exit_status", 0), 128 + SIGTERM) << line.dump();
    }
  }
  EXPECT_TRUE(exit_line);
  // The sandbox that spawn started still comes up and serves the plan's next
  // spawn, though a spawn of another plan, starting a sandbox of its own,
  // cleaned up the rendezvous directories of spawns that are gone meanwhile.
  RunResult other = Np({"--env", "NP_WARM_OTHER", "--", "true"});
  ASSERT_EQ(other.exit_code, 0) << other.err;
  RunResult next = Spawn("echo next", "v");
  ASSERT_EQ(next.exit_code, 0) << next.err;
  EXPECT_EQ(next.out, "next\n");
  // Its holder is the interrupted np-exec's, forked off: still there.
  EXPECT_FALSE(PidsWithCmdline(
                   absl::StrCat("--", std::string("\0", 1), "sleep", std::string("\0", 1), seconds))
                   .empty())
      << "the interrupted spawn's sandbox did not serve the next spawn";
  EXPECT_EQ(Sandboxes().size(), 2u) << ::testing::PrintToString(Sandboxes());
}

TEST_P(WarmTest, SigkillOfNpExecLeavesNoProcessAndTheIdleSandboxEnds) {
  idle_seconds_ = 3;
  MakeProject(project_, ContainerConfig(runtime(), "np-test:local",
                                        {{"warm", {{"idle_seconds", idle_seconds_}}},
                                         {"env", {"NP_WARM_VALUE"}}}));
  const std::string seconds = Seconds();
  const pid_t pid =
      StartProcess({NpExecBin(), "--", "sleep", seconds}, Options(RuntimeEnv(), 0, project_),
                   dir_.Path("out"), dir_.Path("err"));
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(WaitFor([&] { return !PidsWithCmdlinePrefix(SleepMarker(seconds)).empty(); }, 60000))
      << ReadFile(dir_.Path("err"));
  ASSERT_EQ(Sandboxes().size(), 1u);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  WaitProcess(pid, 10000);
  EXPECT_TRUE(WaitFor([&] { return PidsWithCmdlinePrefix(SleepMarker(seconds)).empty(); }, 10000))
      << "the program outlived its killed np-exec";
  // Its exit line, as a cold spawn's watchdog writes it: np-exec killed, no status.
  EXPECT_TRUE(WaitFor(
      [&] {
        int bad = 0;
        for (const nlohmann::json& line : ReadAuditLog(project_, &bad)) {
          if (line.value("event", "") == "exit" && line.value("pid", 0) == pid &&
              line.value("np_exec", "") == "killed" && line["exit_status"].is_null()) {
            return true;
          }
        }
        return false;
      },
      10000))
      << ReadFile(project_ + "/.nubos-pilot/audit/np-exec.jsonl");
  // After the idle time nothing of the sandbox is left: no keeper, no
  // container, no listing.
  EXPECT_TRUE(NothingOfASandboxLeft()) << "a warm sandbox outlived its idle time";
}

// The sandbox's holder (np-exec's process on the host that keeps it) and the
// watchdog beside it, killed together with SIGKILL: nothing of the sandbox is
// left (its keeper loses its channel and ends, and the runtime with it), and
// the next spawn gets a new one.
TEST_P(WarmTest, SigkillOfTheHolderAndItsWatchdogLeavesNoSandbox) {
  const std::string marker = absl::StrCat("holder-", Seconds());
  ASSERT_EQ(Spawn("echo " + marker, "v").exit_code, 0);
  ASSERT_EQ(Sandboxes().size(), 1u);
  // The holder is the first spawn's np-exec, forked off: the one process
  // left with that command line.
  const std::vector<pid_t> holders = PidsWithCmdline("echo " + marker);
  ASSERT_EQ(holders.size(), 1u);
  std::vector<pid_t> killed = holders;
  for (pid_t watchdog : PidsWithCmdline(std::string("container-watchdog\0", 19))) {
    if (absl::StrContains(ReadFile(absl::StrCat("/proc/", watchdog, "/cmdline")), project_)) {
      killed.push_back(watchdog);
    }
  }
  if (runtime() != "bwrap") {
    ASSERT_EQ(killed.size(), 2u) << "no watchdog beside the holder";
  }
  for (pid_t pid : killed) ASSERT_EQ(kill(pid, SIGKILL), 0);
  EXPECT_TRUE(NothingOfASandboxLeft()) << "a sandbox outlived its holder";
  RunResult next = Spawn("tr '\\0' ' ' </proc/1/cmdline", "v");
  EXPECT_EQ(next.exit_code, 0) << next.err;
  EXPECT_THAT(next.out, HasSubstr("/run/np-exec/np-exec keeper"));
}

TEST_P(WarmTest, AnotherPlanOrABusySandboxGetsASandboxOfItsOwn) {
  ASSERT_EQ(Spawn("true", "v").exit_code, 0);
  ASSERT_EQ(Sandboxes().size(), 1u);
  // Another forwarded name: another plan.
  RunResult other = Np({"--env", "NP_WARM_OTHER", "--", "true"});
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_EQ(Sandboxes().size(), 2u);
  // While the first sandbox runs a spawn, a spawn of the same plan gets
  // another sandbox.
  const std::string seconds = Seconds();
  const pid_t busy = StartProcess({NpExecBin(), "--", "sleep", seconds},
                                  Options(RuntimeEnv({"NP_WARM_VALUE=v"}), 0, project_),
                                  dir_.Path("out"), dir_.Path("err"));
  ASSERT_GT(busy, 0);
  ASSERT_TRUE(WaitFor([&] { return !PidsWithCmdlinePrefix(SleepMarker(seconds)).empty(); }, 60000));
  RunResult beside = Spawn("echo beside", "v");
  EXPECT_EQ(beside.exit_code, 0) << beside.err;
  EXPECT_THAT(beside.out, HasSubstr("beside"));
  EXPECT_EQ(Sandboxes().size(), 3u) << ::testing::PrintToString(Sandboxes());
  kill(busy, SIGTERM);
  EXPECT_EQ(WaitProcess(busy, 20000), 128 + SIGTERM);
}

// The project's config is part of the plan: a changed file (here a key
// np-exec itself does not read) gets a sandbox of its own, and the first
// content, trusted again, finds its idle sandbox again.
TEST_P(WarmTest, AChangedConfigGetsASandboxOfItsOwn) {
  const nlohmann::json first = nlohmann::json::parse(
      ContainerConfig(runtime(), "np-test:local",
                      {{"warm", {{"idle_seconds", idle_seconds_}}}, {"env", {"NP_WARM_VALUE"}}}));
  nlohmann::json changed = first;
  changed["workflow"] = {{"auto_commit", false}};
  ASSERT_EQ(Spawn("true", "v").exit_code, 0);
  ASSERT_EQ(Sandboxes().size(), 1u);
  MakeProject(project_, changed.dump(2));
  RunResult other = Spawn("true", "v");
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_EQ(Sandboxes().size(), 2u) << ::testing::PrintToString(Sandboxes());
  MakeProject(project_, first.dump(2));
  RunResult again = Spawn("true", "v");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(Sandboxes().size(), 2u) << ::testing::PrintToString(Sandboxes());
  for (const nlohmann::json& run : RunLines()) EXPECT_EQ(run.value("warm", false), true);
}

// Warm asked for by the operator's file, a project file that needs no trust
// (not trusted: the ratchet writes the project's record after its first
// spawn): one sandbox serves both spawns.
TEST_P(WarmTest, WarmFromTheOperatorFileServesASpawnAfterTheRatchetsFirstRecord) {
  const std::string operator_home = dir_.MakeDir("operator");
  dir_.Write("operator/nubos-pilot/config.json",
             R"({"isolation": {"container": {"warm": {"idle_seconds": 60}}}})");
  // A project no record names yet (the fixture's was trusted).
  project_ = dir_.MakeDir("unrecorded");
  MakeProject(project_, ContainerConfig(runtime(), "np-test:local"),
              /*trust=*/runtime() == "bwrap");
  const std::vector<std::string> env = {"XDG_CONFIG_HOME=" + operator_home};
  for (const char* spawn : {"first", "second"}) {
    RunResult r = Np({"--", "true"}, env);
    ASSERT_EQ(r.exit_code, 0) << spawn << ": " << r.err;
  }
  EXPECT_EQ(Sandboxes().size(), 1u) << ::testing::PrintToString(Sandboxes());
  const std::vector<nlohmann::json> runs = RunLines();
  ASSERT_EQ(runs.size(), 2u);
  for (const nlohmann::json& run : runs) EXPECT_EQ(run.value("warm", false), true) << run.dump();
}

// An image that declares a volume (VOLUME /data) runs cold: the engine
// mounts a volume of the container's own there, which outlives a spawn in a
// kept sandbox and which the keeper's reset does not empty. Cold, each spawn
// gets a new one, removed with its container.
TEST_P(WarmTest, AnImageWithAVolumeRunsColdAndItsVolumeStartsEmpty) {
  if (runtime() == "bwrap") GTEST_SKIP() << "bubblewrap runs no image";
  const std::string context = dir_.MakeDir("volume-image");
  dir_.Write("volume-image/Dockerfile", "FROM np-test:local\nVOLUME /data\n");
  const std::string image = "np-test-volume:local";
  RunResult built = RunRuntime(runtime(), {"build", "-q", "-t", image, context});
  ASSERT_EQ(built.exit_code, 0) << built.err;
  MakeProject(project_, ContainerConfig(runtime(), image, {{"warm", {{"idle_seconds", 60}}}}));
  for (const char* spawn : {"first", "second"}) {
    RunResult r = Np({"--", "sh", "-c", "ls -A /data; echo left >/data/left-behind"});
    ASSERT_EQ(r.exit_code, 0) << spawn << ": " << r.err;
    EXPECT_EQ(r.out, "") << spawn << ": what an earlier spawn left in the volume";
  }
  EXPECT_TRUE(Sandboxes().empty()) << ::testing::PrintToString(Sandboxes());
  const std::vector<nlohmann::json> runs = RunLines();
  ASSERT_EQ(runs.size(), 2u);
  for (const nlohmann::json& run : runs) {
    EXPECT_EQ(run.value("warm", true), false) << run.dump();
    EXPECT_EQ(run.value("warm_cold_reason", ""), "warm-image-volumes") << run.dump();
  }
}

INSTANTIATE_TEST_SUITE_P(Runtimes, WarmTest, ::testing::Values("docker", "podman", "bwrap"),
                         RuntimeName);

}  // namespace
}  // namespace np::testing
