#include "launcher/shim_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/errors.h"
#include "core/paths.h"
#include "shim/elf_note.h"
#include "shim/find_real_program.h"

namespace np {
namespace {

// The absolute entries of PATH, each once, in order: the ones a shim's
// lookup reads (find_real_program.h skips the rest).
std::vector<std::string> AbsolutePathEntries(absl::string_view path_list) {
  std::vector<std::string> entries;
  for (absl::string_view dir : absl::StrSplit(path_list, ':')) {
    if (dir.empty() || dir.front() != '/' || dir.find('\0') != absl::string_view::npos) continue;
    std::string entry = NormalizePath(dir);
    if (std::find(entries.begin(), entries.end(), entry) == entries.end()) {
      entries.push_back(std::move(entry));
    }
  }
  return entries;
}

}  // namespace

bool IsShim(const std::string& path, const FileId& self) {
  if (!ValidateShimName(BaseName(path)).ok() || path.find('\0') != std::string::npos) return false;
  struct stat link;
  if (lstat(path.c_str(), &link) != 0) return false;
  struct stat target;
  if (stat(path.c_str(), &target) != 0 || !S_ISREG(target.st_mode)) return false;
  if (FileId{target.st_dev, target.st_ino} == self) return true;
  // A link to another np-exec (a second installation) is known by its note.
  return S_ISLNK(link.st_mode) && HasNpExecNote(path);
}

absl::Status ValidateShimName(absl::string_view name) {
  if (name.empty() || name.find('/') != absl::string_view::npos ||
      name.find('\0') != absl::string_view::npos || name == "np-exec" || name == "." ||
      name == "..") {
    return MakeError(absl::StatusCode::kInvalidArgument, "shim-bad-name",
                     absl::StrCat("\"", name, "\" cannot be a shim name"), {{"name", name}});
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Shim>> ListShims(const std::string& dir, const HostFacts& host) {
  DIR* handle = dir.find('\0') == std::string::npos ? opendir(dir.c_str()) : nullptr;
  if (handle == nullptr) {
    return MakeError(absl::StatusCode::kFailedPrecondition, "shim-dir-unreadable",
                     absl::StrCat("cannot read the shim directory ", dir, ": ",
                                  strerror(errno == 0 ? EINVAL : errno)),
                     {{"dir", dir}});
  }
  std::vector<Shim> shims;
  while (dirent* entry = readdir(handle)) {
    const std::string name = entry->d_name;
    if (entry->d_type != DT_LNK && entry->d_type != DT_REG && entry->d_type != DT_UNKNOWN) {
      continue;
    }
    Shim shim;
    shim.path = JoinPath(dir, name);
    if (!IsShim(shim.path, host.self)) continue;
    shim.dir = dir;
    shim.name = name;
    shim.program = FindRealProgram(name, host.path, host.cwd, host.self, StatFile);
    shims.push_back(std::move(shim));
  }
  closedir(handle);
  std::sort(shims.begin(), shims.end(),
            [](const Shim& a, const Shim& b) { return a.name < b.name; });
  return shims;
}

std::vector<std::string> ShimDirsOnPath(const HostFacts& host) {
  std::vector<std::string> dirs;
  for (const std::string& dir : AbsolutePathEntries(host.path)) {
    DIR* handle = opendir(dir.c_str());
    if (handle == nullptr) continue;
    bool holds_shim = false;
    while (dirent* entry = readdir(handle)) {
      if (IsShim(JoinPath(dir, entry->d_name), host.self)) {
        holds_shim = true;
        break;
      }
    }
    closedir(handle);
    if (holds_shim) dirs.push_back(dir);
  }
  return dirs;
}

std::optional<PathMatch> FirstOnPath(const std::string& name, const HostFacts& host) {
  for (const std::string& dir : AbsolutePathEntries(host.path)) {
    const std::string path = JoinPath(dir, name);
    const FileFacts facts = StatFile(path);
    if (!facts.executable) continue;
    return PathMatch{dir, path, IsShim(path, host.self)};
  }
  return std::nullopt;
}

std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace np
