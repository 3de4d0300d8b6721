// C and C++ source split into its parts, for the tests that scan np-exec's
// own sources (core purity, the runtime room): code, comments and the
// contents of string and character literals. Line structure is kept, so line
// numbers stay right. Test-only; pure.
#ifndef NP_EXEC_TESTS_SUPPORT_SOURCE_TEXT_H_
#define NP_EXEC_TESTS_SUPPORT_SOURCE_TEXT_H_

#include <ctype.h>
#include <dirent.h>
#include <sys/stat.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace np::testing {

struct SourceParts {
  bool code = false;
  bool comments = false;
  bool literals = false;  // Their contents (the quotes are blanked).
};

// `text` with every character of a part not kept blanked to a space.
inline std::string KeepOnly(const std::string& text, SourceParts keep) {
  std::string out(text.size(), ' ');
  enum { kCode, kLine, kBlock, kString, kChar, kRaw } state = kCode;
  std::string raw_end;  // A raw literal's closing `)delimiter"`.
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
        } else if (c == 'R' && next == '"' &&
                   (i == 0 ||
                    !(isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_'))) {
          const size_t open = text.find('(', i + 2);
          if (open == std::string::npos) break;
          raw_end = ")" + text.substr(i + 2, open - i - 2) + "\"";
          i = open;
          state = kRaw;
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
      case kRaw:
        if (text.compare(i, raw_end.size(), raw_end) == 0) {
          i += raw_end.size() - 1;
          state = kCode;
        } else {
          copy(i, keep.literals);
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

// The product's sources below `root` (core/, launcher/, shim/): every .cc,
// .h and .c file, as paths relative to `root`.
inline void SourcesUnder(const std::string& root, const std::string& rel,
                         std::vector<std::string>& out) {
  DIR* dir = opendir((root + "/" + rel).c_str());
  if (dir == nullptr) return;
  while (dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    const std::string path = rel + "/" + name;
    struct stat st;
    if (stat((root + "/" + path).c_str(), &st) != 0) continue;
    auto ends = [&name](const std::string& tail) {
      return name.size() >= tail.size() &&
             name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
    };
    if (S_ISDIR(st.st_mode)) {
      SourcesUnder(root, path, out);
    } else if (ends(".cc") || ends(".h") || ends(".c")) {
      out.push_back(path);
    }
  }
  closedir(dir);
}
// "file:line: match" for every match of `re` in the parts of `text` that
// `keep` leaves.
inline std::vector<std::string> LineMatches(const std::string& file, const std::string& text,
                                            const std::regex& re, SourceParts keep) {
  std::vector<std::string> found;
  std::istringstream lines(KeepOnly(text, keep));
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    for (std::sregex_iterator it(line.begin(), line.end(), re), end; it != end; ++it) {
      found.push_back(file + ":" + std::to_string(number) + ": " + it->str());
    }
  }
  return found;
}

inline std::vector<std::string> ProductSources(const std::string& root) {
  std::vector<std::string> files;
  for (const char* top : {"core", "launcher", "shim"}) SourcesUnder(root, top, files);
  return files;
}

}  // namespace np::testing

#endif  // NP_EXEC_TESTS_SUPPORT_SOURCE_TEXT_H_
