#include "core/paths.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/errors.h"

namespace np {

absl::Status CheckAbsolutePath(absl::string_view path, absl::string_view code) {
  if (path.find('\0') != absl::string_view::npos) {
    return MakeError(absl::StatusCode::kInvalidArgument, code, "path contains a NUL byte",
                     {{"path", path}});
  }
  if (path.size() > kMaxPathBytes) {
    return MakeError(
        absl::StatusCode::kInvalidArgument, code,
        absl::StrCat("path is ", path.size(), " bytes long; the limit is ", kMaxPathBytes),
        {{"bytes", path.size()}});
  }
  if (path.empty() || path.front() != '/') {
    return MakeError(absl::StatusCode::kInvalidArgument, code,
                     absl::StrCat("path \"", path, "\" is not absolute"), {{"path", path}});
  }
  return absl::OkStatus();
}

bool HasDotDot(absl::string_view path) {
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part == "..") return true;
  }
  return false;
}

bool IsInside(absl::string_view path, absl::string_view root) {
  if (root == "/") return !path.empty() && path.front() == '/';
  if (path.size() < root.size() || path.substr(0, root.size()) != root) return false;
  return path.size() == root.size() || path[root.size()] == '/';
}

std::string NormalizePath(absl::string_view path) {
  const bool absolute = !path.empty() && path.front() == '/';
  std::string out;
  out.reserve(path.size() + 1);
  for (absl::string_view part : absl::StrSplit(path, '/', absl::SkipEmpty())) {
    if (part == ".") continue;
    if (absolute || !out.empty()) out.push_back('/');
    out.append(part.data(), part.size());
  }
  if (out.empty()) return absolute ? "/" : ".";
  return out;
}

std::string BaseName(absl::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  size_t slash = path.rfind('/');
  return std::string(slash == absl::string_view::npos ? path : path.substr(slash + 1));
}

std::string ParentPath(absl::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == 0 || slash == absl::string_view::npos ? std::string("/")
                                                        : std::string(path.substr(0, slash));
}

std::string JoinPath(absl::string_view dir, absl::string_view rest) {
  if (rest.empty()) return std::string(dir);
  if (dir.empty()) return std::string(rest);
  if (dir.back() == '/') return absl::StrCat(dir, rest);
  return absl::StrCat(dir, "/", rest);
}

}  // namespace np
