// Mount targets on bubblewrap never pass a link on the host
// (core/bwrap_targets.h), on a real temporary project: a repository symlink
// under the project, under another mount's source, at any depth, is refused;
// a plain target, one whose missing part bubblewrap creates, and one on the
// sandbox's own root are accepted.
#include "core/bwrap_targets.h"

#include <unistd.h>

#include <string>
#include <vector>

#include "core/bwrap_argv.h"
#include "core/errors.h"
#include "core/mounts.h"
#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"

namespace np {
namespace {

class BwrapTargetsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    project_ = dir_.MakeDir("project");
    dir_.MakeDir("project/real/deeper");
    dir_.MakeDir("outside");
    dir_.MakeDir("data/sub");
    // x -> ../outside: a target under x/ would be created in outside/.
    ASSERT_EQ(symlink("../outside", (project_ + "/x").c_str()), 0);
    ASSERT_EQ(symlink("/", (project_ + "/real/root").c_str()), 0);
    ASSERT_EQ(symlink("../../outside", dir_.Path("data/sub/up").c_str()), 0);
    binds_ = {{"/usr", "/usr"}, {project_, project_}, {dir_.Path("data"), "/data"}};
  }
  std::string Code(const std::string& target) {
    return ErrorCode(CheckMountTargetHasNoLink(target, binds_));
  }
  testing::TempDir dir_;
  std::string project_;
  std::vector<SandboxBind> binds_;
};

TEST_F(BwrapTargetsTest, ALinkUnderTheProjectIsRefused) {
  EXPECT_EQ(Code(project_ + "/x/mnt"), "isolation-mount-target-symlink");
  EXPECT_EQ(Code(project_ + "/x"), "isolation-mount-target-symlink");
  EXPECT_EQ(Code(project_ + "/real/root/etc/planted"), "isolation-mount-target-symlink");
}

TEST_F(BwrapTargetsTest, ALinkUnderAnotherMountIsRefused) {
  EXPECT_EQ(Code("/data/sub/up/mnt"), "isolation-mount-target-symlink");
}

TEST_F(BwrapTargetsTest, TargetsWithoutLinksAreAccepted) {
  EXPECT_EQ(Code(project_ + "/real/deeper"), "");
  EXPECT_EQ(Code(project_ + "/real/missing/created/by/bwrap"), "");
  EXPECT_EQ(Code("/data/sub/new"), "");
  EXPECT_EQ(Code("/opt/tools"), "");  // The sandbox's own tmpfs root.
  EXPECT_EQ(Code(project_), "");
}

TEST_F(BwrapTargetsTest, TheArgvBuilderRefusesIt) {
  ContainerConfig config;
  config.runtime = Runtime::kBwrap;
  ContainerSpawn spawn;
  spawn.project_root = project_;
  spawn.cwd = project_;
  spawn.name = "np-exec-1";
  spawn.program = {"true"};
  const std::vector<ValidatedMount> mounts = {{dir_.Path("data"), project_ + "/x/mnt", false}};
  absl::StatusOr<std::vector<std::string>> argv = BuildBwrapArgv(config, mounts, spawn, {});
  EXPECT_EQ(ErrorCode(argv.status()), "isolation-mount-target-symlink");
  const std::vector<ValidatedMount> fine = {{dir_.Path("data"), project_ + "/real/mnt", false}};
  EXPECT_TRUE(BuildBwrapArgv(config, fine, spawn, {}).ok());
}

}  // namespace
}  // namespace np
