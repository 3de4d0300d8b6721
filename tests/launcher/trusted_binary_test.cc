// The trust rule for runtime binaries (launcher/runtime/trusted_binary.h):
// table-driven over an injected lstat, then the lookup on real temporary
// directories with a binary planted in a project's node_modules/.bin.
#include "launcher/runtime/trusted_binary.h"

#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <string>

#include "core/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/ci.h"
#include "tests/support/temp_dir.h"

namespace np {
namespace {

using ::testing::HasSubstr;

constexpr mode_t kDir = S_IFDIR;
constexpr mode_t kFile = S_IFREG;

// A file system of (path -> owner, mode), everything else missing.
OwnerProbe Fs(std::map<std::string, OwnerFacts> entries) {
  return [entries](const std::string& path) -> std::optional<OwnerFacts> {
    auto it = entries.find(path);
    if (it == entries.end()) return std::nullopt;
    return it->second;
  };
}

std::map<std::string, OwnerFacts> SystemDirs() {
  return {{"/", {0, kDir | 0755}},          {"/usr", {0, kDir | 0755}},
          {"/usr/bin", {0, kDir | 0755}},   {"/usr/bin/bwrap", {0, kFile | 0755}},
          {"/tmp", {0, kDir | 01777}},      {"/tmp/t", {0, kDir | 0755}},
          {"/tmp/t/bin", {0, kDir | 0755}}, {"/tmp/t/bin/docker", {0, kFile | 0755}}};
}

struct Case {
  const char* name;
  std::map<std::string, OwnerFacts> changes;
  const char* path;
  const char* project;
  bool trusted;
  const char* why;  // A word the reason must hold.
};

class TrustRuleTest : public ::testing::TestWithParam<Case> {};

TEST_P(TrustRuleTest, Decides) {
  const Case& c = GetParam();
  std::map<std::string, OwnerFacts> fs = SystemDirs();
  for (const auto& [path, facts] : c.changes) fs[path] = facts;
  absl::StatusOr<std::string> got = CheckTrustedLocation(c.path, c.project, Fs(fs));
  EXPECT_EQ(got.ok(), c.trusted) << (got.ok() ? *got : std::string(got.status().message()));
  const std::string text = got.ok() ? *got : std::string(got.status().message());
  EXPECT_THAT(text, HasSubstr(c.why));
  if (!got.ok()) {
    EXPECT_EQ(ErrorCode(got.status()), "isolation-runtime-untrusted");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, TrustRuleTest,
    ::testing::Values(
        Case{"SystemBinary", {}, "/usr/bin/bwrap", "", true, "every directory up to /"},
        Case{"RootDirInsideStickyTmp", {}, "/tmp/t/bin/docker", "", true, "sticky /tmp"},
        Case{"FileOwnedByUser",
             {{"/usr/bin/bwrap", {1000, kFile | 0755}}},
             "/usr/bin/bwrap",
             "",
             false,
             "uid 1000"},
        Case{"FileGroupWritable",
             {{"/usr/bin/bwrap", {0, kFile | 0775}}},
             "/usr/bin/bwrap",
             "",
             false,
             "0775"},
        Case{"FileNotRegular",
             {{"/usr/bin/bwrap", {0, kDir | 0755}}},
             "/usr/bin/bwrap",
             "",
             false,
             "regular"},
        Case{"OwnDirGroupWritable",
             {{"/usr/bin", {0, kDir | 0775}}},
             "/usr/bin/bwrap",
             "",
             false,
             "/usr/bin"},
        // Others may add files to a sticky directory: not for the binary's own.
        Case{"OwnDirStickyWorldWritable",
             {{"/tmp/t/bin", {0, kDir | 01777}}},
             "/tmp/t/bin/docker",
             "",
             false,
             "/tmp/t/bin"},
        Case{"AncestorWorldWritableNotSticky",
             {{"/tmp", {0, kDir | 0777}}},
             "/tmp/t/bin/docker",
             "",
             false,
             "/tmp "},
        Case{"AncestorOwnedByUser",
             {{"/tmp/t", {1000, kDir | 0755}}},
             "/tmp/t/bin/docker",
             "",
             false,
             "uid 1000"},
        Case{"StickyDirOwnedByUser",
             {{"/tmp", {1000, kDir | 01777}}},
             "/tmp/t/bin/docker",
             "",
             false,
             "uid 1000"},
        Case{"ALinkInTheChain",
             {{"/tmp/t", {0, S_IFLNK | 0777}}},
             "/tmp/t/bin/docker",
             "",
             false,
             "not a directory"},
        Case{"Missing", {}, "/usr/bin/podman", "", false, "cannot be examined"},
        Case{"Relative", {}, "bin/docker", "", false, "absolute"},
        // Root-owned and 0755, but the sandboxed program can write the project.
        Case{"InsideTheProject", {}, "/tmp/t/bin/docker", "/tmp/t", false, "inside the project"},
        Case{"BesideTheProject", {}, "/tmp/t/bin/docker", "/tmp/t/b", true, "root"}),
    [](const ::testing::TestParamInfo<Case>& param) { return std::string(param.param.name); });

class FindTrustedBinaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) NP_NEEDS("needs root: the trusted directories must be root's");
    project_ = dir_.MakeDir("project");
    planted_ = dir_.Write("project/node_modules/.bin/bwrap", "#!/bin/sh\n", 0755);
    trusted_ = dir_.Write("system/bin/bwrap", "#!/bin/sh\n", 0755);
    dir_.MakeDir("open");
    chmod(dir_.Path("open").c_str(), 0777);
    open_ = dir_.Write("open/bwrap", "#!/bin/sh\n", 0755);
  }
  RuntimeBinary Find(const std::string& path) {
    return FindTrustedBinary("bwrap", path, project_, FileId{}, StatFile, LstatOwner);
  }
  testing::TempDir dir_;
  std::string project_, planted_, trusted_, open_;
};

