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

#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"

namespace np::testing {
namespace {

using ::testing::HasSubstr;

constexpr int kSpawns = 40;

// Exchanges two names in `dir` as fast as it can until stopped; counts the
// exchanges that happened.
class Exchanger {
 public:
  Exchanger(const std::string& dir, std::string a, std::string b)
      : a_(std::move(a)), b_(std::move(b)) {
    dir_fd_ = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }
  ~Exchanger() {
    Stop();
    if (dir_fd_ >= 0) close(dir_fd_);
  }
  void Start() {
    thread_ = std::thread([this] {
      while (!stop_.load()) {
        if (renameat2(dir_fd_, a_.c_str(), dir_fd_, b_.c_str(), RENAME_EXCHANGE) == 0) {
          // Both versions must each stay in place for a moment, or nothing
          // would ever see the one it did not start with.
          exchanges_.fetch_add(1);
          usleep(200);
        }
      }
    });
  }
  // Stops and leaves the names as they were at the start.
  void Stop() {
    if (!thread_.joinable()) return;
    stop_.store(true);
    thread_.join();
    if (exchanges_.load() % 2 == 1) {
      renameat2(dir_fd_, a_.c_str(), dir_fd_, b_.c_str(), RENAME_EXCHANGE);
    }
  }
  long exchanges() const { return exchanges_.load(); }

 private:
  int dir_fd_ = -1;
  std::string a_;
  std::string b_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<long> exchanges_{0};
};

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
  int AuditLines(const std::string& decision, const std::string& tier = "") const {
    int bad = 0;
    int count = 0;
    for (const nlohmann::json& line : ReadAuditLog(inner_, &bad)) {
      if (!line.is_object() || line.value("decision", "") != decision) continue;
      if (!tier.empty() && line.value("tier", "") != tier) continue;
      ++count;
    }
    EXPECT_EQ(bad, 0);
    return count;
  }

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
  RunResult first =
      RunProcess({NpExecBin(), "--", "true"}, Options(RuntimeEnv(), 120000, inner_));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  dir_.Write("outer/inner/.nubos-pilot/evil.json", R"({"isolation":{"tier":"direct"}})");
  const int runs_before = AuditLines("run");

