// Finding a runtime binary (docker, podman, bwrap) only where nobody but root
// can have put it. The caller's PATH is not trusted as such: every npm script
// runs with the project's node_modules/.bin first on PATH, and the sandboxed
// program can write the project, so a `bwrap` planted there would run the
// next spawn in the host's namespaces. A match is trusted only when its real
// path is a regular file owned by root and not writable by group or others,
// in directories that are all, up to /, owned by root and not writable by
// group or others, and none of them inside the project (which is writable from
// inside the sandbox whoever owns it). A root-owned directory inside a sticky
// world-writable one (/tmp) is accepted: the sticky bit keeps others from
// renaming or removing an entry they do not own, so such a directory cannot be
// swapped; the binary's own directory must not be writable by others at all.
// Touches the file system (lstat, realpath).
#ifndef NP_EXEC_LAUNCHER_RUNTIME_TRUSTED_BINARY_H_
#define NP_EXEC_LAUNCHER_RUNTIME_TRUSTED_BINARY_H_

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "shim/find_real_program.h"

namespace np {

// What the trust rule needs of one path (lstat: links not followed).
struct OwnerFacts {
  uid_t uid = 0;
  mode_t mode = 0;  // st_mode, type bits included.
};

// lstat(2) of a path; nullopt when it cannot be read.
using OwnerProbe = std::function<std::optional<OwnerFacts>(const std::string& path)>;
std::optional<OwnerFacts> LstatOwner(const std::string& path);

// The trust rule for `real_path` (absolute, links resolved). OK with a
// sentence saying why it is trusted; otherwise `isolation-runtime-untrusted`
// whose message says why not. `project_root` may be empty (no project).
absl::StatusOr<std::string> CheckTrustedLocation(const std::string& real_path,
                                                 absl::string_view project_root,
                                                 const OwnerProbe& probe);

// The outcome of looking a runtime binary up on PATH.
struct RuntimeBinary {
  std::string path;                  // Real path of the first trusted match; "" if none.
  std::string trusted_because;       // Why it is trusted.
  std::vector<std::string> skipped;  // "PATH-MATCH: why it is not trusted", in PATH order.
};

// Looks `name` up on `path_list` as exec would (absolute entries only,
// skipping np-exec itself and its copies), takes the first match that
// CheckTrustedLocation accepts and reports every untrusted one it skipped.
RuntimeBinary FindTrustedBinary(absl::string_view name, absl::string_view path_list,
                                absl::string_view project_root, const FileId& self,
                                const FileProbe& file_probe, const OwnerProbe& owner_probe);

// `isolation-runtime-untrusted`: only untrusted matches of `name` were found.
absl::Status RuntimeUntrusted(absl::string_view name, const std::vector<std::string>& skipped);

// `path_list` without the entries that CheckTrustedLocation refuses (or that
// are relative, or do not exist): the PATH a runtime client gets, so what it
// execs in turn (conmon, runc, crun, docker's plugins) comes from trusted
// directories too.
std::string TrustedPathList(absl::string_view path_list, absl::string_view project_root,
                            const OwnerProbe& probe);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_RUNTIME_TRUSTED_BINARY_H_
