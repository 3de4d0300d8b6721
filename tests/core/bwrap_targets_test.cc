// Mount targets on bubblewrap never pass a link on the host
// (core/bwrap_targets.h), on a real temporary project: a repository symlink
// under the project, under another mount's source, at any depth, is refused;
// a plain target, one whose missing part bubblewrap creates, and one on the
// sandbox's own root are accepted.
#include "core/bwrap_targets.h"

#include <sys/stat.h>
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

// Issue 19 item 1: nothing bound twice, and read-only siblings that are the
// whole of a host directory as one bind.
TEST_F(BwrapTargetsTest, RedundantMountsAreLeftOut) {
  const std::string data = dir_.Path("data");
  const std::vector<SandboxBind> fixed = {{"/usr", "/usr"}, {project_, project_}};
  const std::vector<ValidatedMount> mounts = {{data, "/data", false},
                                              {data, "/data", false},
                                              {data + "/sub", "/data/sub", false},
                                              {data + "/sub", "/data/sub", true},
                                              {data + "/sub", "/elsewhere", false}};
  const std::vector<ValidatedMount> kept = CoalesceBwrapMounts(mounts, fixed);
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept[0].target, "/data");
  EXPECT_TRUE(kept[1].writable);  // Another mode is another mount.
  EXPECT_EQ(kept[2].target, "/elsewhere");
  // A mount made in between keeps the inner one, which covers it.
  const ValidatedMount between = {project_, "/data/sub", false};
  EXPECT_EQ(CoalesceBwrapMounts({mounts[0], between, mounts[2]}, fixed).size(), 3u);
}

TEST_F(BwrapTargetsTest, ReadOnlySiblingsOfAWholeDirectoryBecomeOneBind) {
  dir_.MakeDir("pkgs/a");
  dir_.MakeDir("pkgs/b");
  dir_.Write("pkgs/c", "c\n");
  const std::string pkgs = dir_.Path("pkgs");
  ASSERT_EQ(chmod(pkgs.c_str(), 0755), 0);
  std::vector<ValidatedMount> mounts = {{pkgs + "/a", "/opt/pkgs/a", false},
                                        {pkgs + "/b", "/opt/pkgs/b", false},
                                        {pkgs + "/c", "/opt/pkgs/c", false}};
  std::vector<ValidatedMount> binds = CoalesceBwrapMounts(mounts, {{"/usr", "/usr"}});
  ASSERT_EQ(binds.size(), 1u);
  EXPECT_EQ(binds[0].source, pkgs);
  EXPECT_EQ(binds[0].target, "/opt/pkgs");
  EXPECT_FALSE(binds[0].writable);
  // Not every entry: each stays a bind of its own.
  EXPECT_EQ(CoalesceBwrapMounts({mounts[0], mounts[1]}, {}).size(), 2u);
  // Writable ones are never merged (the program could create entries in pkgs/).
  std::vector<ValidatedMount> writable = mounts;
  for (ValidatedMount& mount : writable) mount.writable = true;
  EXPECT_EQ(CoalesceBwrapMounts(writable, {}).size(), 3u);
  // Something else bound at, above or below the parent target.
  EXPECT_EQ(CoalesceBwrapMounts(mounts, {{"/y", "/opt"}}).size(), 3u);
  EXPECT_EQ(CoalesceBwrapMounts(mounts, {{"/y", "/opt/pkgs/a/z"}}).size(), 3u);
  // A parent the program could not list (root reads any directory).
  if (geteuid() != 0) {
    ASSERT_EQ(chmod(pkgs.c_str(), 0311), 0);
    EXPECT_EQ(CoalesceBwrapMounts(mounts, {}).size(), 3u);
    ASSERT_EQ(chmod(pkgs.c_str(), 0755), 0);
  }
  // A name mapped elsewhere is not the same directory.
  mounts[2].target = "/opt/pkgs/renamed";
  EXPECT_EQ(CoalesceBwrapMounts(mounts, {}).size(), 3u);
}

}  // namespace
}  // namespace np
