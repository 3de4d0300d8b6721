// The caller's account inside the sandbox: the /etc/passwd and /etc/group
// texts np-exec binds read-only over the sandbox's own, so `whoami`, `id -un`
// and node's os.userInfo() find the uid the program runs as.
//
// Each view keeps the base file's well-formed entries (the host's on
// bubblewrap, whose sandbox shows the host's /usr; the image's own on docker
// and podman, copied out of the image once per image ID, or a minimal base
// where the image's file cannot serve) except those naming the caller's uid or
// name, and appends the caller with HOME at the sandbox's home. Nothing of a
// base reaches the caller's own line. Pure: texts in, texts out.
#ifndef NP_EXEC_CORE_PASSWD_VIEW_H_
#define NP_EXEC_CORE_PASSWD_VIEW_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace np {

// The base np-exec uses where the sandbox's own files cannot serve.
inline constexpr absl::string_view kMinimalPasswd =
    "root:x:0:0:root:/root:/bin/sh\n"
    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
inline constexpr absl::string_view kMinimalGroup = "root:x:0:\nnogroup:x:65534:\n";

// An image's passwd or group file larger than this is not used.
inline constexpr size_t kMaxImageAccountBytes = 1 << 20;

enum class AccountFile { kPasswd, kGroup };

// The well-formed lines of an image's passwd or group file `text`, as a base
// for PasswdView or GroupView; nullopt (the minimal base applies) when it is
// larger than kMaxImageAccountBytes or has no well-formed line.
std::optional<std::string> ImageAccountBase(absl::string_view text, AccountFile file);

// Who runs inside: the caller's ids and names.
struct SandboxAccount {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string user;   // An account name (SafeAccountName).
  std::string group;  // A group name (SafeAccountName).
};

// The name a colon-separated account file (`passwd` or `group` text) gives
// to `id` in its third field; "" when no line does.
std::string AccountNameOfId(absl::string_view text, uint32_t id);

// `name` when it is a portable account name (letters, digits, `.`, `_`, `-`,
// not starting with `-`, at most 32 bytes), else `fallback`.
std::string SafeAccountName(absl::string_view name, absl::string_view fallback);

// The account for `uid`:`gid`, named as `passwd_text` and `group_text` (the
// host's files) name them, else "np-exec" and "np-exec" (root: "root").
SandboxAccount AccountFor(uint32_t uid, uint32_t gid, absl::string_view passwd_text,
                          absl::string_view group_text);

// `base` (an /etc/passwd text) without lines for the account's uid or name,
// and malformed lines (not exactly seven fields, a control character, no
// numeric id), plus "user:x:uid:gid:user:HOME:/bin/sh".
std::string PasswdView(absl::string_view base, const SandboxAccount& account,
                       absl::string_view home);

// `base` (an /etc/group text) without lines for the account's gid or group
// name, and malformed lines (not exactly four fields), plus "group:x:gid:user".
std::string GroupView(absl::string_view base, const SandboxAccount& account);

}  // namespace np

#endif  // NP_EXEC_CORE_PASSWD_VIEW_H_
