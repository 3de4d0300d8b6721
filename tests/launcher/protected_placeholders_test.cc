// Placeholders for missing protected paths: created before a spawn, removed
// after the project's last concurrent spawn, never removed under a running
// one, and never taking what a host tool wrote.
#include "launcher/protected_placeholders.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/errors.h"
#include "gtest/gtest.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace np {
namespace {

using ::np::testing::RunProcess;
using ::np::testing::TempDir;

class PlaceholdersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::np::testing::MakeProject(project_.path(), "{}");
    absl::StatusOr<StateStore> store = StateStore::Open(state_.Path("np-exec"), getuid());
    ASSERT_TRUE(store.ok()) << store.status();
    store_.emplace(*std::move(store));
  }

  std::vector<ProtectedBind> Plan() {
    absl::StatusOr<std::vector<ProtectedBind>> binds =
        ProtectedBindsForSpawn(project_.path(), {}, {});
    EXPECT_TRUE(binds.ok()) << binds.status();
    return binds.ok() ? *binds : std::vector<ProtectedBind>{};
  }

  // Every path below the project with its type and mode, as `find` lists it.
  std::string Listing() {
    return RunProcess({"/usr/bin/find", project_.path(), "-printf", "%P %y %m %s\n"}, {}).out;
  }

  TempDir project_;
  TempDir state_;
  std::optional<StateStore> store_;
};

// How many of `binds` are placeholders: one per missing protected path of
// core's table (protected_paths.h), whose length is the table's.
size_t PlaceholderCount(const std::vector<ProtectedBind>& binds) {
  return static_cast<size_t>(std::count_if(binds.begin(), binds.end(),
                                           [](const ProtectedBind& b) { return b.placeholder; }));
}

TEST_F(PlaceholdersTest, MissingPathsExistDuringTheSpawnAndAreGoneAfter) {
  const std::string before = Listing();
  const std::vector<ProtectedBind> binds = Plan();
  absl::StatusOr<ProtectedPlaceholders> placeholders =
      ProtectedPlaceholders::Create(*store_, project_.path(), binds);
  ASSERT_TRUE(placeholders.ok()) << placeholders.status();
  // All but config.json; .nubos-pilot is pinned.
  EXPECT_EQ(placeholders->created().size(), PlaceholderCount(binds));
  EXPECT_GE(PlaceholderCount(binds), 15u);
  for (const ProtectedBind& bind : binds) {
    struct stat st;
    ASSERT_EQ(lstat(project_.Path(bind.relative).c_str(), &st), 0) << bind.relative;
    if (bind.placeholder) {
      EXPECT_TRUE(IsPlaceholder(st, bind.relative)) << bind.relative;
    }
  }
  EXPECT_EQ(placeholders->Finish(), static_cast<int>(PlaceholderCount(binds)));
  EXPECT_EQ(Listing(), before);
  EXPECT_EQ(placeholders->Finish(), 0) << "idempotent";
}

// A missing file outside a git directory is held by a socket node of mode 0
// (git lists none, no tool can open one); inside `.git`, and np-exec's own
// config.json, by a regular file; a directory by an empty directory.
TEST_F(PlaceholdersTest, MissingFilesAreHeldBySocketsOutsideGit) {
  ASSERT_EQ(unlink(project_.Path(".nubos-pilot/config.json").c_str()), 0);
  ASSERT_EQ(mkdir(project_.Path(".git").c_str(), 0755), 0);
  const std::vector<ProtectedBind> binds = Plan();
  absl::StatusOr<ProtectedPlaceholders> placeholders =
      ProtectedPlaceholders::Create(*store_, project_.path(), binds);
  ASSERT_TRUE(placeholders.ok()) << placeholders.status();
  auto mode_of = [&](const std::string& relative) {
    struct stat st;
    return lstat(project_.Path(relative).c_str(), &st) == 0 ? st.st_mode : 0u;
  };
  for (const char* path : {".envrc", ".mcp.json", ".gitmodules"}) {
    EXPECT_TRUE(S_ISSOCK(mode_of(path))) << path << " " << std::oct << mode_of(path);
    EXPECT_EQ(mode_of(path) & 07777, kPlaceholderSocketMode) << path;
    EXPECT_EQ(open(project_.Path(path).c_str(), O_RDONLY | O_CLOEXEC), -1) << path;
    EXPECT_EQ(errno, ENXIO) << path;
  }
  for (const char* path : {".git/config", ".git/commondir", ".nubos-pilot/config.json"}) {
    EXPECT_TRUE(S_ISREG(mode_of(path))) << path << " " << std::oct << mode_of(path);
  }
  for (const char* path : {".claude", ".vscode", ".git/hooks"}) {
    EXPECT_TRUE(S_ISDIR(mode_of(path))) << path;
  }
  EXPECT_GT(placeholders->Finish(), 0);
  for (const char* path : {".envrc", ".mcp.json", ".gitmodules", ".git/config"}) {
    EXPECT_FALSE(::np::testing::FileExists(project_.Path(path))) << path;
  }
}

