#include "core/protected_paths.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/bwrap_argv.h"
#include "core/container_argv.h"
#include "core/errors.h"
#include "core/git_layout.h"
#include "gtest/gtest.h"
#include "tests/core/argv_util.h"
#include "tests/support/temp_dir.h"

namespace np {
namespace {

using ::np::testing::HasSequence;
using ::np::testing::IndexOf;
using ::np::testing::IndexOfSequence;
using ::np::testing::TempDir;

// A bind as "rw:path", "ro:path" or "new-dir:path"/"new-file:path" for a
// placeholder, so a whole plan compares as one list.
std::string Describe(const ProtectedBind& bind) {
  if (bind.placeholder) return (bind.directory ? "new-dir:" : "new-file:") + bind.relative;
  return (bind.writable ? "rw:" : "ro:") + bind.relative;
}

std::vector<std::string> Plan(const std::string& project,
                              const std::vector<std::string>& extra = {}) {
  absl::StatusOr<std::vector<ProtectedBind>> binds = ProtectedBindsForSpawn(project, extra, {});
  EXPECT_TRUE(binds.ok()) << binds.status();
  std::vector<std::string> out;
  if (binds.ok()) {
    for (const ProtectedBind& bind : *binds) out.push_back(Describe(bind));
  }
  return out;
}

std::string PlanError(const std::string& project, const std::vector<std::string>& extra = {}) {
  absl::StatusOr<std::vector<ProtectedBind>> binds = ProtectedBindsForSpawn(project, extra, {});
  EXPECT_FALSE(binds.ok());
  return ErrorCode(binds.status());
}

TEST(ProtectedPathsTest, DefaultListHasEveryPathOfTheDesign) {
  const std::vector<std::string>& list = DefaultProtectedPaths();
  for (const char* path :
       {".nubos-pilot/config.json", ".nubos-pilot/audit/", ".nubos-pilot/bin/", ".git/hooks/",
        ".git/config", ".git/commondir", ".git/modules/", ".git/worktrees/", ".gitmodules",
        ".claude/", ".mcp.json", ".vscode/", ".idea/", ".envrc",
        // Issue 26, item 2: the other agent CLIs' project settings, editors'
        // and dev containers' settings that run commands on open.
        ".gemini/", ".codex/", ".cursor/", ".zed/", ".devcontainer/", ".devcontainer.json"}) {
    EXPECT_NE(std::find(list.begin(), list.end(), path), list.end()) << path;
  }
}

TEST(ProtectedPathsTest, FreshProjectGetsPlaceholdersForEverythingMissing) {
  TempDir dir;
  ::np::testing::MakeProject(dir.path());
  EXPECT_EQ(Plan(dir.path()),
            (std::vector<std::string>{
                "rw:.nubos-pilot", "new-dir:.claude", "new-dir:.codex", "new-dir:.cursor",
                "new-dir:.devcontainer", "new-file:.devcontainer.json", "new-file:.envrc",
                "new-dir:.gemini", "new-dir:.git", "new-file:.gitmodules", "new-dir:.idea",
                "new-file:.mcp.json", "new-dir:.nubos-pilot/audit", "new-dir:.nubos-pilot/bin",
                "new-file:.nubos-pilot/config.json", "new-dir:.vscode", "new-dir:.zed"}));
}

TEST(ProtectedPathsTest, GitDirectoryIsPinnedAndItsExecSurfaceReadOnly) {
  TempDir dir;
  ::np::testing::MakeProject(dir.path(), "{}");
  dir.Write(".git/config", "[core]\n");
  dir.Write(".git/hooks/pre-commit.sample", "#!/bin/sh\n");
  dir.Write(".git/HEAD", "ref: refs/heads/main\n");
  dir.Write(".envrc", "export A=1\n");
  dir.Write(".claude/settings.json", "{}");
  std::vector<std::string> plan = Plan(dir.path());
  EXPECT_EQ(plan, (std::vector<std::string>{"rw:.git",
                                            "rw:.nubos-pilot",
                                            "ro:.claude",
                                            "new-dir:.codex",
                                            "new-dir:.cursor",
                                            "new-dir:.devcontainer",
                                            "new-file:.devcontainer.json",
                                            "ro:.envrc",
                                            "new-dir:.gemini",
                                            "new-file:.git/commondir",
                                            "ro:.git/config",
                                            "new-file:.git/config.worktree",
                                            "ro:.git/hooks",
                                            "new-dir:.git/info",
                                            "new-dir:.git/modules",
                                            "new-dir:.git/worktrees",
                                            "new-file:.gitmodules",
                                            "new-dir:.idea",
                                            "new-file:.mcp.json",
                                            "new-dir:.nubos-pilot/audit",
                                            "new-dir:.nubos-pilot/bin",
                                            "ro:.nubos-pilot/config.json",
                                            "new-dir:.vscode",
                                            "new-dir:.zed"}));
}

TEST(ProtectedPathsTest, WorktreeGitFileIsProtectedWholeAndItsGitDirWhenInside) {
  TempDir outside;
  outside.Write("main/.git/worktrees/wt/HEAD", "x\n");
  outside.Write("main/.git/worktrees/wt/commondir", "../..\n");
  TempDir dir;
  ::np::testing::MakeProject(dir.path());
  dir.Write(".git", "gitdir: " + outside.Path("main/.git/worktrees/wt") + "\n");
  std::vector<std::string> plan = Plan(dir.path());
  EXPECT_NE(std::find(plan.begin(), plan.end(), "ro:.git"), plan.end());
  for (const std::string& bind : plan) EXPECT_EQ(bind.find(".git/"), std::string::npos) << bind;

  // A git directory inside the project is as exposed as .git/ itself.
  TempDir inner;
  ::np::testing::MakeProject(inner.path());
  inner.Write("repo.git/config", "[core]\n");
  inner.Write(".git", "gitdir: repo.git\n");
  plan = Plan(inner.path());
  for (const char* want : {"ro:.git", "rw:repo.git", "ro:repo.git/config", "new-dir:repo.git/hooks",
                           "new-file:repo.git/commondir"}) {
    EXPECT_NE(std::find(plan.begin(), plan.end(), want), plan.end()) << want;
  }
}

TEST(GitLayoutTest, ReadsDirectoriesFilesAndCommonDirs) {
  TempDir dir;
  dir.Write("main/.git/HEAD", "x\n");
  dir.Write("main/.git/worktrees/wt/commondir", "../..\n");
  dir.Write("wt/.git", "gitdir: ../main/.git/worktrees/wt\n");
  dir.MakeDir("main/sub/deeper");
  absl::StatusOr<GitLayout> main = ReadGitLayout(dir.Path("main/sub/deeper"), true);
  ASSERT_TRUE(main.ok()) << main.status();
  EXPECT_EQ(main->kind, GitLayout::Kind::kDirectory);
  EXPECT_EQ(main->top, dir.Path("main"));
  EXPECT_EQ(main->common_dir, dir.Path("main/.git"));
  absl::StatusOr<GitLayout> none = ReadGitLayout(dir.Path("main/sub"), false);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->kind, GitLayout::Kind::kNone);
  absl::StatusOr<GitLayout> wt = ReadGitLayout(dir.Path("wt"), false);
  ASSERT_TRUE(wt.ok()) << wt.status();
  EXPECT_EQ(wt->kind, GitLayout::Kind::kFile);
  EXPECT_EQ(wt->git_dir, dir.Path("main/.git/worktrees/wt"));
  EXPECT_EQ(wt->common_dir, dir.Path("main/.git"));
}

// One read of a project's git answers both questions as the two reads did:
// the project alone, and walking up to its repository.
TEST(GitLayoutTest, ProjectGitAnswersAsBothReads) {
  TempDir dir;
  dir.Write("main/.git/HEAD", "ref: refs/heads/main\n");
  dir.Write("main/.git/worktrees/wt/commondir", "../..\n");
  dir.Write("wt/.git", "gitdir: ../main/.git/worktrees/wt\n");
  dir.MakeDir("main/sub");
  dir.MakeDir("alone");
  dir.Write("broken/.git", "nonsense\n");
  dir.MakeDir("broken/below");
  for (const char* project : {"main", "main/sub", "wt", "alone", "broken", "broken/below"}) {
    const std::string real = dir.Path(project);
    const ProjectGit git = ReadProjectGit(real);
    for (const bool walk_up : {false, true}) {
      absl::StatusOr<GitLayout> want = ReadGitLayout(real, walk_up);
      absl::StatusOr<GitLayout> got =
          walk_up ? RepositoryGitLayout(real, &git) : OwnGitLayout(real, &git);
      ASSERT_EQ(got.ok(), want.ok()) << project << " " << walk_up;
      if (!want.ok()) {
        EXPECT_EQ(ErrorCode(got.status()), ErrorCode(want.status())) << project;
        continue;
      }
      EXPECT_EQ(got->kind, want->kind) << project << " " << walk_up;
      EXPECT_EQ(got->top, want->top) << project << " " << walk_up;
      EXPECT_EQ(got->git_dir, want->git_dir) << project << " " << walk_up;
      EXPECT_EQ(got->common_dir, want->common_dir) << project << " " << walk_up;
    }
  }
  // Another project's read is never used for this one.
  const ProjectGit main = ReadProjectGit(dir.Path("main"));
  EXPECT_EQ(OwnGitLayout(dir.Path("alone"), &main)->kind, GitLayout::Kind::kNone);
}

// The project's git is read through the opened project folder: a folder
// swapped in at its path afterwards (with another `.git`, or none) is never
// what decides the protected git folders, the git mounts or the store's key;
// the folders above are reached through "..", and one whose path no longer
// names it is a coded error, not another repository.
TEST(GitLayoutTest, AFolderSwappedInAtThePathIsNeverWhatIsRead) {
  TempDir dir;
  const std::string project = dir.MakeDir("p");
  dir.Write("p/.git/HEAD", "ref: refs/heads/main\n");
  const int opened = open(project.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(opened, 0);
  ASSERT_EQ(rename(project.c_str(), dir.Path("p-away").c_str()), 0);
  dir.MakeDir("elsewhere/.git");
  dir.Write("elsewhere/.git/HEAD", "ref: refs/heads/main\n");
  dir.Write("p/.git", "gitdir: " + dir.Path("elsewhere/.git") + "\n");

  EXPECT_EQ(ReadProjectGit(project).own->kind, GitLayout::Kind::kFile);
  const ProjectGit git = ReadProjectGit(project, opened);
  ASSERT_TRUE(git.own.ok()) << git.own.status();
  EXPECT_EQ(git.own->kind, GitLayout::Kind::kDirectory);
  EXPECT_EQ(git.own->git_dir, project + "/.git");
  EXPECT_EQ(git.own->common_dir, project + "/.git");
  ASSERT_TRUE(git.repository.ok());
  EXPECT_EQ(git.repository->git_dir, project + "/.git");
  close(opened);

  // A project without a `.git`, in a repository: the walk up goes through
  // the opened folder's parent, which must still be at its path.
  dir.Write("main/.git/HEAD", "ref: refs/heads/main\n");
  const std::string sub = dir.MakeDir("main/sub");
  const int sub_fd = open(sub.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(sub_fd, 0);
  const ProjectGit in_main = ReadProjectGit(sub, sub_fd);
  ASSERT_TRUE(in_main.repository.ok()) << in_main.repository.status();
  EXPECT_EQ(in_main.own->kind, GitLayout::Kind::kNone);
  EXPECT_EQ(in_main.repository->git_dir, dir.Path("main/.git"));
  ASSERT_EQ(rename(dir.Path("main").c_str(), dir.Path("main-away").c_str()), 0);
  dir.MakeDir("main/sub");
  dir.Write("main/.git", "gitdir: " + dir.Path("elsewhere/.git") + "\n");
  const ProjectGit moved = ReadProjectGit(sub, sub_fd);
  ASSERT_FALSE(moved.repository.ok());
  EXPECT_EQ(ErrorCode(moved.repository.status()), "project-git-invalid");
  close(sub_fd);
}

TEST(GitLayoutTest, BrokenPointersAreCodedErrors) {
  for (const char* content : {"nonsense\n", "gitdir: /nonexistent/np-exec\n", "gitdir:\n", ""}) {
    TempDir dir;
    dir.Write(".git", content);
    absl::StatusOr<GitLayout> layout = ReadGitLayout(dir.path(), false);
    ASSERT_FALSE(layout.ok()) << content;
    EXPECT_EQ(ErrorCode(layout.status()), "project-git-invalid") << content;
  }
  TempDir fifo;
  ASSERT_EQ(mkfifo(fifo.Path(".git").c_str(), 0600), 0);
  EXPECT_EQ(ErrorCode(ReadGitLayout(fifo.path(), false).status()), "project-git-invalid");
}

TEST(ProtectedPathsTest, LinksAndSpecialFilesAreRefused) {
  for (const char* name : {".envrc", ".git", ".claude", ".nubos-pilot/config.json", ".mcp.json"}) {
    TempDir dir;
    ::np::testing::MakeProject(dir.path());
    ASSERT_EQ(symlink("/etc/passwd", dir.Path(name).c_str()), 0) << name;
    EXPECT_EQ(PlanError(dir.path()), "isolation-protected-path-unsafe") << name;
  }
  TempDir linked_parent;
  ::np::testing::MakeProject(linked_parent.path());
  linked_parent.MakeDir("real");
  ASSERT_EQ(symlink("real", linked_parent.Path("scripts").c_str()), 0);
  EXPECT_EQ(PlanError(linked_parent.path(), {"scripts/deploy.sh"}),
            "isolation-protected-path-unsafe");
  TempDir fifo;
  ::np::testing::MakeProject(fifo.path());
  ASSERT_EQ(mkfifo(fifo.Path(".envrc").c_str(), 0600), 0);
  EXPECT_EQ(PlanError(fifo.path()), "isolation-protected-path-unsafe");
}

// Issue 26, item 7: a read-only bind keeps a name read-only, not the inode.
// A program that made a second name of a file in the writable project (a hard
// link, in an earlier spawn before the file was protected) would write the
// protected file through it, so such a file is refused until replaced.
TEST(ProtectedPathsTest, AProtectedFileWithAnotherHardLinkIsRefused) {
  TempDir dir;
  ::np::testing::MakeProject(dir.path());
  dir.Write("src/payload", "#!/bin/sh\necho deploy\n");
  dir.MakeDir("scripts");
  ASSERT_EQ(link(dir.Path("src/payload").c_str(), dir.Path("scripts/deploy.sh").c_str()), 0);
  EXPECT_EQ(PlanError(dir.path(), {"scripts/deploy.sh"}), "isolation-protected-path-unsafe");
  for (const char* name : {".envrc", ".mcp.json", ".nubos-pilot/config.json"}) {
    TempDir other;
    ::np::testing::MakeProject(other.path());
    other.Write("src/x", "{}");
    unlink(other.Path(name).c_str());
    ASSERT_EQ(link(other.Path("src/x").c_str(), other.Path(name).c_str()), 0) << name;
    EXPECT_EQ(PlanError(other.path()), "isolation-protected-path-unsafe") << name;
  }
  // The other name gone, the file is protected as any.
  ASSERT_EQ(unlink(dir.Path("src/payload").c_str()), 0);
  EXPECT_TRUE(ProtectedBindsForSpawn(dir.path(), {"scripts/deploy.sh"}, {}).ok());
}

TEST(ProtectedPathsTest, ExtraPathsPinTheirParentsAndCoverWhatIsMissing) {
  TempDir dir;
  ::np::testing::MakeProject(dir.path());
  dir.Write("scripts/ci/deploy.sh", "#!/bin/sh\n");
  dir.Write("Makefile", "all:\n");
  std::vector<std::string> plan =
      Plan(dir.path(), {"scripts/ci/deploy.sh", "a/b/c", "Makefile/x", ".claude/settings.json"});
  for (const char* want : {"rw:scripts", "rw:scripts/ci", "ro:scripts/ci/deploy.sh", "new-dir:a",
                           "ro:Makefile", "new-dir:.claude"}) {
    EXPECT_NE(std::find(plan.begin(), plan.end(), want), plan.end()) << want;
  }
  // Covered by .claude/ already: never a second, inner placeholder.
  EXPECT_EQ(std::find(plan.begin(), plan.end(), "new-file:.claude/settings.json"), plan.end());
  // Writable parents come before every read-only node.
  size_t last_rw = 0;
  size_t first_ro = plan.size();
  for (size_t i = 0; i < plan.size(); ++i) {
    if (plan[i].rfind("rw:", 0) == 0) last_rw = i;
    if (plan[i].rfind("rw:", 0) != 0 && first_ro == plan.size()) first_ro = i;
  }
  EXPECT_LT(last_rw, first_ro);
}

TEST(ProtectedPathsTest, LeftoverPlaceholdersAreKeptAsTheyAre) {
  TempDir dir;
  ::np::testing::MakeProject(dir.path());
  ASSERT_EQ(mkdir(dir.Path(".git").c_str(), 0700), 0);
  ASSERT_EQ(chmod(dir.Path(".git").c_str(), kPlaceholderDirMode), 0);
  dir.Write(".envrc", "", kPlaceholderFileMode);
  ASSERT_EQ(chmod(dir.Path(".envrc").c_str(), kPlaceholderFileMode), 0);
  // Kept as they are, read-only, nothing planned inside; still placeholders
  // (their spawn may remove them and this one re-creates them), so bound by
  // path and pinned only once this spawn holds them (core/mount_pins.h).
  std::vector<std::string> plan = Plan(dir.path());
  EXPECT_NE(std::find(plan.begin(), plan.end(), "new-dir:.git"), plan.end());
  EXPECT_NE(std::find(plan.begin(), plan.end(), "new-file:.envrc"), plan.end());
  for (const std::string& bind : plan) EXPECT_EQ(bind.find(".git/"), std::string::npos) << bind;
  struct stat st;
  ASSERT_EQ(lstat(dir.Path(".envrc").c_str(), &st), 0);
  EXPECT_TRUE(IsPlaceholder(st, ".envrc"));
  EXPECT_FALSE(IsPlaceholder(st, ".git/commondir")) << "a commondir placeholder reads \".\"";
  dir.Write("full", "x", kPlaceholderFileMode);
  ASSERT_EQ(chmod(dir.Path("full").c_str(), kPlaceholderFileMode), 0);
  ASSERT_EQ(lstat(dir.Path("full").c_str(), &st), 0);
  EXPECT_FALSE(IsPlaceholder(st, "full"));
  dir.Write("sub/inner/x", "");
  ASSERT_EQ(chmod(dir.Path("sub").c_str(), kPlaceholderDirMode), 0);
  ASSERT_EQ(lstat(dir.Path("sub").c_str(), &st), 0);
  EXPECT_FALSE(IsPlaceholder(st, "sub")) << "it has a subdirectory";
  EXPECT_EQ(PlaceholderContent(".git/commondir"), ".\n");
  EXPECT_EQ(PlaceholderContent(".envrc"), "");
}

// Missing files outside git directories are held by sockets of mode 0, which
// git never lists; git's own files and np-exec's config stay regular files.
TEST(ProtectedPathsTest, PlaceholderKindsAndSocketPlaceholders) {
  auto kind = [](const std::string& relative, bool directory, const std::string& root = "") {
    return PlaceholderKindOf({relative, false, true, directory, root});
  };
  EXPECT_EQ(kind(".envrc", false), PlaceholderKind::kSocket);
  EXPECT_EQ(kind(".mcp.json", false), PlaceholderKind::kSocket);
  EXPECT_EQ(kind("scripts/deploy.sh", false), PlaceholderKind::kSocket);
  EXPECT_EQ(kind(".claude", true), PlaceholderKind::kDirectory);
  EXPECT_EQ(kind(".git/config", false), PlaceholderKind::kFile);
  EXPECT_EQ(kind(".git/commondir", false), PlaceholderKind::kFile);
  EXPECT_EQ(kind("sub/.git/config", false), PlaceholderKind::kFile);
  EXPECT_EQ(kind("config", false, "/repo/.git/worktrees/w"), PlaceholderKind::kFile);
  EXPECT_EQ(kind(".nubos-pilot/config.json", false), PlaceholderKind::kFile);

  TempDir dir;
  ::np::testing::MakeProject(dir.path());
  ASSERT_EQ(mknod(dir.Path(".envrc").c_str(), S_IFSOCK | kPlaceholderSocketMode, 0), 0);
  ASSERT_EQ(mknod(dir.Path("listening").c_str(), S_IFSOCK | 0600, 0), 0);
  struct stat st;
  ASSERT_EQ(lstat(dir.Path(".envrc").c_str(), &st), 0);
  EXPECT_TRUE(IsPlaceholder(st, ".envrc"));
  ASSERT_EQ(lstat(dir.Path("listening").c_str(), &st), 0);
  EXPECT_FALSE(IsPlaceholder(st, "listening")) << "a socket someone can connect to";
  // A leftover socket placeholder is kept as it is, still a placeholder; a
  // socket that is none is refused like any node that is no file or folder.
  std::vector<std::string> plan = Plan(dir.path());
  EXPECT_NE(std::find(plan.begin(), plan.end(), "new-file:.envrc"), plan.end());
  absl::StatusOr<std::vector<ProtectedBind>> refused =
      PlanProtectedBinds(dir.path(), {"listening"});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(ErrorCode(refused.status()), "isolation-protected-path-unsafe");
}

// The walk judges the folder the spawn opened, not whatever its path names
// by then: another project's sandbox renames the project away and puts a
// folder of its own at the path (here with `.mcp.json` a link to a host
// file). Read by path, the swapped-in folder is what is judged; through the
// descriptor, the opened one is, and its missing `.mcp.json` gets a
// placeholder of its own.
TEST(ProtectedPathsTest, AFolderSwappedInAtThePathIsNeverWhatIsJudged) {
  TempDir dir;
  const std::string project = dir.MakeDir("p");
  dir.Write("p/.nubos-pilot/config.json", "{}");
  const int opened = open(project.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(opened, 0);
  ASSERT_EQ(rename(project.c_str(), dir.Path("p-away").c_str()), 0);
  dir.MakeDir("p");
  dir.Write("p/.nubos-pilot/config.json", "{}");
  ASSERT_EQ(symlink("/etc/passwd", dir.Path("p/.mcp.json").c_str()), 0);

  EXPECT_EQ(PlanError(project), "isolation-protected-path-unsafe");
  absl::StatusOr<std::vector<ProtectedBind>> binds =
      ProtectedBindsForSpawn(project, {}, {}, nullptr, opened);
  ASSERT_TRUE(binds.ok()) << binds.status();
  std::vector<std::string> plan;
  for (const ProtectedBind& bind : *binds) plan.push_back(Describe(bind));
  EXPECT_NE(std::find(plan.begin(), plan.end(), "new-file:.mcp.json"), plan.end());
  EXPECT_NE(std::find(plan.begin(), plan.end(), "ro:.nubos-pilot/config.json"), plan.end());
  close(opened);
}

TEST(ProtectedPathsTest, ParseProtectNormalisesAndRefusesHostileEntries) {
  absl::StatusOr<std::vector<std::string>> ok =
      ParseProtect(nlohmann::json::array({"./scripts//deploy.sh", ".husky/", "a/./b/"}));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(*ok, (std::vector<std::string>{"scripts/deploy.sh", ".husky/", "a/b/"}));
  struct Case {
    nlohmann::json value;
    const char* code;
  };
  const std::vector<Case> cases = {
      {"scripts", "isolation-invalid-value"},
      {nlohmann::json::array({1}), "isolation-invalid-value"},
      {nlohmann::json::array({nullptr}), "isolation-invalid-value"},
      {nlohmann::json::array({""}), "isolation-protect-bad-path"},
      {nlohmann::json::array({"/etc/passwd"}), "isolation-protect-bad-path"},
      {nlohmann::json::array({"../outside"}), "isolation-protect-bad-path"},
      {nlohmann::json::array({"a/../../b"}), "isolation-protect-bad-path"},
      {nlohmann::json::array({std::string("a\0b", 3)}), "isolation-protect-bad-path"},
      {nlohmann::json::array({"a\nb"}), "isolation-protect-bad-path"},
      {nlohmann::json::array({"."}), "isolation-protect-bad-path"},
      {nlohmann::json::array({"./"}), "isolation-protect-bad-path"},
      {nlohmann::json::array({std::string(1025, 'a')}), "isolation-protect-bad-path"},
      {nlohmann::json(std::vector<std::string>(kMaxProtectEntries + 1, "a")),
       "isolation-invalid-value"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::vector<std::string>> parsed = ParseProtect(c.value);
    ASSERT_FALSE(parsed.ok()) << c.value.dump();
    EXPECT_EQ(ErrorCode(parsed.status()), c.code) << c.value.dump();
  }
}

TEST(ProtectedPathsTest, WritableMountsMayNotReachProtectedNodes) {
  TempDir dir;
  ::np::testing::MakeProject(dir.path());
  dir.Write(".git/config", "[core]\n");
  dir.MakeDir("src");
  absl::StatusOr<std::vector<ProtectedBind>> binds =
      PlanProtectedBinds(dir.path(), DefaultProtectedPaths());
  ASSERT_TRUE(binds.ok());
  for (const std::string& source : {dir.Path(".git"), dir.Path(".git/hooks"), dir.path(),
                                    dir.Path(".nubos-pilot/config.json")}) {
    absl::Status rw = CheckMountsAvoidProtected({{source, "/x", true}}, dir.path(), *binds);
    EXPECT_EQ(ErrorCode(rw), "isolation-mount-protected-source") << source;
    EXPECT_TRUE(CheckMountsAvoidProtected({{source, "/x", false}}, dir.path(), *binds).ok());
  }
  EXPECT_TRUE(CheckMountsAvoidProtected({{dir.Path("src"), "/x", true}}, dir.path(), *binds).ok());
}

TEST(ProtectedPathsTest, HostileBindsNeverReachAnArgv) {
  ContainerConfig config;
  ContainerSpawn spawn;
  spawn.project_root = "/p";
  spawn.cwd = "/p";
  spawn.program = {"true"};
  for (const std::string& bad :
       {std::string(""), std::string("/etc"), std::string("a/../.."), std::string("a\0b", 3),
        std::string("a//b"), std::string("."), std::string("a\nb")}) {
    spawn.protected_binds = {{bad, false, false, false, ""}};
    for (Runtime runtime : {Runtime::kDocker, Runtime::kPodman}) {
      config.runtime = runtime;
      EXPECT_EQ(ErrorCode(BuildContainerArgv(config, {}, spawn).status()),
                "isolation-protected-path-unsafe");
    }
    config.runtime = Runtime::kBwrap;
    EXPECT_EQ(ErrorCode(BuildBwrapArgv(config, {}, spawn, {}).status()),
              "isolation-protected-path-unsafe");
  }
}

TEST(ProtectedPathsTest, ArgvBuildersBindEachNodeOntoItselfAfterTheProject) {
  ContainerSpawn spawn;
  spawn.project_root = "/home/u/proj";
  spawn.cwd = "/home/u/proj";
  spawn.program = {"true"};
  spawn.protected_binds = {{".git", true, false, true, ""},
                           {".git/hooks", false, false, true, ""},
                           {".envrc", false, true, false, ""}};
  for (Runtime runtime : {Runtime::kDocker, Runtime::kPodman}) {
    ContainerConfig config;
    config.runtime = runtime;
    config.workdir = "/work";
    absl::StatusOr<std::vector<std::string>> argv = BuildContainerArgv(config, {}, spawn);
    ASSERT_TRUE(argv.ok()) << argv.status();
    const long project = IndexOf(*argv, "type=bind,source=/home/u/proj,target=/work");
    ASSERT_GE(project, 0);
    EXPECT_GT(IndexOf(*argv, "type=bind,source=/home/u/proj/.git,target=/work/.git"), project);
    EXPECT_GT(IndexOf(*argv,
                      "type=bind,source=/home/u/proj/.git/hooks,target=/work/.git/hooks,"
                      "readonly"),
              project);
    EXPECT_GT(IndexOf(*argv, "type=bind,source=/home/u/proj/.envrc,target=/work/.envrc,readonly"),
              project);
  }
  ContainerConfig bwrap;
  bwrap.runtime = Runtime::kBwrap;
  absl::StatusOr<std::vector<std::string>> argv = BuildBwrapArgv(bwrap, {}, spawn, {});
  ASSERT_TRUE(argv.ok()) << argv.status();
  const long project = IndexOfSequence(*argv, {"--bind", "/home/u/proj", "/home/u/proj"});
  const long git = IndexOfSequence(*argv, {"--bind", "/home/u/proj/.git", "/home/u/proj/.git"});
  const long hooks =
      IndexOfSequence(*argv, {"--ro-bind", "/home/u/proj/.git/hooks", "/home/u/proj/.git/hooks"});
  const long envrc =
      IndexOfSequence(*argv, {"--ro-bind", "/home/u/proj/.envrc", "/home/u/proj/.envrc"});
  ASSERT_GE(project, 0);
  EXPECT_GT(git, project);
  EXPECT_GT(hooks, git);
  EXPECT_GT(envrc, project);
  EXPECT_LT(envrc, IndexOf(*argv, "--remount-ro"));
}

}  // namespace
}  // namespace np

namespace np {
namespace {

// One hostile project path through every entry point that takes one.
TEST(ProtectedPathsTest, HostileProjectPathsAreCoded) {
  for (const std::string& bad : {std::string("/tmp/a\0b", 8), std::string("relative"),
                                 std::string(""), std::string(5000, '/')}) {
    EXPECT_EQ(ErrorCode(ReadGitLayout(bad, true).status()), "invalid-path") << bad.size();
    EXPECT_EQ(ErrorCode(ProtectedList(bad, {}).status()), "invalid-path") << bad.size();
    EXPECT_EQ(ErrorCode(PlanProtectedBinds(bad, DefaultProtectedPaths()).status()), "invalid-path")
        << bad.size();
    EXPECT_EQ(ErrorCode(ProtectedBindsForSpawn(bad, {}, {}).status()), "invalid-path")
        << bad.size();
  }
  TempDir dir;
  for (const std::string& bad_entry :
       {std::string("/etc"), std::string("../x"), std::string(".")}) {
    EXPECT_EQ(ErrorCode(PlanProtectedBinds(dir.path(), {bad_entry}).status()),
              "isolation-protect-bad-path")
        << bad_entry;
  }
}

}  // namespace
}  // namespace np
