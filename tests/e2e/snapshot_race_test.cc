// One look at the project per spawn, attacked. A project nested in another
// (nubos-pilot's slice worktrees live inside the repository) can be changed
// by a program of the same user while np-exec decides: here a thread of the
// test, which can do whatever a program in the enclosing project's sandbox
// can, and more. Two attacks, 40 spawns each, on docker, podman and
// bubblewrap:
//   - the nested project's config.json is exchanged with another version
//     (renameat2 RENAME_EXCHANGE) in a loop: a plan built from one read and
//     trust judged on a second ran spawns on the host, or ran a widened plan
//     nobody trusted;
//   - the nested folder is exchanged with a link to a folder of no project:
//     a project found by path found none and ran the spawn in place.
// Afterwards: no spawn ran on the host (a marker only the host can write),
// none ran the untrusted plan, and every refusal has its audit line in the
// nested project's own log.
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <random>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "core/protected_paths.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"
#include "tests/support/exchanger.h"

namespace np::testing {
namespace {

using ::testing::HasSubstr;

constexpr int kSpawns = 40;

class SnapshotRaceTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    NP_REQUIRE_RUNTIME(runtime());
    // The enclosing folder is no project, so a nested project that is not
    // found leaves the spawn "outside any project".
    outer_ = dir_.MakeDir("outer");
    inner_ = dir_.MakeDir("outer/inner");
    host_only_ = dir_.MakeDir("host-only");
    chmod(host_only_.c_str(), 0777);
    dir_.Write("outer/inner/mine.txt", "inner\n");
  }

  const std::string& runtime() const { return GetParam(); }

  // sh -c: writes a marker where only a spawn on the host can (the folder is
  // outside every mount), then prints what it sees.
  std::string Program(const std::string& extra) const {
    return absl::StrCat("if [ -d ", host_only_, " ]; then touch ", host_only_,
                        "/ran-on-the-host.$$; fi; cat mine.txt 2>/dev/null; ", extra);
  }

  int HostMarkers() const {
    int count = 0;
    for (const std::string& name : ListNames(host_only_)) {
      if (name.rfind("ran-on-the-host.", 0) == 0) ++count;
    }
    return count;
  }

  static std::vector<std::string> ListNames(const std::string& dir) {
    std::vector<std::string> names;
    RunResult ls = RunProcess({"/bin/ls", "-A", dir}, Options(BaseEnv()));
    std::string name;
    for (char c : ls.out) {
      if (c == '\n') {
        if (!name.empty()) names.push_back(name);
        name.clear();
      } else {
        name += c;
      }
    }
    return names;
  }

  // The nested project's audit lines of `decision` ("run", "refused").
  std::vector<nlohmann::json> Audit(const std::string& decision) const {
    int bad = 0;
    std::vector<nlohmann::json> lines;
    for (const nlohmann::json& line : ReadAuditLog(inner_, &bad)) {
      if (line.is_object() && line.value("decision", "") == decision) lines.push_back(line);
    }
    EXPECT_EQ(bad, 0);
    return lines;
  }
  int AuditLines(const std::string& decision, const std::string& tier = "") const {
    int count = 0;
    for (const nlohmann::json& line : Audit(decision)) {
      if (tier.empty() || line.value("tier", "") == tier) ++count;
    }
    return count;
  }
  // Refusals of spawns whose project could not even be located (it moved
  // while it was walked): they go to the operator's store, refusals.jsonl,
  // with the working directory as "project".
  int OperatorRefusals() const {
    int count = 0;
    std::istringstream lines(ReadFile(TestStateHome() + "/np-exec/refusals.jsonl"));
    std::string line;
    while (std::getline(lines, line)) {
      const nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
      if (record.is_object() && record.value("project", "").rfind(outer_ + "/", 0) == 0) ++count;
    }
    return count;
  }
  int RefusedWith(const std::string& code) const {
    int count = 0;
    for (const nlohmann::json& line : Audit("refused")) count += line.value("code", "") == code;
    return count;
  }

