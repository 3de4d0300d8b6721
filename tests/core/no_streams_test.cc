// np-exec's link makes the standard streams' start-up do nothing
// (launcher/no_stream_init.cc): so no product source may name std::cout,
// std::cerr, std::clog, std::cin or a wide twin, which would then be an
// unbuilt object. String literals do not count; comments do.
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

const std::regex& StandardStream() {
  static const std::regex* re = new std::regex(R"(\b(std::)?(w?(cout|cerr|clog|cin))\b)");
  return *re;
}

std::vector<std::string> Findings(const std::string& file, const std::string& text) {
  return np::testing::LineMatches(file, text, StandardStream(), {/*code=*/true});
}

TEST(NoStreamsTest, TheMatcherSeesEveryStandardStream) {
  for (const char* bad : {"std::cout << x;", "std::cerr << e", "std::clog<<1", "std::cin >> v",
                          "std::wcout << L\"x\"", "using std::cerr; cerr << 1;"}) {
    EXPECT_FALSE(Findings("f.cc", bad).empty()) << bad;
  }
  for (const char* fine : {"std::ostringstream out;", "std::ifstream in(path);",
                           "write(2, \"std::cerr\", 9);", "int coutnt = 0;"}) {
    EXPECT_TRUE(Findings("f.cc", fine).empty()) << fine;
  }
}

TEST(NoStreamsTest, NoProductSourceNamesAStandardStream) {
  const std::string root = np::testing::SourceDir();
  std::vector<std::string> found;
  for (const std::string& file : np::testing::ProductSources(root)) {
    std::ifstream in(root + "/" + file);
    std::stringstream text;
    text << in.rdbuf();
    for (std::string& f : Findings(file, text.str())) found.push_back(std::move(f));
  }
  EXPECT_TRUE(found.empty()) << ::testing::PrintToString(found);
}

}  // namespace
}  // namespace np
