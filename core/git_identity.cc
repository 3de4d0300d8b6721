#include "core/git_identity.h"

#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace np {
namespace {

bool HasControl(absl::string_view value) {
  for (const char c : value) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return true;
  }
  return false;
}

// A config value after `=`: quotes removed, escapes applied, a comment cut,
// surrounding blanks dropped (blanks inside quotes kept); nullopt when
// malformed (an unknown escape, an unterminated quote, a continuation line,
// which this reader does not join).
std::optional<std::string> ParseValue(absl::string_view raw) {
  std::string out;
  bool quoted = false;
  size_t keep = 0;  // Length of `out` up to its last character that stays.
  for (size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    if (c == '"') {
      quoted = !quoted;
      keep = out.size();
      continue;
    }
    if (!quoted && (c == '#' || c == ';')) break;
    if (c == '\\') {
      if (++i >= raw.size()) return std::nullopt;
      switch (raw[i]) {
        case '"':
        case '\\':
          out.push_back(raw[i]);
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'b':
          if (!out.empty()) out.pop_back();
          break;
        default:
          return std::nullopt;
      }
      keep = out.size();
      continue;
    }
    if (!quoted && (c == ' ' || c == '\t') && out.empty()) continue;
    out.push_back(c);
    if (quoted || (c != ' ' && c != '\t')) keep = out.size();
  }
  if (quoted) return std::nullopt;
  out.resize(keep);
  return out;
}

// `"` and `\` escaped, inside quotes.
std::string Quoted(absl::string_view value) {
  std::string out = "\"";
  for (const char c : value) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

}  // namespace

GitIdentity ParseGitIdentity(absl::string_view text, GitIdentity base) {
  bool in_user = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (absl::ConsumePrefix(&line, "[")) {
      const size_t close = line.find(']');
      if (close == absl::string_view::npos) {
        in_user = false;
        continue;
      }
      // `[user]` only: `[user "x"]` is a subsection, another section.
      in_user = absl::AsciiStrToLower(absl::StripAsciiWhitespace(line.substr(0, close))) == "user";
      // git allows `[user] name = x` on one line.
      line = absl::StripAsciiWhitespace(line.substr(close + 1));
    }
    if (!in_user || line.empty() || line[0] == '#' || line[0] == ';') continue;
    const size_t eq = line.find('=');
    if (eq == absl::string_view::npos) continue;  // A bare boolean key.
    const std::string key = absl::AsciiStrToLower(absl::StripAsciiWhitespace(line.substr(0, eq)));
    if (key != "name" && key != "email") continue;
    std::optional<std::string> value = ParseValue(line.substr(eq + 1));
    if (!value.has_value() || HasControl(*value)) continue;
    (key == "name" ? base.name : base.email) = *std::move(value);
  }
  return base;
}

std::string GitIdentityConfig(const GitIdentity& identity) {
  if (identity.name.empty() && identity.email.empty()) return "";
  std::string text =
      "# np-exec: the caller's git identity (user.name and user.email of their global\n"
      "# git configuration, nothing else of it), read-only. The program's own\n"
      "# ~/.gitconfig is read after this file and overrides it.\n"
      "[include]\n\tpath = /etc/gitconfig\n[user]\n";
  if (!identity.name.empty()) absl::StrAppend(&text, "\tname = ", Quoted(identity.name), "\n");
  if (!identity.email.empty()) absl::StrAppend(&text, "\temail = ", Quoted(identity.email), "\n");
  return text;
}

}  // namespace np
