// Lexical path helpers shared by the config, mount and argv code.
//
// Everything here works on strings only: no filesystem access. Real-path
// resolution, which does touch the filesystem, lives in mounts.h.
#ifndef NP_EXEC_CORE_PATHS_H_
#define NP_EXEC_CORE_PATHS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace np {

// Longest path np-exec accepts anywhere (PATH_MAX on Linux, NUL included).
inline constexpr size_t kMaxPathBytes = 4095;

// OK when `path` is absolute, shorter than kMaxPathBytes and free of NUL bytes;
// otherwise an InvalidArgument error with the given code.
absl::Status CheckAbsolutePath(absl::string_view path, absl::string_view code);

// True when `path` has a ".." component.
bool HasDotDot(absl::string_view path);

// True when `path` is `root` or lies below it, compared component-wise:
// "/project-secrets" is not inside "/project". Both must be normalised.
bool IsInside(absl::string_view path, absl::string_view root);

// Removes repeated and trailing slashes and "." components ("/a//./b/" ->
// "/a/b"). ".." is left alone; callers refuse it.
std::string NormalizePath(absl::string_view path);

// "a/b/c.json" -> "c.json".
std::string BaseName(absl::string_view path);

// The directory holding an absolute, normalised `path`: "/a/b" -> "/a",
// "/a" -> "/", "/" -> "/" (and "/" for a path with no slash at all).
std::string ParentPath(absl::string_view path);

// Joins a directory and a relative part with one slash.
std::string JoinPath(absl::string_view dir, absl::string_view rest);

}  // namespace np

#endif  // NP_EXEC_CORE_PATHS_H_
