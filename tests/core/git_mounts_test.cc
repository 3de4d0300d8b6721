// The git directories a linked worktree gets on the container tier
// (core/git_mounts.h): what is mounted, what stays read-only, and every
// `.git` file a repository could ship to get another host directory mounted.
#include "core/git_mounts.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/bwrap_argv.h"
#include "core/container_argv.h"
#include "core/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"

namespace np {
namespace {

using ::np::testing::TempDir;
using ::testing::ElementsAre;

std::string Real(const std::string& path) {
  char buffer[PATH_MAX];
  return realpath(path.c_str(), buffer) != nullptr ? buffer : path;
}

// main/ with a repository, its main worktree a project; wt/ a linked worktree
// as `git worktree add` leaves it.
class GitMountsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = Real(dir_.path());
    dir_.MakeDir("main/.nubos-pilot");
    dir_.Write("main/.git/HEAD", "ref: refs/heads/main\n");
    dir_.Write("main/.git/config", "[core]\n");
    dir_.MakeDir("main/.git/objects/info");
    dir_.MakeDir("main/.git/refs/heads");
    dir_.MakeDir("main/.git/hooks");
    dir_.MakeDir("main/.git/info");
    dir_.Write("main/.git/worktrees/wt/HEAD", "ref: refs/heads/wt\n");
    dir_.Write("main/.git/worktrees/wt/commondir", "../..\n");
    dir_.Write("main/.git/worktrees/wt/gitdir", root_ + "/wt/.git\n");
    dir_.Write("wt/.git", "gitdir: " + root_ + "/main/.git/worktrees/wt\n");
    common_ = root_ + "/main/.git";
    gitdir_ = common_ + "/worktrees/wt";
  }

  absl::StatusOr<GitMounts> Plan(const std::string& project, const std::string& home = "",
                                 std::vector<std::string> forbidden = {},
                                 const std::string& target = "") {
    MountPolicy policy;
    policy.project_real = project;
    policy.forbidden = std::move(forbidden);
    return PlanGitMounts(project, target.empty() ? project : target, policy, home,
                         {"/tmp", "/home/np-exec"});
  }