  // One spawn's outcome under a race: it ran in its sandbox (exit 0, what the
  // real project holds) or nothing of the program ran (no output): refused by
  // np-exec with a code, or by the runtime or np-exec's entry point inside,
  // which found a pinned source swapped.
  void ExpectRanOrNothing(const RunResult& r, const std::string& ran_output) {
    if (r.exit_code == 0) {
      EXPECT_EQ(r.out, ran_output) << r.err;
    } else {
      EXPECT_EQ(r.out, "") << r.exit_code << " " << r.err;
    }
  }

  void ExchangeTheFolderWhileSpawning(const std::string& link_target, const std::string& extra);

  TempDir dir_;
  std::string outer_;
  std::string inner_;
  std::string host_only_;
};

// A trusted container config and an evil one that asks for the direct tier,
// exchanged in a loop: a spawn either runs in the sandbox or is refused
// (the ratchet), never on the host.
TEST_P(SnapshotRaceTest, AConfigExchangedWithADirectOneNeverRunsOnTheHost) {
  MakeProject(inner_, ContainerConfig(runtime(), "np-test:local"));
  // One spawn first, so the ratchet knows the project ran contained.
  RunResult first = RunProcess({NpExecBin(), "--", "true"}, Options(RuntimeEnv(), 120000, inner_));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  dir_.Write("outer/inner/.nubos-pilot/evil.json", R"({"isolation":{"tier":"direct"}})");
  const int runs_before = AuditLines("run");

  Exchanger swap(inner_ + "/.nubos-pilot", "config.json", "evil.json");
  swap.Start();
  for (int i = 0; i < kSpawns; ++i) {
    ExpectRanOrNothing(RunProcess({NpExecBin(), "--", "sh", "-c", Program("")},
                                  Options(RuntimeEnv(), 120000, inner_)),
                       "inner\n");
  }
  swap.Stop();
  EXPECT_GT(swap.exchanges(), kSpawns);
  EXPECT_EQ(HostMarkers(), 0);
  // Each spawn decided once, and never for the direct tier.
  EXPECT_EQ(AuditLines("run", "direct"), 0);
  EXPECT_EQ(AuditLines("run") - runs_before + AuditLines("refused"), kSpawns);
  // Both versions were seen: the evil one refused by the ratchet, the
  // trusted one decided on. Not a test that passes by never swapping.
  EXPECT_GT(RefusedWith("isolation-tier-lowered"), 0);
  EXPECT_GT(AuditLines("run") - runs_before, 0);
}

// A benign config that needs no trust and an evil one that widens (a host
// file mounted, a variable forwarded, the host's network), exchanged in a
// loop: the untrusted plan never runs.
TEST_P(SnapshotRaceTest, AConfigExchangedWithAWideningOneNeverRunsUntrusted) {
  const std::string secret_file = dir_.Write("host-secret.txt", "host secret file\n");
  MakeProject(inner_, ContainerConfig(runtime(), "np-test:local"));
  nlohmann::json evil = nlohmann::json::parse(ContainerConfig(
      runtime(), "np-test:local",
      {{"network", "host"},
       {"env", {"NP_RACE_SECRET"}},
       {"mounts", {{{"source", secret_file}, {"target", "/evil-secret.txt"}, {"mode", "ro"}}}}}));
  dir_.Write("outer/inner/.nubos-pilot/evil.json", evil.dump());
  std::vector<std::string> env = RuntimeEnv({"NP_RACE_SECRET=forwarded secret value"});

  Exchanger swap(inner_ + "/.nubos-pilot", "config.json", "evil.json");
  swap.Start();
  for (int i = 0; i < kSpawns; ++i) {
    RunResult r =
        RunProcess({NpExecBin(), "--", "sh", "-c",
                    Program("cat /evil-secret.txt 2>/dev/null; echo \"${NP_RACE_SECRET:-}\"")},
                   Options(env, 120000, inner_));
    EXPECT_THAT(r.out, ::testing::Not(HasSubstr("secret"))) << r.err;
    ExpectRanOrNothing(r, "inner\n\n");
  }
  swap.Stop();
  EXPECT_GT(swap.exchanges(), kSpawns);
  EXPECT_EQ(HostMarkers(), 0);
  // No decided plan carries what only the untrusted version asks for.
  for (const nlohmann::json& line : Audit("run")) {
    EXPECT_THAT(line.dump(), ::testing::Not(HasSubstr("NP_RACE_SECRET")));
    EXPECT_THAT(line.dump(), ::testing::Not(HasSubstr("host-secret.txt")));
  }
  EXPECT_EQ(AuditLines("run") + AuditLines("refused"), kSpawns);
  EXPECT_GT(RefusedWith("isolation-config-untrusted"), 0);
  EXPECT_GT(AuditLines("run"), 0);
}

