// np-exec's static link places the functions of launcher/hot_path.order
// together, in the list's order (lld's --symbol-ordering-file, see the
// top-level CMakeLists.txt), so that a spawn faults in few of the binary's
// pages. The list is a profile of the code made by scripts/hot-order.sh:
// these tests say when it has drifted from the code (too many of its names
// are gone: run the script again), and that the link followed it. The link
// is lld's, so its --wrap of two start-ups is checked here on np-exec itself.
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/support/process.h"

namespace np {
namespace {

struct Symbol {
  uint64_t address = 0;
  uint64_t size = 0;
  int count = 0;  // Symbols of this name (local ones may repeat).
};

std::vector<std::string> OrderList() {
  std::ifstream in(testing::SourceDir() + "/launcher/hot_path.order");
  std::vector<std::string> names;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.front() != '#') names.push_back(line);
  }
  return names;
}

// The binary's functions, from nm: "ADDRESS SIZE TYPE NAME".
std::map<std::string, Symbol> Functions() {
  testing::RunOptions options;
  options.env = testing::BaseEnv();
  const testing::RunResult nm = testing::RunProcess(
      {"/usr/bin/nm", "--defined-only", "--print-size", testing::NpExecBin()}, options);
  EXPECT_EQ(nm.exit_code, 0) << nm.err;
  std::map<std::string, Symbol> functions;
  for (absl::string_view line : absl::StrSplit(nm.out, '\n')) {
    const std::vector<std::string> fields = absl::StrSplit(line, ' ');
    if (fields.size() != 4 || fields[2].find_first_of("tTwWiI") != 0) continue;
    Symbol& symbol = functions[fields[3]];
    ++symbol.count;
    EXPECT_TRUE(absl::SimpleHexAtoi(fields[0], &symbol.address)) << line;
    EXPECT_TRUE(absl::SimpleHexAtoi(fields[1], &symbol.size)) << line;
  }
  return functions;
}

// np-exec's own functions whose names no library version spells: namespace
// np, and no Abseil or nlohmann type in the signature (their mangled names
// carry the library's version, as glibc's internals do theirs). Those are
// what a change of np-exec's code renames.
bool OwnName(const std::string& name) {
  return name.rfind("_ZN2np", 0) == 0 && name.find("absl") == std::string::npos &&
         name.find("nlohmann") == std::string::npos;
}

TEST(HotOrderTest, MostOfNpExecsOwnListedFunctionsAreInTheBinary) {
  const std::vector<std::string> names = OrderList();
  ASSERT_GT(names.size(), 300u) << "launcher/hot_path.order is missing or nearly empty";
  const std::map<std::string, Symbol> functions = Functions();
  size_t own = 0;
  std::vector<std::string> missing;
  for (const std::string& name : names) {
    if (!OwnName(name)) continue;
    ++own;
    if (functions.count(name) == 0) missing.push_back(name);
  }
  ASSERT_GT(own, 100u);
  EXPECT_LE(missing.size() * 10, own)
      << missing.size() << " of np-exec's own " << own
      << " functions in launcher/hot_path.order are not in np-exec any more; run "
         "scripts/hot-order.sh. The first: "
      << missing.front();
}

TEST(HotOrderTest, TheListedFunctionsLieTogetherInTheListsOrder) {
  const std::map<std::string, Symbol> functions = Functions();
  std::vector<Symbol> placed;
  for (const std::string& name : OrderList()) {
    auto it = functions.find(name);
    if (it != functions.end() && it->second.count == 1) placed.push_back(it->second);
  }
  ASSERT_GT(placed.size(), 100u);
  size_t in_order = 0;
  uint64_t low = placed.front().address, high = low, bytes = 0;
  for (size_t i = 0; i < placed.size(); ++i) {
    if (i > 0 && placed[i].address >= placed[i - 1].address) ++in_order;
    low = std::min(low, placed[i].address);
    high = std::max(high, placed[i].address + placed[i].size);
    bytes += placed[i].size;
  }
  // In an ordered link only functions that share a section with an earlier
  // one (archives built without a section per function, aliases) are out of
  // place: 91% of neighbours in order, and the listed functions span 1.4
  // times their size. An unordered link measured 55% and 7.3 times.
  EXPECT_GE(in_order * 100, (placed.size() - 1) * 80)
      << in_order << " of " << placed.size() - 1 << " neighbours in the list's order";
  EXPECT_LE(high - low, bytes * 2)
      << "the listed functions (" << bytes << " bytes) span " << high - low << " bytes";
}

// The start-ups np-exec's link wraps (launcher/CMakeLists.txt): the standard
// streams' set-up is never called (nothing is left that calls the real one),
// and libcrypto's CPU probe in .init is the deferred wrapper.
TEST(HotOrderTest, TheLinkWrapsTheStartUpsItIsToldTo) {
  const std::map<std::string, Symbol> functions = Functions();
  EXPECT_EQ(functions.count("__wrap__ZNSt8ios_base4InitC1Ev"), 1u);
  EXPECT_EQ(functions.count("_ZNSt8ios_base4InitC1Ev"), 0u)
      << "the real std::ios_base::Init is still linked in";
  testing::RunOptions options;
  options.env = testing::BaseEnv();
  const testing::RunResult init =
      testing::RunProcess({"/usr/bin/objdump", "-d", "-j", ".init", testing::NpExecBin()}, options);
  ASSERT_EQ(init.exit_code, 0) << init.err;
  EXPECT_EQ(init.out.find("<OPENSSL_cpuid_setup>"), std::string::npos) << init.out;
#ifdef NP_DEFER_OPENSSL_CPUID
  EXPECT_NE(init.out.find("<__wrap_OPENSSL_cpuid_setup>"), std::string::npos) << init.out;
#endif
}

}  // namespace
}  // namespace np