TEST_F(FindTrustedBinaryTest, SkipsTheProjectAndWorldWritableDirectories) {
  RuntimeBinary found = Find(dir_.Path("project/node_modules/.bin") +
                             ":relative:" + dir_.Path("open") + ":" + dir_.Path("system/bin"));
  EXPECT_EQ(found.path, trusted_);
  EXPECT_THAT(found.trusted_because, HasSubstr("root"));
  ASSERT_EQ(found.skipped.size(), 2u);
  EXPECT_THAT(found.skipped[0], HasSubstr(planted_));
  EXPECT_THAT(found.skipped[0], HasSubstr("inside the project"));
  EXPECT_THAT(found.skipped[1], HasSubstr(open_));
}

TEST_F(FindTrustedBinaryTest, OnlyUntrustedMatchesFindNothing) {
  RuntimeBinary found = Find(dir_.Path("project/node_modules/.bin") + ":" + dir_.Path("open"));
  EXPECT_EQ(found.path, "");
  EXPECT_EQ(found.skipped.size(), 2u);
  EXPECT_EQ(ErrorCode(RuntimeUntrusted("bwrap", found.skipped)), "isolation-runtime-untrusted");
}

TEST_F(FindTrustedBinaryTest, ALinkIsJudgedByWhereItLeads) {
  // A link in a trusted directory to the planted binary is the planted one.
  dir_.MakeDir("linked");
  ASSERT_EQ(symlink(planted_.c_str(), dir_.Path("linked/bwrap").c_str()), 0);
  RuntimeBinary found = Find(dir_.Path("linked"));
  EXPECT_EQ(found.path, "");
  ASSERT_EQ(found.skipped.size(), 1u);
  EXPECT_THAT(found.skipped[0], HasSubstr("inside the project"));
}

TEST_F(FindTrustedBinaryTest, TheClientsPathKeepsOnlyTrustedEntries) {
  const std::string path = dir_.Path("project/node_modules/.bin") +
                           ":relative:" + dir_.Path("open") + ":" + dir_.Path("system/bin") +
                           ":/usr/bin";
  EXPECT_EQ(TrustedPathList(path, project_, LstatOwner), dir_.Path("system/bin") + ":/usr/bin");
}

}  // namespace
}  // namespace np