// The nested folder exchanged with a link to a folder of no project, while
// a shell whose working directory is the real nested folder spawns: every
// spawn finds its project (never "outside any project") and either runs in
// it, in the sandbox, or is refused with `project-moved`, audited in the
// nested project's own log.
// Exchanges the nested folder with a link to `link_target` while a shell in
// the real nested folder makes kSpawns spawns of Program(`extra`); checks
// what every attack of this kind must leave: each spawn ran in the real
// folder or nothing of it ran, none on the host, none "outside any project",
// and each has its line in the nested project's own log.
void SnapshotRaceTest::ExchangeTheFolderWhileSpawning(const std::string& link_target,
                                                      const std::string& extra) {
  MakeProject(inner_, ContainerConfig(runtime(), "np-test:local"));
  // How long one spawn takes on this machine, before anything is exchanged:
  // the slow phase below holds each folder longer than that, or on a slow
  // machine no spawn would get through and the test would show nothing.
  // (In a project of its own, so the counts below stay the race's.)
  const std::string timing = dir_.MakeDir("timing");
  MakeProject(timing, ContainerConfig(runtime(), "np-test:local"));
  // The slowest of three, since one spawn's time varies a lot on a loaded
  // machine.
  unsigned spawn_us = 0;
  for (int i = 0; i < 3; ++i) {
    const auto timed = std::chrono::steady_clock::now();
    RunResult one = RunProcess({NpExecBin(), "--", "true"}, Options(RuntimeEnv(), 120000, timing));
    ASSERT_EQ(one.exit_code, 0) << one.err;
    const auto took = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - timed);
    spawn_us = std::max(spawn_us, static_cast<unsigned>(took.count()));
  }
  ASSERT_EQ(symlink(link_target.c_str(), (outer_ + "/link").c_str()), 0);
  const std::string out = dir_.MakeDir("out");
  // The shell enters the real nested folder before anything is exchanged.
  const pid_t caller = StartProcess(
      {"/bin/sh", "-c",
       absl::StrCat("touch ", out, "/ready; while [ ! -e ", out,
                    "/go ]; do sleep 0.02; done; for i in $(seq ", kSpawns,
                    "); do timeout -s KILL 60 ", NpExecBin(), " -- sh -c '", Program(extra), "' > ",
                    out, "/out.$i 2> ", out, "/err.$i; echo $? > ", out, "/rc.$i; done")},
      Options(RuntimeEnv(), 600000, inner_), dir_.Path("caller.out"), dir_.Path("caller.err"));
  ASSERT_GT(caller, 0);
  ASSERT_TRUE(WaitFor([&] { return access((out + "/ready").c_str(), F_OK) == 0; }, 30000));
  struct stat caller_cwd;
  struct stat real_inner;
  ASSERT_EQ(stat(absl::StrCat("/proc/", caller, "/cwd").c_str(), &caller_cwd), 0);
  ASSERT_EQ(stat(inner_.c_str(), &real_inner), 0);
  ASSERT_EQ(caller_cwd.st_ino, real_inner.st_ino) << "the caller is not in the nested folder";
  // The first half under fast exchanges (the attack: a folder renamed every
  // few hundred microseconds); in the second half the real folder stays at
  // its name for longer than a spawn takes (the link still comes, briefly),
  // so some spawns get through and show they ran in the real folder. Held
  // evenly, a spawn refused in a few ms while the link is there would let
  // every spawn left fall into one long hold of the link.
  Exchanger swap(outer_, "inner", "link");
  swap.Start();
  dir_.Write("out/go", "");
  EXPECT_TRUE(WaitFor(
      [&] { return access(absl::StrCat(out, "/rc.", kSpawns / 2).c_str(), F_OK) == 0; }, 590000));
  // Longer than one spawn takes on the runtime (a few ms on bubblewrap, a
  // few hundred on an engine): four to twelve times the one timed above.
  swap.SetOriginalHold(std::max(20000u, 4 * spawn_us), std::max(100000u, 12 * spawn_us));
  EXPECT_EQ(WaitProcess(caller, 590000), 0) << ReadFile(dir_.Path("caller.err"));
  swap.Stop();
  EXPECT_GT(swap.exchanges(), kSpawns);
  int ran = 0;
  int refused = 0;
  std::string first_refusal;
  for (int i = 1; i <= kSpawns; ++i) {
    const std::string n = std::to_string(i);
    const std::string spawn_out = ReadFile(out + "/out." + n);
    const std::string spawn_err = ReadFile(out + "/err." + n);
    const std::string rc = ReadFile(out + "/rc." + n);
    EXPECT_THAT(spawn_err, ::testing::Not(HasSubstr("not-in-project")));
    if (rc == "0\n") {
      ++ran;
      EXPECT_EQ(spawn_out, "inner\n") << spawn_err;
    } else {
      ++refused;
      EXPECT_EQ(spawn_out, "") << spawn_err;
      if (first_refusal.empty()) first_refusal = "exit " + rc + spawn_err;
    }
  }
  EXPECT_EQ(HostMarkers(), 0);
  EXPECT_EQ(AuditLines("run", "direct"), 0);
  // Every spawn left a line: in the nested project's own log, refused by
  // np-exec or run (a spawn the runtime or the entry point inside then
  // refused, having found a path swapped, ends with its exit line), or in the
  // operator's store when the project moved while it was being located.
  EXPECT_EQ(AuditLines("run") + AuditLines("refused") + OperatorRefusals(), kSpawns);
  EXPECT_GE(AuditLines("run"), ran);
  EXPECT_EQ(ran + refused, kSpawns);
  EXPECT_GT(ran, 0) << "the first refusal: " << first_refusal;
}

