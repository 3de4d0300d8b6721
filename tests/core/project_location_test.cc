#include "core/project_location.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "core/errors.h"
#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"

namespace np {
namespace {

using ::np::testing::MakeProject;
using ::np::testing::TempDir;

int OpenPath(const std::string& path) { return open(path.c_str(), O_PATH | O_DIRECTORY); }

TEST(ProjectLocationTest, FindsTheNearestProjectAndTheEnclosingOnes) {
  TempDir tmp;
  MakeProject(tmp.MakeDir("outer"));
  MakeProject(tmp.MakeDir("outer/mid/inner"));
  const std::string start = tmp.MakeDir("outer/mid/inner/src/deep");
  absl::StatusOr<ProjectLocation> found = LocateProjectFrom(start);
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_TRUE(found->found());
  EXPECT_EQ(found->root, tmp.Path("outer/mid/inner"));
  ASSERT_FALSE(found->enclosing.empty());
  EXPECT_EQ(found->enclosing.front(), tmp.Path("outer"));
  struct stat st;
  ASSERT_EQ(fstat(found->fd(), &st), 0);
  EXPECT_EQ(st.st_ino, found->ino);
}

TEST(ProjectLocationTest, FromTheRootAndBelowWithAnySpelling) {
  TempDir tmp;
  const std::string root = tmp.MakeDir("proj");
  MakeProject(root);
  const std::string deep = tmp.MakeDir("proj/a/b/c");
  for (const std::string& start : {root, root + "/", deep, deep + "//", root + "/a"}) {
    absl::StatusOr<ProjectLocation> found = LocateProjectFrom(start);
    ASSERT_TRUE(found.ok()) << start << ": " << found.status();
    EXPECT_EQ(found->root, root) << start;
  }
  // Between two projects, the outer one.
  MakeProject(tmp.MakeDir("proj/a/b/inner"));
  absl::StatusOr<ProjectLocation> found = LocateProjectFrom(tmp.Path("proj/a"));
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->root, root);
}

TEST(ProjectLocationTest, OutsideAnyProjectFindsNone) {
  TempDir tmp;
  // A file named .nubos-pilot is no project marker.
  tmp.Write("plain/.nubos-pilot", "");
  absl::StatusOr<ProjectLocation> found = LocateProjectFrom(tmp.MakeDir("plain/sub"));
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_FALSE(found->found());
  EXPECT_EQ(found->root, "");
}

TEST(ProjectLocationTest, AnEnclosingLinkedStateDirIsNoProject) {
  TempDir tmp;
  const std::string elsewhere = tmp.MakeDir("elsewhere/.nubos-pilot");
  const std::string outer = tmp.MakeDir("outer");
  ASSERT_EQ(symlink(elsewhere.c_str(), (outer + "/.nubos-pilot").c_str()), 0);
  MakeProject(tmp.MakeDir("outer/inner"));
  absl::StatusOr<ProjectLocation> found = LocateProjectFrom(tmp.Path("outer/inner"));
  ASSERT_TRUE(found.ok()) << found.status();
  for (const std::string& above : found->enclosing) EXPECT_NE(above, outer);
}

// The folder is found from the descriptor: a working directory whose path was
// renamed away and replaced by a link still finds its own project, under the
// name the kernel gives it now.
TEST(ProjectLocationTest, ADescriptorFindsItsProjectAfterThePathWasSwapped) {
  TempDir tmp;
  MakeProject(tmp.MakeDir("outer/inner"), R"({"isolation":{"tier":"worktree"}})", false);
  tmp.MakeDir("outer/inner/src");
  tmp.MakeDir("decoy");
  const int start = OpenPath(tmp.Path("outer/inner/src"));
  ASSERT_GE(start, 0);
  ASSERT_EQ(rename(tmp.Path("outer/inner").c_str(), tmp.Path("outer/moved").c_str()), 0);
  ASSERT_EQ(symlink(tmp.Path("decoy").c_str(), tmp.Path("outer/inner").c_str()), 0);
  absl::StatusOr<ProjectLocation> found = LocateProject(start, tmp.Path("outer/inner/src"));
  close(start);
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_TRUE(found->found());
  EXPECT_EQ(found->root, tmp.Path("outer/moved"));
  absl::StatusOr<ProjectConfigRead> config = ReadProjectConfigAt(*found);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->exists);
  EXPECT_EQ(config->json["isolation"]["tier"], "worktree");
}

