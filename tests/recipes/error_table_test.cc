// Every error code the program can emit is in the error table of
// docs/errors.md, and every code in the table is one the program emits: the
// sources of core/, launcher/ and shim/ are scanned for code-shaped string
// literals.
#include <dirent.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "tests/support/process.h"

namespace np::testing {
namespace {

// Kebab-case literals in the sources that are not error codes: probe and
// engine reasons (documented with the probe), JSON keys, names and flags.
const std::set<std::string>& NotCodes() {
  static const auto* names = new std::set<std::string>{
      "child-pid", "connection-refused", "daemon-unreachable", "libnp-exec-preload",
      "no-new-privileges", "np-exec", "np-exec-doctor", "np-exec-wrap", "permission-denied",
      "protocol-error", "runtime-not-installed", "runtime-untrusted", "sandbox-exec",
      "egress-entry", "socket-missing", "timed-out",
      // An internal verb and the prepared /etc's directory (issue 19).
      "argv-entry", "etc-view", "container-watchdog", "mount-check",
      // The state store's directory of each image's own passwd and group (issue 17).
      "image-accounts",
      // The causes a runtime driver names to pick a refusal's fix (issue 27).
      "no-daemon", "rootless-id-map",
      // HTTP header names the egress proxy drops, and address classes.
      "not-needed",  // A trust state, as status reports it.
      "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "link-local",
      // Request headers a credential may not name, and the framing ones.
      "content-length", "transfer-encoding", "unique-local"};
  return *names;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void CollectLiterals(const std::string& dir, std::set<std::string>& out) {
  DIR* handle = opendir(dir.c_str());
  ASSERT_NE(handle, nullptr) << dir;
  static const std::regex kLiteral("\"([a-z][a-z0-9]*(-[a-z0-9]+)+)\"");
  while (dirent* entry = readdir(handle)) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    const std::string path = dir + "/" + name;
    if (entry->d_type == DT_DIR) {
      CollectLiterals(path, out);
      continue;
    }
    if (name.size() < 3 ||
        (name.substr(name.size() - 3) != ".cc" && name.substr(name.size() - 2) != ".h")) {
      continue;
    }
    const std::string text = ReadFile(path);
    for (std::sregex_iterator it(text.begin(), text.end(), kLiteral), end; it != end; ++it) {
      out.insert((*it)[1].str());
    }
  }
  closedir(handle);
}

// The topic file that holds the error table and the probe reasons.
std::string ErrorsDoc() { return ReadFile(SourceDir() + "/docs/errors.md"); }

std::set<std::string> TableCodes() {
  const std::string doc = ErrorsDoc();
  const size_t start = doc.find("\n## Error codes");
  EXPECT_NE(start, std::string::npos);
  const size_t end = doc.find("\n## ", start + 1);
  std::set<std::string> codes;
  std::stringstream table(doc.substr(start, end - start));
  std::string line;
  static const std::regex kCode("`([a-z][a-z0-9-]*)`");
  while (std::getline(table, line)) {
    if (line.rfind("| `", 0) != 0) continue;
    // The first column holds the codes.
    const std::string first = line.substr(0, line.find('|', 1));
    for (std::sregex_iterator it(first.begin(), first.end(), kCode), e; it != e; ++it) {
      codes.insert((*it)[1].str());
    }
  }
  return codes;
}

TEST(ErrorTableTest, EveryCodeInTheSourcesIsInTheTable) {
  std::set<std::string> literals;
  for (const char* dir : {"/core", "/launcher", "/shim"})
    CollectLiterals(SourceDir() + dir, literals);
  const std::set<std::string> table = TableCodes();
  for (const std::string& literal : literals) {
    if (NotCodes().count(literal) != 0) continue;
    EXPECT_EQ(table.count(literal), 1u)
        << literal << " is emitted but not in docs/errors.md's table";
  }
  EXPECT_EQ(table.count("usage"), 1u);
}

TEST(ErrorTableTest, EveryCodeInTheTableIsEmitted) {
  std::set<std::string> literals;
  for (const char* dir : {"/core", "/launcher", "/shim"})
    CollectLiterals(SourceDir() + dir, literals);
  literals.insert("usage");
  for (const std::string& code : TableCodes()) {
    EXPECT_EQ(literals.count(code), 1u)
        << code << " is in docs/errors.md's table but nothing emits it";
  }
}

TEST(ErrorTableTest, ProbeReasonsAreDocumented) {
  const std::string doc = ErrorsDoc();
  const size_t start = doc.find("\n## Probe reasons");
  ASSERT_NE(start, std::string::npos);
  const std::string section = doc.substr(start, doc.find("\n## ", start + 1) - start);
  for (const char* reason : {"runtime-not-installed", "daemon-unreachable", "runtime-untrusted"}) {
    EXPECT_NE(section.find(std::string("`") + reason + "`"), std::string::npos) << reason;
  }
}

}  // namespace
}  // namespace np::testing