// The watchdog's side: a copy of the spawn lock removes the placeholders only
// when no other spawn of the project holds the lock; otherwise that spawn,
// the last one out, does.
TEST_F(PlaceholdersTest, AKilledSpawnsWatchdogRemovesThemWhenAlone) {
  const std::string before = Listing();
  const std::vector<ProtectedBind> binds = Plan();
  // What the watchdog gets back from its argument.
  const std::vector<ProtectedBind> passed =
      PlaceholderBindsFromJson(nlohmann::json::parse(PlaceholderBindsToJson(binds).dump()));
  ASSERT_EQ(passed.size(), binds.size() - 1) << "all but the pinned parent";
  {
    absl::StatusOr<ProtectedPlaceholders> killed =
        ProtectedPlaceholders::Create(*store_, project_.path(), binds);
    ASSERT_TRUE(killed.ok());
    const size_t made = killed->created().size();  // the first spawn made them all
    EXPECT_EQ(made, PlaceholderCount(binds));
    absl::StatusOr<ProtectedPlaceholders> other =
        ProtectedPlaceholders::Create(*store_, project_.path(), binds);
    ASSERT_TRUE(other.ok());
    const int watchdog_lock = dup(killed->lock_fd());  // what the watchdog inherits
    EXPECT_EQ(RemovePlaceholdersIfAlone(watchdog_lock, project_.path(), passed), 0)
        << "another spawn still runs";
    EXPECT_TRUE(::np::testing::FileExists(project_.Path(".envrc")));
    close(watchdog_lock);            // the watchdog exits
    EXPECT_EQ(killed->Finish(), 0);  // (the killed np-exec's descriptor closes)
    EXPECT_EQ(static_cast<size_t>(other->Finish()), made) << "the last one out";
  }
  EXPECT_EQ(Listing(), before);
  absl::StatusOr<ProtectedPlaceholders> killed =
      ProtectedPlaceholders::Create(*store_, project_.path(), binds);
  ASSERT_TRUE(killed.ok());
  const int watchdog_lock = dup(killed->lock_fd());
  EXPECT_EQ(static_cast<size_t>(RemovePlaceholdersIfAlone(watchdog_lock, project_.path(), passed)),
            killed->created().size())
      << "alone";
  close(watchdog_lock);
  EXPECT_EQ(Listing(), before);
  // Entries that are not clean relative paths never get through.
  EXPECT_TRUE(
      PlaceholderBindsFromJson(
          nlohmann::json::parse(
              R"([{"relative":"../x"},{"relative":"/etc/passwd"},{"relative":"a","root":"rel"}])"))
          .empty());
}

TEST_F(PlaceholdersTest, ConcurrentSpawnsLeaveCleanupToTheLast) {
  const std::string before = Listing();
  const std::vector<ProtectedBind> binds = Plan();
  absl::StatusOr<ProtectedPlaceholders> first =
      ProtectedPlaceholders::Create(*store_, project_.path(), binds);
  ASSERT_TRUE(first.ok());
  // The second spawn planned before the first created anything.
  absl::StatusOr<ProtectedPlaceholders> second =
      ProtectedPlaceholders::Create(*store_, project_.path(), binds);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->created().empty());
  EXPECT_EQ(first->Finish(), 0) << "the second spawn still has its mounts on them";
  EXPECT_TRUE(::np::testing::FileExists(project_.Path(".envrc")));
  // A third spawn, planned now, sees the placeholders and keeps them as
  // nodes, still placeholders (bound by path, never pinned: the spawn that
  // made them may remove them before this one re-creates them).
  const std::vector<ProtectedBind> third_binds = Plan();
  for (const ProtectedBind& bind : third_binds) {
    // The real nodes: the pinned parent and the config file.
    const bool real =
        bind.relative == ".nubos-pilot" || bind.relative == ".nubos-pilot/config.json";
    EXPECT_EQ(bind.placeholder, !real) << bind.relative;
    EXPECT_EQ(bind.relative.rfind(".git/", 0), std::string::npos) << "never inside .git's";
  }
  absl::StatusOr<ProtectedPlaceholders> third =
      ProtectedPlaceholders::Create(*store_, project_.path(), third_binds);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(second->Finish(), 0);
  EXPECT_EQ(third->Finish(), static_cast<int>(PlaceholderCount(binds)))
      << "the last one out removes what the first made";
  EXPECT_EQ(Listing(), before);
}