// The start's path less the levels walked names the project when it is the
// folders' own name; a path that reaches it through a link is not, and the
// kernel's name for the folder is taken instead (proved the same way).
TEST(ProjectLocationTest, APathThroughALinkGivesTheFoldersOwnName) {
  TempDir tmp;
  MakeProject(tmp.MakeDir("real"));
  MakeProject(tmp.MakeDir("real/project"));
  tmp.MakeDir("real/project/src");
  ASSERT_EQ(symlink(tmp.Path("real").c_str(), tmp.Path("via").c_str()), 0);
  absl::StatusOr<ProjectLocation> direct = LocateProjectFrom(tmp.Path("real/project/src"));
  ASSERT_TRUE(direct.ok()) << direct.status();
  EXPECT_EQ(direct->root, tmp.Path("real/project"));
  absl::StatusOr<ProjectLocation> linked = LocateProjectFrom(tmp.Path("via/project/src"));
  ASSERT_TRUE(linked.ok()) << linked.status();
  EXPECT_EQ(linked->root, tmp.Path("real/project"));
  EXPECT_EQ(linked->enclosing, std::vector<std::string>{tmp.Path("real")});
  EXPECT_TRUE(CheckProjectStillAt(*linked).ok());
  // Nor is a path spelled with ".", ".." or extra slashes.
  for (const char* spelled : {"real/project/src/", "real/./project//src", "real/project/src/.."}) {
    absl::StatusOr<ProjectLocation> found = LocateProjectFrom(tmp.Path(spelled));
    ASSERT_TRUE(found.ok()) << spelled << ": " << found.status();
    EXPECT_EQ(found->root, tmp.Path("real/project")) << spelled;
  }
}

// Once located, the path must keep naming the folder: renamed, swapped for a
// link or removed, it is `project-moved`.
TEST(ProjectLocationTest, APathThatNoLongerNamesTheFolderIsProjectMoved) {
  TempDir tmp;
  MakeProject(tmp.MakeDir("outer/inner"));
  tmp.MakeDir("decoy/.nubos-pilot");
  absl::StatusOr<ProjectLocation> found = LocateProjectFrom(tmp.Path("outer/inner"));
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_TRUE(CheckProjectStillAt(*found).ok());
  ASSERT_EQ(rename(tmp.Path("outer/inner").c_str(), tmp.Path("outer/moved").c_str()), 0);
  EXPECT_EQ(ErrorCode(CheckProjectStillAt(*found)), "project-moved");
  ASSERT_EQ(symlink(tmp.Path("decoy").c_str(), tmp.Path("outer/inner").c_str()), 0);
  EXPECT_EQ(ErrorCode(CheckProjectStillAt(*found)), "project-moved");
  ASSERT_EQ(unlink(tmp.Path("outer/inner").c_str()), 0);
  // A link at the path, even to the very folder: the path is no longer the
  // folder's own name.
  ASSERT_EQ(symlink("moved", tmp.Path("outer/inner").c_str()), 0);
  EXPECT_EQ(ErrorCode(CheckProjectStillAt(*found)), "project-moved");
  ASSERT_EQ(unlink(tmp.Path("outer/inner").c_str()), 0);
  ASSERT_EQ(rename(tmp.Path("outer/moved").c_str(), tmp.Path("outer/inner").c_str()), 0);
  EXPECT_TRUE(CheckProjectStillAt(*found).ok());
}

// The config is read through the descriptor: exchanged for another file
// after the read, what was read stays what was read (one set of bytes).
TEST(ProjectLocationTest, TheConfigIsReadOnceThroughTheDescriptor) {
  TempDir tmp;
  const std::string project = tmp.MakeDir("p");
  MakeProject(project, R"({"isolation":{"tier":"container"}})", false);
  tmp.Write("p/.nubos-pilot/evil.json", R"({"isolation":{"tier":"direct"}})");
  absl::StatusOr<ProjectLocation> found = LocateProjectFrom(project);
  ASSERT_TRUE(found.ok()) << found.status();
  absl::StatusOr<ProjectConfigRead> config = ReadProjectConfigAt(*found);
  ASSERT_TRUE(config.ok()) << config.status();
  const int state = open(tmp.Path("p/.nubos-pilot").c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_EQ(renameat2(state, "config.json", state, "evil.json", RENAME_EXCHANGE), 0);
  close(state);
  EXPECT_EQ(config->json["isolation"]["tier"], "container");
}

TEST(ProjectLocationTest, LinksAndOddFilesAreNeverRead) {
  TempDir tmp;
  // A `.nubos-pilot` that is a link to a directory: found, never read.
  const std::string linked = tmp.MakeDir("linked");
  const std::string target = tmp.MakeDir("target/.nubos-pilot");
  ASSERT_EQ(symlink(target.c_str(), (linked + "/.nubos-pilot").c_str()), 0);
  absl::StatusOr<ProjectLocation> found = LocateProjectFrom(linked);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(ErrorCode(ReadProjectConfigAt(*found).status()), "config-not-a-file");
  // config.json a link, a directory, a FIFO.
  const std::string p = tmp.MakeDir("p");
  MakeProject(p);
  const std::string config = p + "/.nubos-pilot/config.json";
  const std::string outside = tmp.Write("outside.json", "{}");
  found = LocateProjectFrom(p);
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_EQ(symlink(outside.c_str(), config.c_str()), 0);
  EXPECT_EQ(ErrorCode(ReadProjectConfigAt(*found).status()), "config-not-a-file");
  ASSERT_EQ(unlink(config.c_str()), 0);
  ASSERT_EQ(mkdir(config.c_str(), 0755), 0);
  EXPECT_EQ(ErrorCode(ReadProjectConfigAt(*found).status()), "config-not-a-file");
  ASSERT_EQ(rmdir(config.c_str()), 0);
  ASSERT_EQ(mkfifo(config.c_str(), 0600), 0);
  EXPECT_EQ(ErrorCode(ReadProjectConfigAt(*found).status()), "config-not-a-file");
  ASSERT_EQ(unlink(config.c_str()), 0);
  absl::StatusOr<ProjectConfigRead> none = ReadProjectConfigAt(*found);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->exists);
}

