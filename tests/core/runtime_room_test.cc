// One room per runtime, enforced: outside launcher/runtime/ (the drivers),
// core's runtime table with the argv builders its rows name (runtime.*,
// *_argv.*, bwrap_targets.*) and the help text, no product source names a
// runtime, neither as
// `Runtime::k...` in code nor as a runtime's name in a string. Code elsewhere
// reads the runtime's traits or asks its driver (conventions 13), so adding a
// runtime touches the files ARCHITECTURE.md lists and nothing else.
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/runtime.h"
#include "gtest/gtest.h"
#include "tests/support/process.h"
#include "tests/support/source_text.h"

namespace np {
namespace {

const std::regex& RuntimeNames() {
  static const std::regex* re = [] {
    std::string names;
    for (const RuntimeTraits& row : AllRuntimes()) {
      for (absl::string_view name : {row.name, row.display_name}) {
        absl::StrAppend(&names, names.empty() ? "" : "|", name);
      }
    }
    // A dot file of the same name (~/.docker, the CLI's credentials) is a
    // path, not the runtime.
    return new std::regex(absl::StrCat(R"((^|[^.])\b()", names, R"()\b)"));
  }();
  return *re;
}

// "file:line: what" for each runtime named in `text`.
std::vector<std::string> Findings(const std::string& file, const std::string& text) {
  static const std::regex enumerator(R"(\bRuntime::k[A-Z]\w*)");
  std::vector<std::string> found;
  const std::string code = np::testing::KeepOnly(text, {/*code=*/true});
  const std::string literals =
      np::testing::KeepOnly(text, {/*code=*/false, /*comments=*/false, /*literals=*/true});
  std::istringstream code_lines(code);
  std::istringstream literal_lines(literals);
  std::string code_line;
  std::string literal_line;
  for (int number = 1; std::getline(code_lines, code_line); ++number) {
    std::getline(literal_lines, literal_line);
    for (std::sregex_iterator it(code_line.begin(), code_line.end(), enumerator), end; it != end;
         ++it) {
      found.push_back(absl::StrCat(file, ":", number, ": ", it->str()));
    }
    for (std::sregex_iterator it(literal_line.begin(), literal_line.end(), RuntimeNames()), end;
         it != end; ++it) {
      found.push_back(absl::StrCat(file, ":", number, ": \"", (*it)[2].str(), "\""));
    }
  }
  return found;
}

// The runtime's own files: its driver room and core's table with the argv
// builders its rows name; and the help text, which is documentation (the man
// page's twin, tests/recipes/cli_docs_test.cc) and may say what each does.
bool RuntimesOwn(const std::string& rel) {
  if (absl::StartsWith(rel, "launcher/runtime/") || rel == "launcher/help.cc") return true;
  if (!absl::StartsWith(rel, "core/")) return false;
  const std::string name = rel.substr(5);
  return absl::StartsWith(name, "runtime.") || absl::StrContains(name, "_argv.") ||
         absl::StartsWith(name, "bwrap_targets.");
}

TEST(RuntimeRoomTest, MatcherCatchesANameOrAnEnumerator) {
  for (const char* bad :
       {"if (r == Runtime::kBwrap) {}", "return \"docker\";", "Msg(\"in the bubblewrap sandbox\")",
        "x = \"podman secrets\";", "p = \"/usr/bin/docker\";"}) {
    EXPECT_FALSE(Findings("x.cc", bad).empty()) << bad;
  }
  for (const char* fine : {"// the docker client", "/* Runtime::kDocker */", "TraitsOf(runtime)",
                           "Runtime runtime = kDefaultRuntime;", "\"dockerfile\"",
                           "\"the runtime's secrets\"", "\"~/.docker\"", "\".docker\""}) {
    EXPECT_TRUE(Findings("x.cc", fine).empty()) << fine;
  }
}

TEST(RuntimeRoomTest, NoProductSourceOutsideTheRoomNamesARuntime) {
  const std::string root = np::testing::SourceDir();
  const std::vector<std::string> files = np::testing::ProductSources(root);
  int scanned = 0;
  std::vector<std::string> all;
  for (const std::string& rel : files) {
    if (RuntimesOwn(rel)) continue;
    std::ifstream in(root + "/" + rel, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    ++scanned;
    std::vector<std::string> found = Findings(rel, text.str());
    all.insert(all.end(), found.begin(), found.end());
  }
  EXPECT_GE(scanned, 60) << "the sources look missing under " << root;
  std::string report;
  for (const std::string& line : all) absl::StrAppend(&report, "  ", line, "\n");
  EXPECT_TRUE(all.empty()) << "runtime named outside launcher/runtime/ and core's table; use a "
                              "trait (core/runtime.h) or a driver method:\n"
                           << report;
}

// ARCHITECTURE.md's claim, checked: its "Adding a runtime" list names at most
// five product files (`<name>` standing for the runtime's own file), and
// every product file that names a runtime's enumerator is one of them.
TEST(RuntimeRoomTest, ArchitectureListsEveryFileANewRuntimeTouches) {
  const std::string root = np::testing::SourceDir();
  std::ifstream doc(root + "/ARCHITECTURE.md");
  std::stringstream text;
  text << doc.rdbuf();
  const std::string architecture = text.str();
  const size_t section = architecture.find("**Adding a runtime**");
  ASSERT_NE(section, std::string::npos) << "ARCHITECTURE.md lost its \"Adding a runtime\" list";
  static const std::regex item(R"(\n\d+\. `([^`]+)`)");
  std::vector<std::regex> listed;
  std::string names;
  const std::string rest =
      architecture.substr(section, architecture.find("\n\n-", section) - section);
  for (std::sregex_iterator it(rest.begin(), rest.end(), item), end; it != end; ++it) {
    const std::string path = (*it)[1].str();
    absl::StrAppend(&names, " ", path);
    listed.emplace_back(std::regex_replace(std::regex_replace(path, std::regex(R"(\.)"), R"(\.)"),
                                           std::regex("<name>"), "[a-z_]+"));
  }
  ASSERT_FALSE(listed.empty()) << "no numbered file list under \"Adding a runtime\"";
  EXPECT_LE(listed.size(), 5u) << names;
  static const std::regex enumerator(R"(\bRuntime::k[A-Z]\w*)");
  std::string outside;
  for (const std::string& rel : np::testing::ProductSources(root)) {
    std::ifstream in(root + "/" + rel, std::ios::binary);
    std::stringstream source;
    source << in.rdbuf();
    const std::string code = np::testing::KeepOnly(source.str(), {/*code=*/true});
    if (!std::regex_search(code, enumerator)) continue;
    bool named = false;
    for (const std::regex& pattern : listed) named = named || std::regex_match(rel, pattern);
    if (!named) absl::StrAppend(&outside, "  ", rel, "\n");
  }
  EXPECT_TRUE(outside.empty()) << "files naming a runtime that ARCHITECTURE.md's list (" << names
                               << " ) does not cover:\n"
                               << outside;
}

}  // namespace
}  // namespace np
