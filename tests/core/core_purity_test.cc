// core/ decides; it never acts. This test reads every source file in core/
// and fails when one names a way to spawn, exec, open a socket or read the
// environment, so the rule holds by construction rather than by review.
// Comments count (a comment naming getenv is how a call to it starts), string
// literals do not: an error message may say "socket" without opening one.
#include <dirent.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/process.h"
#include "tests/support/source_text.h"

namespace np {
namespace {

// Word-boundary matches; `system` only as a call.
const std::regex& Forbidden() {
  static const std::regex* re = new std::regex(
      R"(\b(fork|vfork|exec[lv]p?e?|execveat|fexecve|posix_spawnp?|popen|socket|socketpair|)"
      R"(connect|getenv|secure_getenv|environ|__environ)\b|\bsystem\s*\()");
  return *re;
}

// "file:line: word" for each forbidden word in `text`.
std::vector<std::string> Findings(const std::string& file, const std::string& text) {
  // Comments count (a comment naming getenv is how a call to it starts),
  // string literals do not.
  return np::testing::LineMatches(file, text, Forbidden(), {/*code=*/true, /*comments=*/true});
}

TEST(CorePurityTest, MatcherCatchesEveryForbiddenWord) {
  for (const char* bad : {"pid_t p = fork();",
                          "vfork()",
                          "execve(a, b, c);",
                          "execvp(a, b)",
                          "execl(a, b)",
                          "execlp(a)",
                          "execle(a)",
                          "execv(a)",
                          "execvpe(a)",
                          "fexecve(fd)",
                          "posix_spawn(&p)",
                          "posix_spawnp(&p)",
                          "system(\"ls\")",
                          "std::system (cmd)",
                          "popen(cmd, \"r\")",
                          "int s = socket(AF_UNIX, 0, 0);",
                          "connect(s, a, n)",
                          "getenv(\"HOME\")",
                          "secure_getenv(x)",
                          "extern char** environ;",
                          "// we could getenv here"}) {
    EXPECT_FALSE(Findings("x.cc", bad).empty()) << bad;
  }
  for (const char* fine : {"np-exec", "// the launcher execs the program", "environment", "sockets",
                           "connected", "filesystem", "system directories", "forked_path",
                           "Msg(\"refused even with a socket\")", "'\"'; getenvy", "a.execute()"}) {
    EXPECT_TRUE(Findings("x.cc", fine).empty()) << fine;
  }
}

TEST(CorePurityTest, CoreNeverSpawnsExecsOpensSocketsOrReadsTheEnvironment) {
  const std::string core = np::testing::SourceDir() + "/core";
  DIR* dir = opendir(core.c_str());
  ASSERT_NE(dir, nullptr) << core;
  std::vector<std::string> files;
  while (dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    files.push_back(name);
  }
  closedir(dir);
  int scanned = 0;
  std::vector<std::string> all;
  for (const std::string& name : files) {
    std::ifstream in(core + "/" + name, std::ios::binary);
    if (!in) continue;  // A subdirectory.
    std::stringstream text;
    text << in.rdbuf();
    ++scanned;
    std::vector<std::string> found = Findings("core/" + name, text.str());
    all.insert(all.end(), found.begin(), found.end());
  }
  EXPECT_GE(scanned, 20) << "core/ looks empty: " << core;
  for (const std::string& finding : all) ADD_FAILURE() << finding;
}

}  // namespace
}  // namespace np