TEST_F(PlaceholdersTest, WhatAHostToolWroteStays) {
  const std::vector<ProtectedBind> binds = Plan();
  absl::StatusOr<ProtectedPlaceholders> placeholders =
      ProtectedPlaceholders::Create(*store_, project_.path(), binds);
  ASSERT_TRUE(placeholders.ok());
  // The owner can still replace a placeholder on the host (an editor's save
  // renames over it; a socket placeholder cannot be written in place) and
  // fill a placeholder directory.
  ASSERT_EQ(unlink(project_.Path(".mcp.json").c_str()), 0);
  project_.Write(".mcp.json", "{\"servers\":{}}", 0600);
  project_.Write(".claude/settings.json", "{}");
  EXPECT_EQ(placeholders->Finish(), static_cast<int>(PlaceholderCount(binds)) - 2);
  EXPECT_EQ(::np::testing::ReadFile(project_.Path(".mcp.json")), "{\"servers\":{}}");
  EXPECT_TRUE(::np::testing::FileExists(project_.Path(".claude/settings.json")));
  EXPECT_FALSE(::np::testing::FileExists(project_.Path(".envrc")));
}

TEST_F(PlaceholdersTest, ALinkPlantedAfterPlanningIsRefused) {
  const std::vector<ProtectedBind> binds = Plan();
  ASSERT_EQ(symlink("/etc/passwd", project_.Path(".envrc").c_str()), 0);
  absl::StatusOr<ProtectedPlaceholders> placeholders =
      ProtectedPlaceholders::Create(*store_, project_.path(), binds);
  ASSERT_FALSE(placeholders.ok());
  EXPECT_EQ(ErrorCode(placeholders.status()), "isolation-protected-path-unsafe");
  // What it created before it stopped was taken back.
  EXPECT_FALSE(::np::testing::FileExists(project_.Path(".claude")));
}

// The placeholders change nothing git decides: an empty .git directory is no
// repository, and a commondir placeholder ("." ) is the git directory itself.
TEST_F(PlaceholdersTest, GitIgnoresThePlaceholders) {
  const std::vector<std::string> env = ::np::testing::BaseEnv({"GIT_CEILING_DIRECTORIES=/"});
  std::vector<ProtectedBind> binds = Plan();
  absl::StatusOr<ProtectedPlaceholders> placeholders =
      ProtectedPlaceholders::Create(*store_, project_.path(), binds);
  ASSERT_TRUE(placeholders.ok());
  ::np::testing::RunOptions options;
  options.cwd = project_.path();
  options.env = env;
  ::np::testing::RunResult no_repo =
      RunProcess({"/usr/bin/git", "rev-parse", "--git-dir"}, options);
  EXPECT_NE(no_repo.exit_code, 0) << no_repo.out;
  EXPECT_EQ(placeholders->Finish(), static_cast<int>(PlaceholderCount(binds)));

  ASSERT_EQ(RunProcess({"/usr/bin/git", "init", "-q", project_.path()}, options).exit_code, 0);
  binds = Plan();
  absl::StatusOr<ProtectedPlaceholders> in_repo =
      ProtectedPlaceholders::Create(*store_, project_.path(), binds);
  ASSERT_TRUE(in_repo.ok());
  EXPECT_EQ(::np::testing::ReadFile(project_.Path(".git/commondir")), ".\n");
  ::np::testing::RunResult common = RunProcess(
      {"/usr/bin/git", "rev-parse", "--path-format=absolute", "--git-common-dir"}, options);
  EXPECT_EQ(common.exit_code, 0) << common.err;
  EXPECT_EQ(common.out, project_.Path(".git") + "\n");
  ::np::testing::RunResult status = RunProcess({"/usr/bin/git", "status", "--short"}, options);
  EXPECT_EQ(status.exit_code, 0) << status.err;
  // Nothing of them in the user's status, however it is asked.
  const std::vector<std::string> porcelain = {"/usr/bin/git", "status", "--porcelain",
                                              "--untracked-files=all", "--ignored"};
  const std::string during = RunProcess(porcelain, options).out;
  EXPECT_EQ(during, "?? .nubos-pilot/config.json\n");
  // git clean does not touch the sockets (it does take empty directories).
  const std::string clean = RunProcess({"/usr/bin/git", "clean", "-ndfx"}, options).out;
  for (const char* path : {".envrc", ".mcp.json", ".gitmodules"}) {
    EXPECT_EQ(clean.find(path), std::string::npos) << clean;
  }
  in_repo->Finish();
  EXPECT_EQ(RunProcess(porcelain, options).out, during);
  EXPECT_FALSE(::np::testing::FileExists(project_.Path(".git/commondir")));
}

}  // namespace
}  // namespace np

