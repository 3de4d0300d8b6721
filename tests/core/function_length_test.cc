// Named steps, enforced: no product function (core/, launcher/, shim/) is
// longer than kMaxFunctionLines, from the first line of its signature to its
// closing brace (conventions 3: a function that does not fit on a screen is
// a list of steps waiting to be named). Lambdas count toward the function
// they are written in; a class's inline methods are measured one by one.
// And no product comment names an issue.
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/support/process.h"
#include "tests/support/source_text.h"

namespace np {
namespace {

constexpr int kMaxFunctionLines = 60;

struct LongFunction {
  int first_line = 0;
  int lines = 0;
};

// Whether the code before a `{` (since the last `;`, `{`, `}` or access
// label) is a function's signature: it ends in its parameter list, maybe
// with qualifiers or a trailing return type, and is no statement, lambda or
// initializer.
bool IsFunctionHead(std::string head) {
  auto trim = [&head] {
    const size_t end = head.find_last_not_of(" \t\n");
    head.resize(end == std::string::npos ? 0 : end + 1);
  };
  trim();
  const size_t arrow = head.rfind("->");
  const size_t close = head.rfind(')');
  if (arrow != std::string::npos && (close == std::string::npos || arrow > close)) {
    head.resize(arrow);  // A trailing return type.
    trim();
  }
  for (bool stripped = true; stripped;) {
    stripped = false;
    for (const std::string word : {"const", "noexcept", "override", "final"}) {
      if (head.size() >= word.size() &&
          head.compare(head.size() - word.size(), word.size(), word) == 0) {
        head.resize(head.size() - word.size());
        trim();
        stripped = true;
      }
    }
  }
  if (head.empty() || head.back() != ')') return false;
  const size_t start = head.find_first_not_of(" \t\n");
  const size_t word_end = head.find_first_of(" \t\n(", start);
  const std::string first = head.substr(start, word_end - start);
  for (const char* statement : {"if", "for", "while", "switch", "catch", "else"}) {
    if (first == statement) return false;
  }
  // The parameter list's opening parenthesis: a lambda's follows its `]`.
  int depth = 0;
  size_t open = head.size() - 1;
  for (; open > 0; --open) {
    depth += head[open] == ')' ? 1 : head[open] == '(' ? -1 : 0;
    if (depth == 0) break;
  }
  const size_t before = head.find_last_not_of(" \t\n", open == 0 ? 0 : open - 1);
  return open == 0 || before == std::string::npos || head[before] != ']';
}

bool IsAccessLabel(const std::string& head) {
  const size_t first = head.find_first_not_of(" \t\n");
  if (first == std::string::npos) return false;
  const std::string word = head.substr(first, head.find_last_not_of(" \t\n") + 1 - first);
  return word == "public" || word == "private" || word == "protected";
}

// The functions in `text` longer than `limit` lines.
std::vector<LongFunction> LongFunctions(const std::string& text, int limit) {
  const std::string code = np::testing::KeepOnly(text, {/*code=*/true});
  struct Scope {
    bool function;
    int first_line;
  };
  std::vector<Scope> scopes;
  std::vector<LongFunction> found;
  size_t head_start = 0;
  int line = 1;
  for (size_t i = 0; i < code.size(); ++i) {
    const char c = code[i];
    if (c == '\n') {
      ++line;
    } else if (c == '#') {
      // A preprocessor line is no part of any head.
      const size_t eol = code.find('\n', i);
      i = (eol == std::string::npos ? code.size() : eol) - 1;
      head_start = i + 1;
    } else if (c == '{') {
      const std::string head = code.substr(head_start, i - head_start);
      bool in_function = false;
      for (const Scope& scope : scopes) in_function = in_function || scope.function;
      const bool function = !in_function && IsFunctionHead(head);
      const size_t lead = head.find_first_not_of(" \t\n");
      int first = line;
      if (lead != std::string::npos) {
        for (size_t k = lead; k < head.size(); ++k) first -= head[k] == '\n' ? 1 : 0;
      }
      scopes.push_back({function, first});
      head_start = i + 1;
    } else if (c == '}') {
      if (!scopes.empty()) {
        const Scope scope = scopes.back();
        scopes.pop_back();
        const int lines = line - scope.first_line + 1;
        if (scope.function && lines > limit) found.push_back({scope.first_line, lines});
      }
      head_start = i + 1;
    } else if (c == ';') {
      head_start = i + 1;
    } else if (c == ':' && IsAccessLabel(code.substr(head_start, i - head_start))) {
      head_start = i + 1;
    }
  }
  return found;
}

std::string Lines(int n, const std::string& line) {
  std::string out;
  for (int i = 0; i < n; ++i) absl::StrAppend(&out, line, "\n");
  return out;
}

TEST(FunctionLengthTest, MeasuresFunctionsAndOnlyThem) {
  // A function of exactly the limit passes; one line more is found, with
  // its first line and its length.
  const std::string fits = absl::StrCat("int F(int a,\n      int b) {\n",
                                        Lines(kMaxFunctionLines - 3, "  a += b;"), "}\n");
  EXPECT_TRUE(LongFunctions(fits, kMaxFunctionLines).empty());
  const std::string over = absl::StrCat("#include <x>\n\nint F(int a,\n      int b) {\n",
                                        Lines(kMaxFunctionLines - 2, "  a += b;"), "}\n");
  const std::vector<LongFunction> found = LongFunctions(over, kMaxFunctionLines);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].first_line, 3);
  EXPECT_EQ(found[0].lines, kMaxFunctionLines + 1);
  // Inline methods are measured one by one, not as their class; a long
  // lambda or block inside a function counts toward it; braces in comments
  // and literals do not count.
  const std::string methods = absl::StrCat(
      "class C : public B {\n public:\n  void A() const override {\n", Lines(40, "    x();"),
      "  }\n  void B() {\n", Lines(40, "    y();"), "  }\n};\n");
  EXPECT_TRUE(LongFunctions(methods, kMaxFunctionLines).empty());
  const std::string with_lambda = absl::StrCat("void G() {\n  auto f = [&](int x) {\n",
                                               Lines(70, "    z(\"}{\"); // }"), "  };\n}\n");
  ASSERT_EQ(LongFunctions(with_lambda, kMaxFunctionLines).size(), 1u);
  EXPECT_EQ(LongFunctions(with_lambda, kMaxFunctionLines)[0].lines, 74);
  const std::string with_block =
      absl::StrCat("void H() {\n  if (a) {\n", Lines(70, "    z();"), "  }\n}\n");
  EXPECT_EQ(LongFunctions(with_block, kMaxFunctionLines).size(), 1u);
  // Data is not code: a long table or struct is no function.
  const std::string table = absl::StrCat("const int kTable[] = {\n", Lines(80, "  1,"), "};\n",
                                         "struct S {\n", Lines(80, "  int a;"), "};\n");
  EXPECT_TRUE(LongFunctions(table, kMaxFunctionLines).empty());
}

