// Load tests (issue 6 item 4), through the built np-exec:
//   - 500 direct spawns, 16 at a time;
//   - 40 container spawns, 4 at a time, on docker, podman and bwrap.
// Each spawn exits with its own code (i % 100) and lists /proc/self/fd from
// inside the program: only 0, 1, 2 and the descriptor the listing itself uses
// may be there, so any descriptor np-exec leaked would show. Afterwards no
// process of the run and no container of np-exec is left, and the audit log
// holds exactly one "run" line per spawn (plus one "exit" line per supervised
// container spawn), every line whole JSON.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"

namespace np::testing {
namespace {

// Descriptors the test process itself holds (from the test runner, say) must
// not be mistaken for np-exec's leaks: close them on exec.
void CloseOnExecAllAbove2() {
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    int fd = std::stoi(entry.path().filename().string());
    if (fd > 2) fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
}

struct SpawnOutcome {
  int expected = 0;
  RunResult result;
};

// Runs `count` spawns with `parallel` workers; spawn(i) returns its result.
template <typename F>
std::vector<SpawnOutcome> RunSpawns(int count, int parallel, F spawn) {
  std::vector<SpawnOutcome> outcomes(static_cast<size_t>(count));
  std::atomic<int> next{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < parallel; ++w) {
    workers.emplace_back([&] {
      for (int i = next++; i < count; i = next++) {
        outcomes[static_cast<size_t>(i)].expected = i % 100;
        outcomes[static_cast<size_t>(i)].result = spawn(i);
      }
    });
  }
  for (std::thread& t : workers) t.join();
  return outcomes;
}

std::string Marker() {
  std::random_device rd;
  return "np-load-" + std::to_string(rd()) + std::to_string(rd());
}

// The program: lists its descriptors, then exits with $1. $0 is the marker,
// so the run's processes can be found in the host's process table.
const char kScript[] = "ls /proc/self/fd; exit \"$1\"";

void ExpectOutcomes(const std::vector<SpawnOutcome>& outcomes) {
  int wrong_status = 0, leaked = 0;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const SpawnOutcome& o = outcomes[i];
    if (o.result.exit_code != o.expected) {
      if (++wrong_status <= 5) {
        ADD_FAILURE() << "spawn " << i << " exited " << o.result.exit_code << ", expected "
                      << o.expected << ": " << o.result.err;
      }
    }
    if (o.result.out != "0\n1\n2\n3\n") {
      if (++leaked <= 5) {
        ADD_FAILURE() << "spawn " << i << " saw descriptors:\n" << o.result.out << o.result.err;
      }
    }
  }
  EXPECT_EQ(wrong_status, 0);
  EXPECT_EQ(leaked, 0);
}

TEST(LoadTest, FiveHundredDirectSpawnsSixteenAtATime) {
  CloseOnExecAllAbove2();
  TempDir dir;
  const std::string project = dir.MakeDir("project");
  MakeProject(project, R"({"isolation": {"tier": "direct"}})");
  const std::string marker = Marker();
  const std::vector<std::string> env = BaseEnv();
  auto outcomes = RunSpawns(500, 16, [&](int i) {
    return RunProcess(
        {NpExecBin(), "--", "/bin/sh", "-c", kScript, marker, std::to_string(i % 100)},
        Options(env, 60000, project));
  });
  ExpectOutcomes(outcomes);
  EXPECT_TRUE(PidsWithCmdline(marker).empty()) << "processes of the run are still alive";

  int bad = 0;
  std::vector<nlohmann::json> records = ReadAuditLog(project, &bad);
  EXPECT_EQ(bad, 0) << "torn or non-JSON audit lines";
  EXPECT_EQ(records.size(), 500u);
  std::set<long long> pids;
  for (const nlohmann::json& r : records) {
    EXPECT_EQ(r.value("decision", ""), "run") << r.dump();
    EXPECT_EQ(r.value("tier", ""), "direct") << r.dump();
    pids.insert(r.value("pid", -1LL));
  }
  EXPECT_EQ(pids.size(), 500u) << "one line per spawn, each from its own np-exec";
}

class ContainerLoadTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { NP_REQUIRE_RUNTIME(GetParam()); }
};

TEST_P(ContainerLoadTest, FortyContainerSpawnsFourAtATime) {
  const std::string runtime = GetParam();
  CloseOnExecAllAbove2();
  TempDir dir;
  const std::string project = dir.MakeDir("project");
  MakeProject(project, ContainerConfig(runtime, "np-test:local"));
  const std::string marker = Marker();
  const std::vector<std::string> env = RuntimeEnv();
  auto outcomes = RunSpawns(40, 4, [&](int i) {
    return RunProcess({NpExecBin(), "--", "sh", "-c", kScript, marker, std::to_string(i % 100)},
                      Options(env, 180000, project));
  });
  ExpectOutcomes(outcomes);
  EXPECT_TRUE(PidsWithCmdline(marker).empty()) << "processes of the run are still alive";

  int bad = 0;
  std::vector<nlohmann::json> records = ReadAuditLog(project, &bad);
  EXPECT_EQ(bad, 0) << "torn or non-JSON audit lines";
  int runs = 0;
  std::multiset<int> statuses;       // from the exit lines
  std::set<std::string> containers;  // docker, podman: one per spawn
  std::set<std::string> exited;
  for (const nlohmann::json& r : records) {
    if (r.value("decision", "") == "run") {
      ++runs;
      if (r.contains("container")) containers.insert(r["container"].get<std::string>());
    } else if (r.value("event", "") == "exit") {
      statuses.insert(r.value("exit_status", -1));
      if (r.contains("container")) exited.insert(r["container"].get<std::string>());
    } else {
      ADD_FAILURE() << "unexpected audit line: " << r.dump();
    }
  }
  // Every runtime is supervised: a run line before and an exit line after.
  EXPECT_EQ(runs, 40);
  EXPECT_EQ(records.size(), 80u);
  std::multiset<int> expected;
  for (int i = 0; i < 40; ++i) expected.insert(i % 100);
  EXPECT_EQ(statuses, expected);
  if (runtime != "bwrap") {
    EXPECT_EQ(containers.size(), 40u);
    EXPECT_EQ(exited, containers);
    // No container of these spawns is left.
    std::vector<std::string> left = LabelledContainers(runtime, "np-exec-");
    for (const std::string& name : left) {
      EXPECT_EQ(containers.count(name), 0u) << "left behind: " << name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Runtimes, ContainerLoadTest,
                         ::testing::Values("docker", "podman", "bwrap"), RuntimeName);

}  // namespace
}  // namespace np::testing
