// The security statement's table of protected paths (docs/security.md) is core's
// ProtectedPathTable, row for row: each path once, in the same order, with the same words on what
// reads or runs it on the host. A path added to the table and not to that table (or the other way
// round) fails here.
#include <algorithm>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/protected_paths.h"
#include "gtest/gtest.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace np::testing {
namespace {

constexpr char kBegin[] = "<!-- protected-paths-table";
constexpr char kEnd[] = "<!-- /protected-paths-table -->";

// The rows between the markers: "| `path` | text |".
std::vector<std::pair<std::string, std::string>> ReadmeRows() {
  const std::string readme = ReadFile(SourceDir() + "/docs/security.md");
  const size_t begin = readme.find(kBegin);
  const size_t end = readme.find(kEnd);
  std::vector<std::pair<std::string, std::string>> rows;
  if (begin == std::string::npos || end == std::string::npos || end < begin) return rows;
  std::istringstream lines(readme.substr(begin, end - begin));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("| `", 0) != 0) continue;
    const size_t close = line.find("` | ");
    if (close == std::string::npos || line.size() < close + 6 ||
        line.compare(line.size() - 2, 2, " |") != 0) {
      rows.push_back({"malformed", line});
      continue;
    }
    rows.push_back({line.substr(3, close - 3), line.substr(close + 4, line.size() - close - 6)});
  }
  return rows;
}

TEST(ProtectedPathsTableTest, TheSecurityStatementListsExactlyTheCoreTable) {
  const std::vector<std::pair<std::string, std::string>> readme = ReadmeRows();
  std::vector<std::pair<std::string, std::string>> core;
  for (const ProtectedPathEntry& entry : ProtectedPathTable()) {
    core.push_back({entry.path, entry.runs_it});
  }
  ASSERT_FALSE(readme.empty()) << "no protected-paths table in docs/security.md";
  EXPECT_EQ(readme, core);
}

// Every row says what runs it, and each path is listed once.
TEST(ProtectedPathsTableTest, EveryRowSaysWhatRunsIt) {
  std::vector<std::string> seen;
  for (const ProtectedPathEntry& entry : ProtectedPathTable()) {
    EXPECT_FALSE(entry.runs_it.empty()) << entry.path;
    EXPECT_EQ(entry.runs_it.find('|'), std::string::npos) << entry.path;
    EXPECT_EQ(std::count(seen.begin(), seen.end(), entry.path), 0) << entry.path;
    seen.push_back(entry.path);
  }
}

}  // namespace
}  // namespace np::testing