TEST(FunctionLengthTest, NoProductFunctionIsLongerThanTheLimit) {
  const std::string root = np::testing::SourceDir();
  const std::vector<std::string> files = np::testing::ProductSources(root);
  EXPECT_GE(files.size(), 100u) << "the sources look missing under " << root;
  std::string report;
  for (const std::string& rel : files) {
    std::ifstream in(root + "/" + rel, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    for (const LongFunction& f : LongFunctions(text.str(), kMaxFunctionLines)) {
      absl::StrAppend(&report, "  ", rel, ":", f.first_line, ": ", f.lines, " lines\n");
    }
  }
  EXPECT_TRUE(report.empty()) << "functions longer than " << kMaxFunctionLines
                              << " lines; name their steps:\n"
                              << report;
}

// Comments say why, not which issue asked for it: an issue number is
// history (git keeps it), and a reader of the code cannot open it.
TEST(FunctionLengthTest, NoProductCommentNamesAnIssue) {
  const std::string root = np::testing::SourceDir();
  const std::regex issue("[Ii]ssue [0-9]+");
  std::string report;
  for (const std::string& rel : np::testing::ProductSources(root)) {
    std::ifstream in(root + "/" + rel, std::ios::binary);
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      if (std::regex_search(line, issue)) absl::StrAppend(&report, "  ", rel, ":", number, "\n");
    }
  }
  EXPECT_TRUE(report.empty()) << "comments that name an issue; say why instead:\n" << report;
}

}  // namespace
}  // namespace np
