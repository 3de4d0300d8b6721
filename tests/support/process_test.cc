// The test harness's own process runner: the load tests spawn from many
// threads, and every other test relies on its timeout and exit codes.
#include "tests/support/process.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace np::testing {
namespace {

using ::testing::HasSubstr;

// Many threads forking at once while others allocate: a child that
// allocated between fork and exec could block forever on an allocator lock
// (it did under ASan, as a 60 s timeout with no output). None may time out.
TEST(RunProcessTest, ManyThreadsSpawnAtOnceWithoutAHang) {
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&wrong, t] {
      for (int i = 0; i < 25; ++i) {
        RunOptions options;
        options.env = BaseEnv({"N=" + std::string(static_cast<size_t>(1000 + i), 'x')});
        options.timeout_ms = 30000;
        RunResult r = RunProcess({"/bin/sh", "-c", "exit $(( ${#N} % 100 ))"}, options);
        if (r.timed_out || r.exit_code != (1000 + i) % 100) ++wrong;
        std::vector<std::string> churn(64, std::string(static_cast<size_t>(t + 1) * 100, 'y'));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(RunProcessTest, TimeoutKillsAndSaysWhatTheChildWasRunning) {
  RunOptions options;
  options.env = BaseEnv();
  options.timeout_ms = 300;
  RunResult r = RunProcess({"/bin/sleep", "60"}, options);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.exit_code, 137);
  EXPECT_THAT(r.err, HasSubstr("timed out after 300 ms"));
  EXPECT_THAT(r.err, HasSubstr("sleep"));
}

TEST(RunProcessTest, Argv0AndWorkingDirectoryAndExitCodes) {
  RunOptions options;
  options.env = BaseEnv();
  options.cwd = "/";
  options.argv0 = "renamed";
  RunResult r = RunProcess({"/bin/sh", "-c", "echo \"$0 $(pwd)\"; exit 3"}, options);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "renamed /\n");
  EXPECT_EQ(RunProcess({"/nonexistent/program"}, options).exit_code, 127);
}

}  // namespace
}  // namespace np::testing
