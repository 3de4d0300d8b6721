// C and C++ source split into its parts, for the tests that scan np-exec's
// own sources (core purity, the runtime room): code, comments and the
// contents of string and character literals. Line structure is kept, so line
// numbers stay right. Test-only; pure.
#ifndef NP_EXEC_TESTS_SUPPORT_SOURCE_TEXT_H_
#define NP_EXEC_TESTS_SUPPORT_SOURCE_TEXT_H_

#include <string>

namespace np::testing {

struct SourceParts {
  bool code = false;
  bool comments = false;
  bool literals = false;  // Their contents (the quotes are blanked).
};

// `text` with every character of a part not kept blanked to a space.
inline std::string KeepOnly(const std::string& text, SourceParts keep) {
  std::string out(text.size(), ' ');
  enum { kCode, kLine, kBlock, kString, kChar } state = kCode;
  auto copy = [&](size_t i, bool kept) {
    if (kept || text[i] == '\n') out[i] = text[i];
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    switch (state) {
      case kCode:
        if (c == '/' && (next == '/' || next == '*')) {
          state = next == '/' ? kLine : kBlock;
          copy(i, keep.comments);
        } else if (c == '"' || c == '\'') {
          state = c == '"' ? kString : kChar;
        } else {
          copy(i, keep.code);
        }
        break;
      case kLine:
        if (c == '\n') state = kCode;
        copy(i, keep.comments);
        break;
      case kBlock:
        copy(i, keep.comments);
        if (c == '*' && next == '/') {
          copy(++i, keep.comments);
          state = kCode;
        }
        break;
      case kString:
      case kChar:
        if (c == '\\' && next != '\n') {
          ++i;  // An escape: neither character ends the literal.
        } else if ((state == kString && c == '"') || (state == kChar && c == '\'')) {
          state = kCode;
        } else {
          copy(i, keep.literals);
        }
        break;
    }
  }
  return out;
}

}  // namespace np::testing

#endif  // NP_EXEC_TESTS_SUPPORT_SOURCE_TEXT_H_
