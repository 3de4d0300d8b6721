// Issue 15, item 6: the runtime binary was found on the caller's PATH, folders
// inside the project included (node_modules/.bin is first on PATH in every npm
// script). A program plants a fake `docker`, `podman` or `bwrap` there that
// would run the next spawn in the host's namespaces. np-exec must never run
// it: with the real runtime later on PATH the spawn goes through the real one,
// and with only the planted one it is refused (69, isolation-runtime-untrusted)
// and nothing ran. A sentinel file the fake would write proves it never ran.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"

namespace np::testing {
namespace {

using ::testing::HasSubstr;

class PlantedRuntimeTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    NP_REQUIRE_RUNTIME(GetParam());
    project_ = dir_.MakeDir("project");
    MakeProject(project_, ContainerConfig(GetParam(), "np-test:local"));
    sentinel_ = dir_.Path("planted-runtime-ran");
    planted_dir_ = project_ + "/node_modules/.bin";
    // Root-owned and 0755 like the rest of the project: only its place
    // inside the project makes it untrusted.
    dir_.MakeDir("project/node_modules/.bin");
    const std::string planted = planted_dir_ + "/" + GetParam();
    std::ofstream(planted) << "#!/bin/sh\n/usr/bin/touch " << sentinel_ << "\nexit 0\n";
    ASSERT_EQ(chmod(planted.c_str(), 0755), 0);
  }
  RunResult Run(const std::string& path, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {NpExecBin()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, Options(RuntimeEnv({"PATH=" + path}), 120000, project_));
  }
  bool SentinelExists() const {
    struct stat st;
    return stat(sentinel_.c_str(), &st) == 0;
  }
  TempDir dir_;
  std::string project_;
  std::string planted_dir_;
  std::string sentinel_;
};

TEST_P(PlantedRuntimeTest, APlantedRuntimeFirstOnPathIsSkipped) {
  const char* path = getenv("PATH");
  RunResult r = Run(planted_dir_ + ":" + (path != nullptr ? path : "/usr/bin:/bin"),
                    {"--", "sh", "-c", "echo inside"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "inside\n");
  EXPECT_FALSE(SentinelExists()) << "the planted runtime ran";
  // status names the trusted binary and why it is trusted.
  RunResult status =
      Run(planted_dir_ + ":" + (path != nullptr ? path : "/usr/bin:/bin"), {"status", "--json"});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  const nlohmann::json out = nlohmann::json::parse(status.out);
  EXPECT_THAT(out["runtime"]["bin"].get<std::string>(), ::testing::StartsWith("/usr/"));
  EXPECT_THAT(out["runtime"]["bin_trusted_because"].get<std::string>(), HasSubstr("root"));
  // So does doctor.
  RunResult doctor =
      Run(planted_dir_ + ":" + (path != nullptr ? path : "/usr/bin:/bin"), {"doctor", "--json"});
  const nlohmann::json report = nlohmann::json::parse(doctor.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << doctor.out << doctor.err;
  EXPECT_EQ(report["runtime"]["bin"], out["runtime"]["bin"]);
  EXPECT_THAT(report["runtime"]["bin_trusted_because"].get<std::string>(), HasSubstr("root"));
  EXPECT_FALSE(SentinelExists()) << "the planted runtime ran";
}

TEST_P(PlantedRuntimeTest, OnlyAPlantedRuntimeIsRefused) {
  RunResult r = Run(planted_dir_, {"--", "/usr/bin/touch", dir_.Path("program-ran")});
  EXPECT_EQ(r.exit_code, 69) << r.err;
  EXPECT_THAT(r.err, HasSubstr("isolation-runtime-untrusted"));
  EXPECT_THAT(r.err, HasSubstr(planted_dir_));
  EXPECT_FALSE(SentinelExists()) << "the planted runtime ran";
  struct stat st;
  EXPECT_NE(stat(dir_.Path("program-ran").c_str(), &st), 0) << "the program ran";
  RunResult status = Run(planted_dir_, {"status", "--json"});
  EXPECT_EQ(status.exit_code, 1);
  EXPECT_EQ(nlohmann::json::parse(status.out)["runtime"]["reason"], "runtime-untrusted");
  EXPECT_FALSE(SentinelExists()) << "the planted runtime ran";
}

INSTANTIATE_TEST_SUITE_P(Runtimes, PlantedRuntimeTest,
                         ::testing::Values("docker", "podman", "bwrap"), RuntimeName);

}  // namespace
}  // namespace np::testing