namespace np {
namespace {

// Issue 15 item 2: a project nested in another can be renamed, and a link put
// in its place, by a sandbox of the outer project between the plan and the
// placeholders. np-exec then wrote the placeholders wherever the link
// pointed; now it refuses and writes nothing there.
TEST(PlaceholdersSwapTest, AProjectSwappedForALinkGetsNoPlaceholderThroughIt) {
  ::np::testing::TempDir dir;
  const std::string outer = dir.MakeDir("outer");
  ::np::testing::MakeProject(outer, "{}");
  const std::string inner = dir.MakeDir("outer/inner");
  ::np::testing::MakeProject(inner, "{}");
  const std::string decoy = dir.MakeDir("decoy");
  absl::StatusOr<StateStore> store = StateStore::Open(dir.Path("state/np-exec"), getuid());
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<std::vector<ProtectedBind>> binds = ProtectedBindsForSpawn(inner, {}, {});
  ASSERT_TRUE(binds.ok()) << binds.status();
  ASSERT_EQ(rename(inner.c_str(), dir.Path("outer/inner.x").c_str()), 0);
  ASSERT_EQ(symlink(decoy.c_str(), inner.c_str()), 0);
  absl::StatusOr<ProtectedPlaceholders> placeholders =
      ProtectedPlaceholders::Create(*store, inner, *binds);
  ASSERT_FALSE(placeholders.ok());
  EXPECT_EQ(ErrorCode(placeholders.status()), "isolation-protected-path-unsafe");
  EXPECT_EQ(RunProcess({"/usr/bin/find", decoy, "-mindepth", "1"}, {}).out, "");
}

// Given the opened project folder, the placeholders are made and removed
// through it: a project renamed away and its path pointed at a decoy (by a
// link, or by another folder moved in) gets them in the opened folder, and
// the folder now at its path gets nothing.
TEST(PlaceholdersSwapTest, ThroughTheProjectsDescriptorTheyLandInTheOpenedFolder) {
  ::np::testing::TempDir dir;
  const std::string project = dir.MakeDir("project");
  ::np::testing::MakeProject(project, "{}");
  const std::string decoy = dir.MakeDir("decoy");
  absl::StatusOr<StateStore> store = StateStore::Open(dir.Path("state/np-exec"), getuid());
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<std::vector<ProtectedBind>> binds = ProtectedBindsForSpawn(project, {}, {});
  ASSERT_TRUE(binds.ok()) << binds.status();
  const int opened = open(project.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(opened, 0);
  const std::string moved = dir.Path("project.moved");
  for (const bool by_link : {false, true}) {
    SCOPED_TRACE(by_link ? "a link at the path" : "another folder at the path");
    ASSERT_EQ(rename(project.c_str(), moved.c_str()), 0);
    if (by_link) {
      ASSERT_EQ(symlink(decoy.c_str(), project.c_str()), 0);
    } else {
      ASSERT_EQ(rename(decoy.c_str(), project.c_str()), 0);
    }
    absl::StatusOr<ProtectedPlaceholders> placeholders =
        ProtectedPlaceholders::Create(*store, project, *binds, opened);
    ASSERT_TRUE(placeholders.ok()) << placeholders.status();
    EXPECT_EQ(placeholders->created().size(), PlaceholderCount(*binds));
    struct stat st;
    EXPECT_EQ(lstat((moved + "/.mcp.json").c_str(), &st), 0);
    EXPECT_EQ(RunProcess({"/usr/bin/find", project + "/", "-mindepth", "1"}, {}).out, "");
    EXPECT_EQ(placeholders->Finish(), static_cast<int>(PlaceholderCount(*binds)));
    EXPECT_NE(lstat((moved + "/.mcp.json").c_str(), &st), 0);
    // Back as it was.
    if (by_link) {
      ASSERT_EQ(unlink(project.c_str()), 0);
    } else {
      ASSERT_EQ(rename(project.c_str(), decoy.c_str()), 0);
    }
    ASSERT_EQ(rename(moved.c_str(), project.c_str()), 0);
  }
  close(opened);
  EXPECT_EQ(RunProcess({"/usr/bin/find", decoy, "-mindepth", "1"}, {}).out, "");
}

}  // namespace
}  // namespace np
