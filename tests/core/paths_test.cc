#include "core/paths.h"

#include <string>
#include <vector>

#include "core/errors.h"
#include "gtest/gtest.h"

namespace np {
namespace {

TEST(PathsTest, CheckAbsolutePath) {
  EXPECT_TRUE(CheckAbsolutePath("/", "c").ok());
  EXPECT_TRUE(CheckAbsolutePath("/a/b", "c").ok());
  EXPECT_TRUE(CheckAbsolutePath("/" + std::string(kMaxPathBytes - 1, 'a'), "c").ok());
  for (const std::string& bad :
       {std::string(""), std::string("a"), std::string("./a"), std::string("~/a"),
        std::string("/a\0b", 4), std::string("/" + std::string(kMaxPathBytes, 'a'))}) {
    absl::Status status = CheckAbsolutePath(bad, "the-code");
    ASSERT_FALSE(status.ok()) << bad;
    EXPECT_EQ(ErrorCode(status), "the-code");
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(PathsTest, HasDotDot) {
  for (const char* yes : {"..", "/..", "/a/..", "/a/../b", "../a", "a/../../b"}) {
    EXPECT_TRUE(HasDotDot(yes)) << yes;
  }
  for (const char* no : {"", "/", "/a", "/a..b", "/...", "/.a", "/a/.", "..a", "/a/b..."}) {
    EXPECT_FALSE(HasDotDot(no)) << no;
  }
}

TEST(PathsTest, IsInsideIsComponentWise) {
  struct Case {
    const char* path;
    const char* root;
    bool inside;
  };
  const std::vector<Case> cases = {
      {"/project", "/project", true},
      {"/project/a", "/project", true},
      {"/project/a/b", "/project", true},
      {"/project-secrets", "/project", false},
      {"/projects", "/project", false},
      {"/proj", "/project", false},
      {"/", "/project", false},
      {"/anything", "/", true},
      {"/", "/", true},
      {"", "/", false},
      {"relative", "/", false},
      {"/project", "/project/a", false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(IsInside(c.path, c.root), c.inside) << c.path << " in " << c.root;
  }
}

TEST(PathsTest, NormalizePath) {
  struct Case {
    const char* in;
    const char* out;
  };
  const std::vector<Case> cases = {
      {"/", "/"}, {"//", "/"}, {"/a//./b/", "/a/b"},   {"/./", "/"},   {"a/b/", "a/b"},
      {"", "."},  {".", "."},  {"/a/../b", "/a/../b"}, {"///a", "/a"}, {"/a/./././b", "/a/b"},
  };
  for (const Case& c : cases) EXPECT_EQ(NormalizePath(c.in), c.out) << c.in;
}

TEST(PathsTest, BaseNameAndJoinPath) {
  EXPECT_EQ(BaseName("a/b/c.json"), "c.json");
  EXPECT_EQ(BaseName("/x/config.json"), "config.json");
  EXPECT_EQ(BaseName("c.json"), "c.json");
  EXPECT_EQ(BaseName("/a/b/"), "b");
  EXPECT_EQ(BaseName("/"), "");
  EXPECT_EQ(JoinPath("/a", "b"), "/a/b");
  EXPECT_EQ(JoinPath("/a/", "b"), "/a/b");
  EXPECT_EQ(JoinPath("/", "b"), "/b");
  EXPECT_EQ(JoinPath("/a", ""), "/a");
  EXPECT_EQ(JoinPath("", "b"), "b");
}

}  // namespace
}  // namespace np
