#include "core/passwd_view.h"

#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace np {
namespace {

// The fields of one line, or nothing when it has fewer than `fields`, holds
// a control character (a NUL or CR would let one line read as two) or names
// no numeric id in its third field.
bool SplitLine(absl::string_view line, size_t fields, std::vector<absl::string_view>* out,
               uint32_t* id) {
  out->clear();  // The caller's vector, reused line after line.
  for (char c : line) {
    if (static_cast<unsigned char>(c) < 0x20) return false;
  }
  for (absl::string_view field : absl::StrSplit(line, ':')) out->push_back(field);
  return out->size() >= fields && !(*out)[0].empty() && absl::SimpleAtoi((*out)[2], id);
}

// The well-formed lines of `base` (exactly `fields` fields) minus those
// whose name is `name` or id is `id` (none when nullopt).
std::string Without(absl::string_view base, size_t fields, absl::string_view name,
                    std::optional<uint32_t> id) {
  std::string kept;
  kept.reserve(base.size());
  std::vector<absl::string_view> parts;
  for (absl::string_view line : absl::StrSplit(base, '\n', absl::SkipEmpty())) {
    uint32_t line_id = 0;
    if (!SplitLine(line, fields, &parts, &line_id) || parts.size() != fields) continue;
    if ((!name.empty() && parts[0] == name) || line_id == id) continue;
    absl::StrAppend(&kept, line, "\n");
  }
  return kept;
}

constexpr size_t kPasswdFields = 7;
constexpr size_t kGroupFields = 4;

}  // namespace

std::string AccountNameOfId(absl::string_view text, uint32_t id) {
  std::vector<absl::string_view> parts;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    uint32_t line_id = 0;
    if (SplitLine(line, 3, &parts, &line_id) && line_id == id) return std::string(parts[0]);
  }
  return "";
}

std::string SafeAccountName(absl::string_view name, absl::string_view fallback) {
  if (name.empty() || name.size() > 32 || name.front() == '-') return std::string(fallback);
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') {
      return std::string(fallback);
    }
  }
  return std::string(name);
}

SandboxAccount AccountFor(uint32_t uid, uint32_t gid, absl::string_view passwd_text,
                          absl::string_view group_text) {
  SandboxAccount account;
  account.uid = uid;
  account.gid = gid;
  account.user = SafeAccountName(AccountNameOfId(passwd_text, uid), uid == 0 ? "root" : "np-exec");
  account.group = SafeAccountName(AccountNameOfId(group_text, gid), gid == 0 ? "root" : "np-exec");
  return account;
}

std::optional<std::string> ImageAccountBase(absl::string_view text, AccountFile file) {
  if (text.size() > kMaxImageAccountBytes) return std::nullopt;
  std::string kept =
      Without(text, file == AccountFile::kPasswd ? kPasswdFields : kGroupFields, "", std::nullopt);
  if (kept.empty()) return std::nullopt;
  return kept;
}

std::string PasswdView(absl::string_view base, const SandboxAccount& account,
                       absl::string_view home) {
  return absl::StrCat(Without(base, kPasswdFields, account.user, account.uid), account.user,
                      ":x:", account.uid, ":", account.gid, ":", account.user, ":", home,
                      ":/bin/sh\n");
}

std::string GroupView(absl::string_view base, const SandboxAccount& account) {
  return absl::StrCat(Without(base, kGroupFields, account.group, account.gid), account.group,
                      ":x:", account.gid, ":", account.user, "\n");
}

}  // namespace np
