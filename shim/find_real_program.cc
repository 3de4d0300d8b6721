#include "shim/find_real_program.h"

#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/errors.h"
#include "core/paths.h"
#include "shim/elf_note.h"

namespace np {
namespace {

absl::Status NotFound(absl::string_view name, absl::string_view where) {
  return MakeError(absl::StatusCode::kNotFound, "program-not-found",
                   absl::StrCat("program \"", name, "\" not found ", where), {{"program", name}});
}

absl::Status NotExecutable(absl::string_view name, absl::string_view path) {
  return MakeError(
      absl::StatusCode::kPermissionDenied, "program-not-executable",
      absl::StrCat("program \"", name, "\" was found at ", path, " but is not executable"),
      {{"program", name}, {"path", path}});
}

// Only np-exec answers to the name on PATH: a shim with nothing real behind
// it. Nothing is found to run, so it is a 127 (exec's ENOENT), not a loop.
absl::Status NothingBehindShim(absl::string_view name) {
  return MakeError(
      absl::StatusCode::kNotFound, "shim-no-program",
      absl::StrCat("\"", name,
                   "\" has nothing real behind it: every match on PATH is np-exec "
                   "(a shim, a link to it or another copy). Install the real ",
                   name, " on PATH, or remove the shim (np-exec shims remove DIR ", name, ")"),
      {{"program", name}});
}

absl::Status Recursive(absl::string_view name) {
  return MakeError(absl::StatusCode::kFailedPrecondition, "recursive-invocation",
                   absl::StrCat("\"", name,
                                "\" is this np-exec itself, so there is no real program to "
                                "run. Recursive invocation of np-exec refused"),
                   {{"program", name}});
}

}  // namespace

FileFacts StatFile(const std::string& path, NoteCheck note) {
  FileFacts facts;
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return facts;
  facts.exists = true;
  facts.regular = S_ISREG(st.st_mode);
  facts.executable = facts.regular && access(path.c_str(), X_OK) == 0;
  facts.id = FileId{st.st_dev, st.st_ino};
  // Only an executable can be what a shim would run; the note costs a few
  // bounded reads, and only for a file that exists under the name looked up.
  facts.np_exec = note == NoteCheck::kRead && facts.executable && HasNpExecNote(path);
  return facts;
}

absl::StatusOr<std::string> FindRealProgram(absl::string_view name, absl::string_view path_list,
                                            absl::string_view cwd, const FileId& self,
                                            const FileProbe& probe) {
  if (name.empty() || name.find('\0') != absl::string_view::npos || name.size() > kMaxPathBytes) {
    return MakeError(absl::StatusCode::kInvalidArgument, "invalid-program",
                     "the program name is empty, too long or contains a NUL byte");
  }
  if (name.find('/') != absl::string_view::npos) {
    std::string path = name.front() == '/' ? std::string(name) : JoinPath(cwd, name);
    if (path.find('\0') != std::string::npos || path.size() > kMaxPathBytes) {
      return MakeError(absl::StatusCode::kInvalidArgument, "invalid-program",
                       "the program path is too long or contains a NUL byte");
    }
    // One file, and only `self` is refused there: its note is not read.
    FileFacts facts = probe(path, NoteCheck::kSkip);
    if (!facts.exists) return NotFound(name, "(no such file)");
    if (facts.id == self) return Recursive(name);
    if (!facts.executable) return NotExecutable(name, path);
    return std::string(name);
  }
  std::string not_executable;
  bool saw_self = false;
  for (absl::string_view dir : absl::StrSplit(path_list, ':')) {
    if (dir.empty() || dir.front() != '/') continue;  // Never the working directory.
    // A NUL byte would make the probed path differ from the one returned.
    if (dir.find('\0') != absl::string_view::npos || dir.size() > kMaxPathBytes) continue;
    std::string candidate = JoinPath(dir, name);
    FileFacts facts = probe(candidate, NoteCheck::kRead);
    if (!facts.exists) continue;
    if (facts.id == self || facts.np_exec) {
      saw_self = true;
      continue;
    }
    if (facts.executable) return candidate;
    if (not_executable.empty() && facts.regular) not_executable = candidate;
  }
  if (!not_executable.empty()) return NotExecutable(name, not_executable);
  if (saw_self) return NothingBehindShim(name);
  return NotFound(name, "on PATH");
}

}  // namespace np
