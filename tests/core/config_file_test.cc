#include "core/config_file.h"

#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "core/errors.h"
#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"

namespace np {
namespace {

using nlohmann::json;
using ::np::testing::MakeProject;
using ::np::testing::TempDir;

TEST(ConfigFileTest, DuplicateKeysUnderNpExecsPartOnly) {
  for (const char* text : {
           R"({"isolation":{"tier":"container","tier":"direct"}})",
           R"({"isolation":{},"isolation":{}})",
           R"({"workflow":{"worktree_isolation":true,"worktree_isolation":false}})",
           R"({"isolation":{"container":{"mounts":[{"source":"/a","source":"/b"}]}}})",
       }) {
    absl::StatusOr<nlohmann::json> parsed = ParseConfigText(text, "config.json");
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(ErrorCode(parsed.status()), "config-duplicate-key") << text;
  }
  // nubos-pilot's own keys are not np-exec's to judge.
  for (const char* text :
       {R"({"other":{"a":1,"a":2}})", R"({"x":1,"x":2,"isolation":{}})",
        R"({"isolation":{"container":{"mounts":[{"source":"/a"},{"source":"/b"}]}}})"}) {
    EXPECT_TRUE(ParseConfigText(text, "config.json").ok()) << text;
  }
}

TEST(ConfigFileTest, ProjectConfigPath) {
  EXPECT_EQ(ProjectConfigPath("/a/b"), "/a/b/.nubos-pilot/config.json");
  EXPECT_EQ(ProjectConfigPath("/"), "/.nubos-pilot/config.json");
}

TEST(ConfigFileTest, MissingEmptyAndBlankFilesMeanDefaults) {
  TempDir tmp;
  std::vector<std::string> paths = {
      tmp.Path("missing.json"), tmp.Write("empty.json", ""), tmp.Write("blank.json", " \n\t\r\n  "),
      tmp.Write("bom.json", "\xEF\xBB\xBF"), tmp.Write("bomblank.json", "\xEF\xBB\xBF \n")};
  for (const std::string& path : paths) {
    absl::StatusOr<json> parsed = ReadConfigFile(path);
    ASSERT_TRUE(parsed.ok()) << path << ": " << parsed.status();
    EXPECT_EQ(*parsed, json::object()) << path;
  }
}

TEST(ConfigFileTest, MissingDirectoryMeansDefaults) {
  TempDir tmp;
  absl::StatusOr<json> parsed = ReadConfigFile(tmp.Path("no/such/dir/config.json"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, json::object());
}

TEST(ConfigFileTest, LeadingBomIsIgnored) {
  TempDir tmp;
  const std::string path =
      tmp.Write("config.json", "\xEF\xBB\xBF{\"isolation\": {\"tier\": \"container\"}}");
  absl::StatusOr<json> parsed = ReadConfigFile(path);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ((*parsed)["isolation"]["tier"], "container");
}

TEST(ConfigFileTest, ReadsThroughASymlinkToAFile) {
  TempDir tmp;
  const std::string real = tmp.Write("real.json", R"({"a": 1})");
  ASSERT_EQ(symlink(real.c_str(), tmp.Path("link.json").c_str()), 0);
  absl::StatusOr<json> parsed = ReadConfigFile(tmp.Path("link.json"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ((*parsed)["a"], 1);
}

struct FileCase {
  std::string name;
  std::string content;
  std::string code;
};

TEST(ConfigFileTest, BrokenContentIsCoded) {
  const std::vector<FileCase> cases = {
      {"TruncatedObject", "{\"isolation\": ", "config-invalid-json"},
      {"TrailingComma", "{\"a\": 1,}", "config-invalid-json"},
      {"Comment", "// c\n{}", "config-invalid-json"},
      {"SingleQuotes", "{'a': 1}", "config-invalid-json"},
      {"InvalidUtf8", "{\"a\": \"\xFF\xFE\"}", "config-invalid-json"},
      {"TwoDocuments", "{} {}", "config-invalid-json"},
      {"Array", "[1, 2]", "config-invalid-shape"},
      {"Number", "3", "config-invalid-shape"},
      {"String", "\"container\"", "config-invalid-shape"},
      {"Null", "null", "config-invalid-shape"},
      {"BomArray", "\xEF\xBB\xBF[]", "config-invalid-shape"},
  };
  TempDir tmp;
  for (const FileCase& c : cases) {
    const std::string path = tmp.Write(c.name + ".json", c.content);
    absl::StatusOr<json> parsed = ReadConfigFile(path);
    ASSERT_FALSE(parsed.ok()) << c.name;
    EXPECT_EQ(ErrorCode(parsed.status()), c.code) << c.name << ": " << parsed.status();
    // Same answer from the text parser.
    absl::StatusOr<json> text = ParseConfigText(c.content, "config.json");
    ASSERT_FALSE(text.ok()) << c.name;
    EXPECT_EQ(ErrorCode(text.status()), c.code) << c.name;
  }
}

TEST(ConfigFileTest, DirectoryIsNotAFile) {
  TempDir tmp;
  const std::string dir = tmp.MakeDir("config.json");
  absl::StatusOr<json> parsed = ReadConfigFile(dir);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(ErrorCode(parsed.status()), "config-not-a-file");
  EXPECT_EQ(ErrorDetails(parsed.status())["kind"], "directory");
}

TEST(ConfigFileTest, FifoDoesNotBlock) {
  TempDir tmp;
  const std::string fifo = tmp.Path("config.json");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  // No writer ever opens the FIFO: a blocking open would hang here until the
  // test's timeout.
  absl::StatusOr<json> parsed = ReadConfigFile(fifo);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(ErrorCode(parsed.status()), "config-not-a-file");
  EXPECT_EQ(ErrorDetails(parsed.status())["kind"], "other");
}

TEST(ConfigFileTest, DanglingSymlinkIsUnreadable) {
  TempDir tmp;
  const std::string link = tmp.Path("config.json");
  ASSERT_EQ(symlink(tmp.Path("nowhere.json").c_str(), link.c_str()), 0);
  absl::StatusOr<json> parsed = ReadConfigFile(link);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(ErrorCode(parsed.status()), "config-unreadable");
}

TEST(ConfigFileTest, SymlinkLoopIsUnreadable) {
  TempDir tmp;
  ASSERT_EQ(symlink(tmp.Path("b").c_str(), tmp.Path("a").c_str()), 0);
  ASSERT_EQ(symlink(tmp.Path("a").c_str(), tmp.Path("b").c_str()), 0);
  absl::StatusOr<json> parsed = ReadConfigFile(tmp.Path("a"));
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(ErrorCode(parsed.status()), "config-unreadable");
}

// Root reads any file, so as root the read runs in a child that gave root up.
TEST(ConfigFileTest, PermissionDeniedIsUnreadable) {
  TempDir tmp;
  const std::string path = tmp.Write("config.json", "{}", 0000);
  chmod(path.c_str(), 0000);
  chmod(tmp.path().c_str(), 0755);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (geteuid() == 0 &&
        (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0)) {
      _exit(2);
    }
    absl::StatusOr<json> parsed = ReadConfigFile(path);
    _exit(!parsed.ok() && ErrorCode(parsed.status()) == "config-unreadable" ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: could not give up root; 1: not config-unreadable";
}

TEST(ConfigFileTest, TooLargeIsRefused) {
  TempDir tmp;
  std::string big = "{\"a\": \"" + std::string(kMaxConfigBytes, 'x') + "\"}";
  const std::string path = tmp.Write("config.json", big);
  absl::StatusOr<json> parsed = ReadConfigFile(path);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(ErrorCode(parsed.status()), "config-too-large");
  absl::StatusOr<json> text = ParseConfigText(big, "config.json");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(ErrorCode(text.status()), "config-too-large");
}

TEST(ConfigFileTest, ExactlyTheLimitIsRead) {
  TempDir tmp;
  std::string text = "{\"a\": \"\"}";
  text.insert(7, std::string(kMaxConfigBytes - text.size(), 'x'));
  ASSERT_EQ(text.size(), kMaxConfigBytes);
  absl::StatusOr<json> parsed = ReadConfigFile(tmp.Write("config.json", text));
  EXPECT_TRUE(parsed.ok()) << parsed.status();
}

std::string Nested(int depth) {
  return "{\"a\": " + std::string(static_cast<size_t>(depth - 1), '[') + "1" +
         std::string(static_cast<size_t>(depth - 1), ']') + "}";
}

TEST(ConfigFileTest, TooDeepIsRefusedBeforeParsing) {
  EXPECT_TRUE(ParseConfigText(Nested(kMaxConfigDepth), "config.json").ok());
  absl::StatusOr<json> deep = ParseConfigText(Nested(kMaxConfigDepth + 1), "config.json");
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(ErrorCode(deep.status()), "config-invalid-json");
  // Deep enough to overflow a recursive parser's stack if it ever got there.
  absl::StatusOr<json> hostile =
      ParseConfigText(std::string(500000, '[') + std::string(500000, ']'), "config.json");
  ASSERT_FALSE(hostile.ok());
  EXPECT_EQ(ErrorCode(hostile.status()), "config-invalid-json");
  // Brackets inside strings do not count as nesting.
  EXPECT_TRUE(ParseConfigText("{\"a\": \"" + std::string(1000, '[') + "\\\"\"}", "c").ok());
}

TEST(ConfigFileTest, DetailsCarryOnlyTheBaseName) {
  TempDir tmp;
  const std::string path = tmp.Write("secret-dir/config.json", "{not json");
  absl::StatusOr<json> parsed = ReadConfigFile(path);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(ErrorDetails(parsed.status())["file"], "config.json");
  EXPECT_EQ(ErrorDetails(parsed.status()).dump().find("secret-dir"), std::string::npos);
}

}  // namespace
}  // namespace np
