#include "launcher/runtime/trusted_binary.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/errors.h"
#include "core/paths.h"

namespace np {
namespace {

absl::Status Untrusted(absl::string_view path, absl::string_view why) {
  return MakeError(absl::StatusCode::kFailedPrecondition, "isolation-runtime-untrusted",
                   absl::StrCat(path, " is not a trusted location: ", why),
                   {{"path", path}, {"why", why}});
}

std::string Octal(mode_t mode) {
  char text[8];
  snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

std::string Parent(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == 0 ? std::string("/") : path.substr(0, slash);
}

// The directory chain of `dir` up to /: each owned by root and not writable
// by group or others, except that an ancestor may be world-writable with the
// sticky bit (`own_dir_strict` applies the stricter rule to `dir` itself).
absl::StatusOr<std::string> CheckDirectoryChain(const std::string& dir, bool own_dir_strict,
                                                const OwnerProbe& probe) {
  std::vector<std::string> sticky;
  std::string current = dir;
  bool first = true;
  while (true) {
    std::optional<OwnerFacts> facts = probe(current);
    if (!facts.has_value()) return Untrusted(current, "cannot be examined");
    if (!S_ISDIR(facts->mode)) return Untrusted(current, "is not a directory");
    if (facts->uid != 0) {
      return Untrusted(current, absl::StrCat("directory owned by uid ", facts->uid, ", not root"));
    }
    if ((facts->mode & (S_IWGRP | S_IWOTH)) != 0) {
      if ((facts->mode & S_ISVTX) == 0 || (first && own_dir_strict)) {
        return Untrusted(current, absl::StrCat("directory writable by group or others (mode ",
                                               Octal(facts->mode), ")"));
      }
      sticky.push_back(current);
    }
    if (current == "/") break;
    current = Parent(current);
    first = false;
  }
  std::string why = "every directory up to / is owned by root and not writable by group or others";
  if (!sticky.empty()) {
    absl::StrAppend(&why, " but for sticky ", absl::StrJoin(sticky, ", "),
                    " (whose root-owned entries nobody else can rename)");
  }
  return why;
}

std::optional<std::string> RealPath(const std::string& path) {
  char real[PATH_MAX];
  if (realpath(path.c_str(), real) == nullptr) return std::nullopt;
  return std::string(real);
}

}  // namespace

std::optional<OwnerFacts> LstatOwner(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return std::nullopt;
  return OwnerFacts{st.st_uid, st.st_mode};
}

absl::StatusOr<std::string> CheckTrustedLocation(const std::string& real_path,
                                                 absl::string_view project_root,
                                                 const OwnerProbe& probe) {
  if (real_path.empty() || real_path.front() != '/' || real_path == "/") {
    return Untrusted(real_path, "not an absolute file path");
  }
  // The project is writable from inside the sandbox, whoever owns its files.
  if (!project_root.empty() && IsInside(real_path, project_root)) {
    return Untrusted(real_path, absl::StrCat("inside the project ", project_root,
                                             ", which the sandboxed program can write"));
  }
  std::optional<OwnerFacts> file = probe(real_path);
  if (!file.has_value()) return Untrusted(real_path, "cannot be examined");
  if (!S_ISREG(file->mode)) return Untrusted(real_path, "not a regular file");
  if (file->uid != 0) {
    return Untrusted(real_path, absl::StrCat("owned by uid ", file->uid, ", not root"));
  }
  if ((file->mode & (S_IWGRP | S_IWOTH)) != 0) {
    return Untrusted(real_path,
                     absl::StrCat("writable by group or others (mode ", Octal(file->mode), ")"));
  }
  absl::StatusOr<std::string> chain = CheckDirectoryChain(Parent(real_path), true, probe);
  if (!chain.ok()) return chain.status();
  return absl::StrCat("owned by root, not writable by group or others; ", *chain);
}

RuntimeBinary FindTrustedBinary(absl::string_view name, absl::string_view path_list,
                                absl::string_view project_root, const FileId& self,
                                const FileProbe& file_probe, const OwnerProbe& owner_probe) {
  RuntimeBinary found;
  for (absl::string_view dir : absl::StrSplit(path_list, ':')) {
    if (dir.empty() || dir.front() != '/') continue;  // Never the working directory.
    if (dir.find('\0') != absl::string_view::npos || dir.size() > kMaxPathBytes) continue;
    const std::string candidate = JoinPath(dir, name);
    FileFacts facts = file_probe(candidate, NoteCheck::kRead);
    if (!facts.exists || !facts.executable) continue;
    if (facts.id == self || facts.np_exec) continue;  // A shim, not the runtime.
    std::optional<std::string> real = RealPath(candidate);
    if (!real.has_value()) continue;
    absl::StatusOr<std::string> trusted = CheckTrustedLocation(*real, project_root, owner_probe);
    if (trusted.ok()) {
      found.path = *real;
      found.trusted_because = *trusted;
      return found;
    }
    found.skipped.push_back(absl::StrCat(candidate, ": ", trusted.status().message()));
  }
  return found;
}

absl::Status RuntimeUntrusted(absl::string_view name, const std::vector<std::string>& skipped) {
  return MakeError(
      absl::StatusCode::kFailedPrecondition, "isolation-runtime-untrusted",
      absl::StrCat("every ", name, " on PATH is in an untrusted location (",
                   absl::StrJoin(skipped, "; "),
                   "); np-exec runs a runtime only from root-owned directories nobody else can "
                   "write, outside the project. Install it there, or put such a directory on PATH"),
      {{"runtime", name}, {"skipped", skipped}});
}

std::string TrustedPathList(absl::string_view path_list, absl::string_view project_root,
                            const OwnerProbe& probe) {
  std::vector<std::string> kept;
  for (absl::string_view entry : absl::StrSplit(path_list, ':')) {
    if (entry.empty() || entry.front() != '/' || entry.find('\0') != absl::string_view::npos) {
      continue;
    }
    std::optional<std::string> real = RealPath(std::string(entry));
    if (!real.has_value()) continue;
    if (!project_root.empty() && IsInside(*real, project_root)) continue;
    if (!CheckDirectoryChain(*real, true, probe).ok()) continue;
    kept.emplace_back(entry);
  }
  return absl::StrJoin(kept, ":");
}

}  // namespace np