  Exchanger swap(inner_ + "/.nubos-pilot", "config.json", "evil.json");
  swap.Start();
  int ran = 0;
  int refused = 0;
  for (int i = 0; i < kSpawns; ++i) {
    RunResult r = RunProcess({NpExecBin(), "--", "sh", "-c", Program("")},
                             Options(RuntimeEnv(), 120000, inner_));
    if (r.exit_code == 0) {
      ++ran;
      EXPECT_EQ(r.out, "inner\n") << r.err;
    } else {
      ++refused;
      EXPECT_EQ(r.exit_code, 125) << r.out << r.err;
      EXPECT_EQ(r.out, "") << r.err;
    }
  }
  swap.Stop();
  EXPECT_GT(swap.exchanges(), kSpawns);
  EXPECT_EQ(HostMarkers(), 0);
  EXPECT_EQ(AuditLines("run", "direct"), 0);
  EXPECT_EQ(AuditLines("run") - runs_before, ran);
  EXPECT_EQ(AuditLines("refused"), refused);
  // Not a test that passes by refusing everything, nor by never swapping.
  EXPECT_GT(ran, 0);
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
  int ran = 0;
  int refused = 0;
  for (int i = 0; i < kSpawns; ++i) {
    RunResult r = RunProcess(
        {NpExecBin(), "--", "sh", "-c",
         Program("cat /evil-secret.txt 2>/dev/null; echo \"${NP_RACE_SECRET:-}\"")},
        Options(env, 120000, inner_));
    EXPECT_THAT(r.out, ::testing::Not(HasSubstr("secret"))) << r.err;
    if (r.exit_code == 0) {
      ++ran;
      EXPECT_EQ(r.out, "inner\n\n") << r.err;
    } else {
      ++refused;
      EXPECT_EQ(r.exit_code, 125) << r.out << r.err;
      EXPECT_THAT(r.err, HasSubstr("isolation-config-untrusted")) << r.err;
    }
  }
  swap.Stop();
  EXPECT_GT(swap.exchanges(), kSpawns);
  EXPECT_EQ(HostMarkers(), 0);
  EXPECT_EQ(AuditLines("refused"), refused);
  EXPECT_GT(ran, 0);
}

// The nested folder exchanged with a link to a folder of no project, while
// a shell whose working directory is the real nested folder spawns: every
// spawn finds its project (never "outside any project") and either runs in
// it, in the sandbox, or is refused with `project-moved`, audited in the
// nested project's own log.
TEST_P(SnapshotRaceTest, ANestedFolderExchangedWithALinkNeverLosesItsProject) {
  MakeProject(inner_, ContainerConfig(runtime(), "np-test:local"));
  const std::string decoy = dir_.MakeDir("decoy");
  dir_.Write("decoy/mine.txt", "decoy\n");
  ASSERT_EQ(symlink(decoy.c_str(), (outer_ + "/link").c_str()), 0);
  const std::string out = dir_.MakeDir("out");
  // The shell enters the real nested folder before anything is exchanged.
  const pid_t caller = StartProcess(
      {"/bin/sh", "-c",
       absl::StrCat("while [ ! -e ", out, "/go ]; do sleep 0.02; done; for i in $(seq ", kSpawns,
                    "); do timeout -s KILL 60 ", NpExecBin(), " -- sh -c '", Program(""), "' > ",
                    out, "/out.$i 2> ", out, "/err.$i; echo $? > ", out, "/rc.$i; done")},
      Options(RuntimeEnv(), 600000, inner_), dir_.Path("caller.out"), dir_.Path("caller.err"));
  ASSERT_GT(caller, 0);
  Exchanger swap(outer_, "inner", "link");
  swap.Start();
  dir_.Write("out/go", "");
  EXPECT_EQ(WaitProcess(caller, 590000), 0) << ReadFile(dir_.Path("caller.err"));
  swap.Stop();
  EXPECT_GT(swap.exchanges(), kSpawns);
  int ran = 0;
  int refused = 0;
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
    }
  }
  EXPECT_EQ(HostMarkers(), 0);
  EXPECT_EQ(ReadFile(decoy + "/mine.txt"), "decoy\n");
  EXPECT_EQ(ListNames(decoy), std::vector<std::string>({"mine.txt"}));
  EXPECT_EQ(AuditLines("run", "direct"), 0);
  // Every spawn left a line in the nested project's own log: refused by
  // np-exec, or run (a spawn the runtime or the entry point inside then
  // refused, having found a path swapped, ends with its exit line).
  EXPECT_EQ(AuditLines("run") + AuditLines("refused"), kSpawns);
  EXPECT_GE(AuditLines("run"), ran);
  EXPECT_EQ(ran + refused, kSpawns);
  EXPECT_GT(ran, 0);
}

// The times one spawn opens the project's config: once.
int ConfigOpens(const std::string& project, const std::vector<std::string>& env,
                const std::string& trace) {
  RunResult r = RunProcess({"/usr/bin/strace", "-f", "-qq", "-e", "trace=open,openat,openat2",
                            "-o", trace, NpExecBin(), "--", "true"},
                           Options(env, 120000, project));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // Only np-exec's own process counts (the first pid strace names): the
  // runtimes it starts open config.json files of their own.
  int opens = 0;
  std::string pid;
  std::string line;
  for (char c : ReadFile(trace)) {
    if (c != '\n') {
      line += c;
      continue;
    }
    const std::string line_pid = line.substr(0, line.find(' '));
    if (pid.empty()) pid = line_pid;
    if (line_pid == pid && (line.find(".nubos-pilot/config.json") != std::string::npos ||
                            line.find("\"config.json\"") != std::string::npos)) {
      ++opens;
    }
    line.clear();
  }
  return opens;
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

INSTANTIATE_TEST_SUITE_P(Runtimes, SnapshotRaceTest,
                         ::testing::Values("docker", "podman", "bwrap"), RuntimeName);

}  // namespace
}  // namespace np::testing