TEST_P(SnapshotRaceTest, ANestedFolderExchangedWithALinkNeverLosesItsProject) {
  const std::string decoy = dir_.MakeDir("decoy");
  dir_.Write("decoy/mine.txt", "decoy\n");
  ExchangeTheFolderWhileSpawning(decoy, "");
  EXPECT_EQ(ReadFile(decoy + "/mine.txt"), "decoy\n");
  // bubblewrap binds the sources np-exec opened: nothing reaches the decoy.
  // docker and podman bind by path and check inside (docs/security.md's
  // limit): an engine that resolved the swapped path has by then made its
  // nested mount points there (the protected paths' top-level names, empty);
  // nothing else is written, and nothing that was there changes.
  std::vector<std::string> allowed = {"mine.txt"};
  if (runtime() != "bwrap") {
    for (const std::string& path : DefaultProtectedPaths()) {
      allowed.push_back(path.substr(0, path.find('/')));
    }
  }
  for (const std::string& name : ListNames(decoy)) {
    EXPECT_NE(std::find(allowed.begin(), allowed.end(), name), allowed.end())
        << name << " was written into the folder outside";
    if (name == "mine.txt") continue;
    RunResult deeper = RunProcess({"/usr/bin/find",
                                   decoy + "/" + name,
                                   "(",
                                   "(",
                                   "-type",
                                   "f",
                                   "-size",
                                   "+0",
                                   ")",
                                   "-o",
                                   "(",
                                   "!",
                                   "-type",
                                   "d",
                                   "!",
                                   "-type",
                                   "f",
                                   ")",
                                   ")",
                                   "-print"},
                                  Options(BaseEnv()));
    EXPECT_EQ(deeper.out, "") << name << " holds more than empty mount points";
  }
}