  // The read-only nodes below `root`, relative, with "+" for a placeholder.
  static std::vector<std::string> ReadOnly(const GitMounts& mounts, const std::string& root) {
    std::vector<std::string> out;
    for (const ProtectedBind& bind : mounts.binds) {
      if (bind.root == root && !bind.writable) {
        out.push_back(bind.relative + (bind.placeholder ? "+" : ""));
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  TempDir dir_;
  std::string root_, common_, gitdir_;
};

TEST_F(GitMountsTest, AWorktreeGetsBothDirectoriesWithGitsExecSurfaceReadOnly) {
  absl::StatusOr<GitMounts> mounts = Plan(root_ + "/wt");
  ASSERT_TRUE(mounts.ok()) << mounts.status();
  EXPECT_THAT(mounts->roots, ElementsAre(common_, gitdir_));
  EXPECT_THAT(ReadOnly(*mounts, common_), ElementsAre("commondir+", "config", "config.worktree+",
                                                      "hooks", "info", "modules+", "worktrees"));
  EXPECT_THAT(ReadOnly(*mounts, gitdir_),
              ElementsAre("commondir", "config.worktree+", "gitdir", "info+"));
  // Objects, refs, logs and the index stay writable: nothing pins them but
  // the roots themselves.
  for (const ProtectedBind& bind : mounts->binds) {
    EXPECT_FALSE(bind.root.empty()) << bind.relative;
    EXPECT_NE(bind.relative.rfind("objects", 0), 0u) << bind.relative;
    EXPECT_NE(bind.relative.rfind("refs", 0), 0u) << bind.relative;
  }
}

TEST_F(GitMountsTest, NothingForAMainWorktreeANonRepositoryOrASubmodule) {
  absl::StatusOr<GitMounts> main = Plan(root_ + "/main");
  ASSERT_TRUE(main.ok()) << main.status();
  EXPECT_TRUE(main->roots.empty());
  EXPECT_TRUE(main->binds.empty());
  dir_.MakeDir("plain");
  absl::StatusOr<GitMounts> plain = Plan(root_ + "/plain");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_TRUE(plain->roots.empty());
  // A submodule's git directory has no commondir: not mounted.
  dir_.Write("main/.git/modules/sub/HEAD", "ref: refs/heads/main\n");
  dir_.Write("sub/.git", "gitdir: " + common_ + "/modules/sub\n");
  absl::StatusOr<GitMounts> sub = Plan(root_ + "/sub");
  ASSERT_TRUE(sub.ok()) << sub.status();
  EXPECT_TRUE(sub->roots.empty());
}

// What a repository could ship as `.git` to have a host directory mounted
// writable: each is refused, nothing is mounted.
TEST_F(GitMountsTest, AGitFileThatIsNotAWorktreeIsRefused) {
  // A directory that looks like a git directory but is not in worktrees/.
  dir_.Write("secret/gitdir", root_ + "/evil/.git\n");
  dir_.Write("secret/commondir", "../main/.git\n");
  dir_.Write("evil/.git", "gitdir: " + root_ + "/secret\n");
  EXPECT_EQ(ErrorCode(Plan(root_ + "/evil").status()), "project-git-invalid");
  // In worktrees/, but its back-link names another checkout.
  dir_.Write("main/.git/worktrees/other/commondir", "../..\n");
  dir_.Write("main/.git/worktrees/other/gitdir", root_ + "/wt/.git\n");
  dir_.Write("evil2/.git", "gitdir: " + common_ + "/worktrees/other\n");
  EXPECT_EQ(ErrorCode(Plan(root_ + "/evil2").status()), "project-git-invalid");
  // No back-link at all.
  dir_.Write("main/.git/worktrees/bare/commondir", "../..\n");
  dir_.Write("evil3/.git", "gitdir: " + common_ + "/worktrees/bare\n");
  EXPECT_EQ(ErrorCode(Plan(root_ + "/evil3").status()), "project-git-invalid");
  // A common directory that is no repository (a home's dot directory, say).
  dir_.Write("dots/worktrees/x/commondir", "../..\n");
  dir_.Write("dots/worktrees/x/gitdir", root_ + "/evil4/.git\n");
  dir_.Write("evil4/.git", "gitdir: " + root_ + "/dots/worktrees/x\n");
  EXPECT_EQ(ErrorCode(Plan(root_ + "/evil4").status()), "project-git-invalid");
}

TEST_F(GitMountsTest, ARootIsCheckedLikeAnyMountSource) {
  EXPECT_EQ(ErrorCode(Plan(root_ + "/wt", "", {common_ + "/refs"}).status()),
            "isolation-mount-forbidden-source");
  EXPECT_EQ(ErrorCode(Plan(root_ + "/wt", common_ + "/refs/heads").status()),
            "isolation-project-too-broad");
  // Mounted where the project is mounted inside.
  EXPECT_EQ(ErrorCode(Plan(root_ + "/wt", "", {}, root_ + "/main").status()),
            "isolation-git-dir-unsafe");
}

// Another project's sandbox could rename a directory of its own and put a
// link in its place between the check and the runtime's mount; the main
// worktree's `.git` is pinned in its sandboxes, so it alone may hold one.
TEST_F(GitMountsTest, ARootInsideAnotherProjectIsRefused) {
  ASSERT_TRUE(Plan(root_ + "/wt").ok());
  dir_.MakeDir(".nubos-pilot");
  EXPECT_EQ(ErrorCode(Plan(root_ + "/wt").status()), "isolation-git-dir-unsafe");
}

TEST_F(GitMountsTest, TheArgvMountsEachRootThenItsReadOnlyNodes) {
  absl::StatusOr<GitMounts> mounts = Plan(root_ + "/wt");
  ASSERT_TRUE(mounts.ok()) << mounts.status();
  ContainerSpawn spawn;
  spawn.project_root = root_ + "/wt";
  spawn.cwd = spawn.project_root;
  spawn.program = {"true"};
  spawn.git_roots = mounts->roots;
  spawn.protected_binds = mounts->binds;
  ContainerConfig config;
  config.runtime = Runtime::kDocker;
  config.image = "img";
  absl::StatusOr<std::vector<std::string>> docker = BuildContainerArgv(config, {}, spawn);
  ASSERT_TRUE(docker.ok()) << docker.status();
  auto index_of = [](const std::vector<std::string>& argv, const std::string& value) {
    return std::find(argv.begin(), argv.end(), value) - argv.begin();
  };
  const auto common = index_of(*docker, "type=bind,source=" + common_ + ",target=" + common_);
  const auto hooks = index_of(
      *docker, "type=bind,source=" + common_ + "/hooks,target=" + common_ + "/hooks,readonly");
  const auto own = index_of(*docker, "type=bind,source=" + gitdir_ + ",target=" + gitdir_);
  const auto backlink = index_of(
      *docker, "type=bind,source=" + gitdir_ + "/gitdir,target=" + gitdir_ + "/gitdir,readonly");
  EXPECT_LT(common, hooks);
  EXPECT_LT(hooks, own);
  EXPECT_LT(own, backlink);
  EXPECT_LT(backlink, static_cast<long>(docker->size()));

  config.runtime = Runtime::kBwrap;
  absl::StatusOr<std::vector<std::string>> bwrap = BuildBwrapArgv(config, {}, spawn, {});
  ASSERT_TRUE(bwrap.ok()) << bwrap.status();
  const auto b_common = index_of(*bwrap, common_);
  const auto b_worktrees = index_of(*bwrap, common_ + "/worktrees");
  const auto b_own = index_of(*bwrap, gitdir_);
  ASSERT_LT(b_own, static_cast<long>(bwrap->size()));
  // Each found at its source: the flag before it, the same path after.
  EXPECT_EQ((*bwrap)[b_common - 1], "--bind");
  EXPECT_EQ((*bwrap)[b_common + 1], common_);
  EXPECT_EQ((*bwrap)[b_worktrees - 1], "--ro-bind");
  EXPECT_EQ((*bwrap)[b_own - 1], "--bind");
  EXPECT_EQ((*bwrap)[b_own + 1], gitdir_);
  EXPECT_LT(b_worktrees, b_own);
}

}  // namespace
}  // namespace np
