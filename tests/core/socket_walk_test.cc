// The walk for the host's local endpoints (core/socket_walk.h), over a
// temporary directory standing in for /run: a socket at any depth makes its
// directory a forbidden mount source, a link is never followed, and what the
// walk cannot finish is reported whole.
#include "core/socket_walk.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "core/errors.h"
#include "core/mounts.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"

namespace np {
namespace {

using ::np::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

class SocketWalkTest : public ::testing::Test {
 protected:
  // A socket node made with mknod: what a daemon's bind() leaves behind.
  void Socket(const std::string& rel) {
    ASSERT_EQ(mknod(run_.Path(rel).c_str(), S_IFSOCK | 0600, 0), 0) << rel;
  }
  std::string P(const std::string& rel) { return run_.Path(rel); }
  TempDir run_;
};

TEST_F(SocketWalkTest, EachDirectoryHoldingASocketIsFound) {
  run_.MakeDir("dbus");
  Socket("dbus/system_bus_socket");
  run_.MakeDir("a/b/c");
  Socket("a/b/c/deep.sock");
  run_.MakeDir("plain");
  run_.Write("plain/pid", "1\n");
  Socket("top.sock");
  EXPECT_THAT(FindSocketHolders(run_.path()), ElementsAre(P("a/b/c"), P("dbus"), P("top.sock")));
}

TEST_F(SocketWalkTest, LinksAreNeverFollowed) {
  TempDir elsewhere;
  elsewhere.MakeDir("d");
  ASSERT_EQ(mknod(elsewhere.Path("d/s").c_str(), S_IFSOCK | 0600, 0), 0);
  ASSERT_EQ(symlink(elsewhere.Path("d").c_str(), P("link").c_str()), 0);
  ASSERT_EQ(symlink(elsewhere.Path("d/s").c_str(), P("link.sock").c_str()), 0);
  EXPECT_THAT(FindSocketHolders(run_.path()), IsEmpty());
  // A root that is itself a link is not walked either.
  ASSERT_EQ(symlink(elsewhere.path().c_str(), P("root-link").c_str()), 0);
  EXPECT_THAT(FindSocketHolders(P("root-link")), IsEmpty());
}

TEST_F(SocketWalkTest, WhatIsTooDeepIsReportedWhole) {
  run_.MakeDir("1/2/3/4");
  run_.Write("1/2/3/4/file", "");
  SocketWalkLimits limits;
  limits.max_depth = 2;
  EXPECT_THAT(FindSocketHolders(run_.path(), limits), ElementsAre(P("1/2/3")));
}

TEST_F(SocketWalkTest, PastTheEntryBudgetTheUnfinishedDirectoriesAreReported) {
  run_.MakeDir("many");
  for (int i = 0; i < 20; ++i) run_.Write("many/f" + std::to_string(i), "");
  SocketWalkLimits limits;
  limits.max_entries = 10;
  // The budget runs out inside `many`, the root's only entry: `many` was not
  // seen to the end and is reported whole.
  EXPECT_THAT(FindSocketHolders(run_.path(), limits), ElementsAre(P("many")));
  // Past the budget in the root's own listing, the root is reported, which
  // covers everything below it.
  for (int i = 0; i < 20; ++i) run_.Write("g" + std::to_string(i), "");
  EXPECT_THAT(FindSocketHolders(run_.path(), limits), ElementsAre(run_.path()));
}

TEST_F(SocketWalkTest, AnUnreadableDirectoryIsReportedWhole) {
  if (geteuid() == 0) {
    // Root reads every directory; the walk's answer then is the plain one.
    run_.MakeDir("closed");
    Socket("closed/s");
    ASSERT_EQ(chmod(P("closed").c_str(), 0), 0);
    EXPECT_THAT(FindSocketHolders(run_.path()), ElementsAre(P("closed")));
    return;
  }
  run_.MakeDir("closed");
  ASSERT_EQ(chmod(P("closed").c_str(), 0), 0);
  EXPECT_THAT(FindSocketHolders(run_.path()), ElementsAre(P("closed")));
  chmod(P("closed").c_str(), 0700);
}

TEST_F(SocketWalkTest, AMissingOrRelativeRootFindsNothing) {
  EXPECT_THAT(FindSocketHolders(P("missing")), IsEmpty());
  EXPECT_THAT(FindSocketHolders("relative/run"), IsEmpty());
}

// What the walk finds becomes forbidden: a mount of the directory, of a file
// beside the socket, or of an ancestor is refused, even read-only.
TEST_F(SocketWalkTest, FoundDirectoriesAreForbiddenMountSources) {
  TempDir project_dir;
  const std::string project = project_dir.MakeDir("project");
  run_.MakeDir("daemon/sub");
  Socket("daemon/control");
  run_.Write("daemon/sub/state", "x");
  absl::StatusOr<MountPolicy> policy = MakeMountPolicy(project, FindSocketHolders(run_.path()));
  ASSERT_TRUE(policy.ok()) << policy.status();
  for (const std::string& source :
       {P("daemon"), P("daemon/control"), P("daemon/sub"), P("daemon/sub/state"), run_.path()}) {
    absl::StatusOr<ValidatedMount> mount =
        ValidateMount(MountSpec{source, "/mnt/x", false}, *policy);
    ASSERT_FALSE(mount.ok()) << source;
    EXPECT_EQ(ErrorCode(mount.status()), "isolation-mount-forbidden-source") << source;
  }
}

}  // namespace
}  // namespace np
