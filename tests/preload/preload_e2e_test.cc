// The interposer on real runtimes (issue 8, done when: "on the container tier
// the program runs inside the container"): a real node on the host, with the
// interposer loaded, spawns process.execPath through child_process; that
// spawn is rewritten to `np-exec -- /usr/bin/node ...` and runs inside docker,
// podman or bubblewrap, where only the loopback interface exists and HOME is
// np-exec's own. The image
// (np-node:local) has node at the host's path, which the rewritten argv names.
#include <unistd.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"

namespace np::testing {
namespace {

constexpr char kLibrary[] = NP_PRELOAD_LIB;
constexpr char kRealNode[] = "/usr/bin/node";

class PreloadOnRuntimeTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    NP_REQUIRE_RUNTIME(GetParam());
    if (access(kRealNode, X_OK) != 0) {
      if (InCi()) FAIL() << kRealNode << " is required under CI=true";
      GTEST_SKIP() << kRealNode << " is not installed";
    }
  }
};

TEST_P(PreloadOnRuntimeTest, SpawnOfExecPathRunsInsideTheRuntime) {
  TempDir dir;
  const std::string project = dir.MakeDir("project");
  MakeProject(project, ContainerConfig(GetParam(), "np-node:local"));
  // The child prints its network interfaces and HOME: inside, only the
  // loopback and np-exec's own throw-away HOME.
  const std::string child =
      "console.log(Object.keys(require('os').networkInterfaces()).join(',') + ' ' + "
      "process.env.HOME)";
  const std::string parent =
      "const r = require('child_process').spawnSync(process.execPath, ['-e', " + std::string("\"") +
      child + "\"], {encoding: 'utf8'});" +
      "process.stdout.write('child:' + r.stdout); process.stderr.write(r.stderr || '');"
      "process.exit(r.status === null ? 99 : r.status);";
  std::vector<std::string> env =
      RuntimeEnv({std::string("LD_PRELOAD=") + kLibrary, "NP_EXEC_PRELOAD=" + NpExecBin()});
  RunResult r = RunProcess({kRealNode, "-e", parent}, Options(env, 120000, project));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "child:lo /home/np-exec\n") << r.err;

  int bad = 0;
  std::vector<nlohmann::json> records = ReadAuditLog(project, &bad);
  EXPECT_EQ(bad, 0);
  int runs = 0;
  for (const nlohmann::json& record : records) {
    if (record.value("decision", "") != "run") continue;
    ++runs;
    EXPECT_EQ(record.value("tier", ""), "container") << record.dump();
    EXPECT_EQ(record.value("runtime", ""), GetParam()) << record.dump();
    EXPECT_EQ(record.value("program", ""), kRealNode) << record.dump();
  }
  EXPECT_EQ(runs, 1) << "the spawn is wrapped exactly once";
}

INSTANTIATE_TEST_SUITE_P(Runtimes, PreloadOnRuntimeTest,
                         ::testing::Values("docker", "podman", "bwrap"), RuntimeName);

}  // namespace
}  // namespace np::testing