// The link leads to the folder above the nested one: a plan that resolved
// the project's path again in that moment mounted the enclosing folder, every
// sibling with it, writable. The program tries to write beside the project.
TEST_P(SnapshotRaceTest, ANestedFolderExchangedWithALinkAboveItNeverMountsThatFolder) {
  ExchangeTheFolderWhileSpawning(outer_, "touch ../escaped.$$ 2>/dev/null; ");
  for (const std::string& name : ListNames(outer_)) {
    EXPECT_EQ(name.rfind("escaped.", 0), std::string::npos) << name << " was written beside it";
  }
}

// The times one spawn opens the project's config: once.
// The lines of one `np-exec -- true` in `project` under strace (the
// `syscalls` given) that np-exec's own process made (the first pid strace
// names: the runtimes it starts open files of their own) and that contain
// every one of `needles`.
int OwnCalls(const std::string& project, const std::vector<std::string>& env,
             const std::string& trace, const std::string& syscalls,
             const std::vector<std::vector<std::string>>& any_of) {
  RunResult r = RunProcess({"/usr/bin/strace", "-f", "-qq", "-e", "trace=" + syscalls, "-o", trace,
                            NpExecBin(), "--", "true"},
                           Options(env, 120000, project));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  int calls = 0;
  std::string pid;
  std::string line;
  for (char c : ReadFile(trace)) {
    if (c != '\n') {
      line += c;
      continue;
    }
    const std::string line_pid = line.substr(0, line.find(' '));
    if (pid.empty()) pid = line_pid;
    bool counted = false;
    for (const std::vector<std::string>& needles : any_of) {
      bool all = true;
      for (const std::string& needle : needles) all = all && line.find(needle) != std::string::npos;
      counted = counted || all;
    }
    if (line_pid == pid && counted) ++calls;
    line.clear();
  }
  return calls;
}

int ConfigOpens(const std::string& project, const std::vector<std::string>& env,
                const std::string& trace) {
  return OwnCalls(project, env, trace, "open,openat,openat2",
                  {{".nubos-pilot/config.json"}, {"\"config.json\""}});
}

// The project's git layout is read once per spawn (core/git_layout.h's
// ProjectGit): its `commondir` is opened to be read once, whatever the
// protected paths, the git mounts, the spawn lock and the state store's key
// ask of it (it was three times).
TEST_P(SnapshotRaceTest, OneSpawnReadsTheProjectsGitOnce) {
  if (access("/usr/bin/strace", X_OK) != 0) NP_NEEDS("strace is not installed");
  // A repository first: its common directory keys the trust MakeProject records.
  RunResult init = RunProcess({"/usr/bin/git", "init", "-q", inner_}, Options(BaseEnv()));
  ASSERT_EQ(init.exit_code, 0) << init.err;
  MakeProject(inner_, ContainerConfig(runtime(), "np-test:local"));
  EXPECT_EQ(OwnCalls(inner_, RuntimeEnv(), dir_.Path("trace"), "open,openat,openat2",
                     {{".git/commondir", "O_RDONLY|O_NONBLOCK|O_NOFOLLOW"}}),
            1);
}

TEST_P(SnapshotRaceTest, OneSpawnOpensTheConfigOnce) {
  if (access("/usr/bin/strace", X_OK) != 0) NP_NEEDS("strace is not installed");
  MakeProject(inner_, ContainerConfig(runtime(), "np-test:local"));
  EXPECT_EQ(ConfigOpens(inner_, RuntimeEnv(), dir_.Path("trace")), 1);
}

TEST(SnapshotDirectTest, OneSpawnOpensTheConfigOnce) {
  if (access("/usr/bin/strace", X_OK) != 0) NP_NEEDS("strace is not installed");
  TempDir dir;
  const std::string project = dir.MakeDir("p");
  MakeProject(project, R"({"isolation":{"tier":"direct"}})");
  EXPECT_EQ(ConfigOpens(project, BaseEnv(), dir.Path("trace")), 1);
}

INSTANTIATE_TEST_SUITE_P(Runtimes, SnapshotRaceTest, ::testing::Values("docker", "podman", "bwrap"),
                         RuntimeName);

}  // namespace
}  // namespace np::testing
