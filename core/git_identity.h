// The caller's git identity inside the sandbox: `user.name` and `user.email`
// of the caller's global git configuration, and nothing else of it, as a
// small git config file np-exec binds read-only inside and names with
// GIT_CONFIG_SYSTEM (the system level, so the program's own ~/.gitconfig, in
// the sandbox's home, can still be written and overrides it).
//
// Parsed from the text of the caller's files (the launcher reads them, in
// git's order: $XDG_CONFIG_HOME/git/config, then ~/.gitconfig, or
// GIT_CONFIG_GLOBAL alone), with git's rules for a `[user]` section: section
// and key names are case-insensitive, the last value wins, a value may be
// quoted and escaped, `#` and `;` start a comment outside quotes. `include`
// and `includeIf` are not followed, so an identity kept only in an included
// file is not seen. Pure: texts in, text out.
#ifndef NP_EXEC_CORE_GIT_IDENTITY_H_
#define NP_EXEC_CORE_GIT_IDENTITY_H_

#include <string>

#include "absl/strings/string_view.h"

namespace np {

// Where the identity file is bound inside, and the variable naming it.
inline constexpr absl::string_view kGitConfigTarget = "/run/np-exec/gitconfig";
inline constexpr absl::string_view kGitConfigVar = "GIT_CONFIG_SYSTEM";

struct GitIdentity {
  std::string name;   // user.name; empty: not set.
  std::string email;  // user.email; empty: not set.
};

// `base` with the `user.name` and `user.email` that config text `text` sets
// (a later file's values win over an earlier's). A value holding a control
// character (a newline, NUL...) is ignored.
GitIdentity ParseGitIdentity(absl::string_view text, GitIdentity base = {});

// The file bound inside: the image's own system config included first (git
// ignores a missing include), then the identity, each value quoted and
// escaped; "" when the identity is empty (nothing is bound).
std::string GitIdentityConfig(const GitIdentity& identity);

}  // namespace np

#endif  // NP_EXEC_CORE_GIT_IDENTITY_H_