TEST(ProjectLocationTest, ARelativeOrMissingStartIsInvalidPath) {
  for (const char* start : {"", "relative/dir", "."}) {
    EXPECT_EQ(ErrorCode(LocateProjectFrom(start).status()), "invalid-path") << start;
  }
  EXPECT_EQ(ErrorCode(LocateProjectFrom("/no/such/dir/anywhere").status()), "invalid-path");
}

// The walk that finds the project also finds the repository git would (the
// nearest `.git` file, or `.git` directory holding HEAD, at or above the
// project): the same answer as git_layout's own walk, for every layout.
TEST(ProjectLocationTest, TheWalkFindsTheRepositoryGitsOwnWalkFinds) {
  TempDir tmp;
  tmp.Write("outer/.git/HEAD", "ref: refs/heads/main\n");
  MakeProject(tmp.MakeDir("outer/own"));
  tmp.Write("outer/own/.git/HEAD", "ref: refs/heads/main\n");
  MakeProject(tmp.MakeDir("outer/headless"));
  tmp.MakeDir("outer/headless/.git");  // No HEAD: not a repository, git goes on up.
  MakeProject(tmp.MakeDir("outer/below/plain"));
  tmp.MakeDir("elsewhere/gitdir");
  MakeProject(tmp.MakeDir("outer/worktree"));
  tmp.Write("outer/worktree/.git", "gitdir: " + tmp.Path("elsewhere/gitdir") + "\n");
  MakeProject(tmp.MakeDir("outer/broken"));
  tmp.Write("outer/broken/.git", "not a gitdir line\n");
  for (const std::string project :
       {"outer/own", "outer/headless", "outer/below/plain", "outer/worktree", "outer/broken"}) {
    const std::string start = tmp.MakeDir(project + "/src");
    absl::StatusOr<ProjectLocation> found = LocateProjectFrom(start);
    ASSERT_TRUE(found.ok()) << project << ": " << found.status();
    ASSERT_TRUE(found->git.done) << project;
    const ProjectGit walked = ReadProjectGitFrom(found->root, found->git);
    const ProjectGit again = ReadProjectGit(found->root, found->fd());
    for (const auto& [got, want] :
         {std::pair{&walked.own, &again.own}, std::pair{&walked.repository, &again.repository}}) {
      ASSERT_EQ(got->ok(), want->ok()) << project << ": " << got->status() << want->status();
      if (!got->ok()) {
        EXPECT_EQ(ErrorCode(got->status()), ErrorCode(want->status())) << project;
        continue;
      }
      EXPECT_EQ((*got)->kind, (*want)->kind) << project;
      EXPECT_EQ((*got)->top, (*want)->top) << project;
      EXPECT_EQ((*got)->git_dir, (*want)->git_dir) << project;
      EXPECT_EQ((*got)->common_dir, (*want)->common_dir) << project;
    }
  }
  // What each one found.
  absl::StatusOr<ProjectLocation> own = LocateProjectFrom(tmp.Path("outer/own"));
  ASSERT_TRUE(own.ok());
  EXPECT_EQ(own->git.level, 0);
  EXPECT_EQ(ReadProjectGitFrom(own->root, own->git).own->top, tmp.Path("outer/own"));
  for (const std::string project : {"outer/headless", "outer/below/plain"}) {
    absl::StatusOr<ProjectLocation> up = LocateProjectFrom(tmp.Path(project));
    ASSERT_TRUE(up.ok());
    const ProjectGit git = ReadProjectGitFrom(up->root, up->git);
    EXPECT_EQ(git.own->kind, GitLayout::Kind::kNone) << project;
    EXPECT_EQ(git.repository->top, tmp.Path("outer")) << project;
  }
  absl::StatusOr<ProjectLocation> worktree = LocateProjectFrom(tmp.Path("outer/worktree"));
  ASSERT_TRUE(worktree.ok());
  EXPECT_EQ(ReadProjectGitFrom(worktree->root, worktree->git).own->git_dir,
            tmp.Path("elsewhere/gitdir"));
  absl::StatusOr<ProjectLocation> broken = LocateProjectFrom(tmp.Path("outer/broken"));
  ASSERT_TRUE(broken.ok());
  EXPECT_EQ(ErrorCode(ReadProjectGitFrom(broken->root, broken->git).own.status()),
            "project-git-invalid");
}
}  // namespace
}  // namespace np
