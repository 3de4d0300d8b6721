// Finding the real program behind a shim.
//
// When np-exec is reached as `node` (a symlink in a shim directory), the real
// node is the first match on PATH that is not np-exec. np-exec itself is known
// by device and inode, never by name, so a symlinked PATH entry, a second shim
// directory or a hard link of np-exec under another name cannot fool it; any
// other np-exec (a copy, a second installation, another version, each with
// its own inode) is known by content, the ELF note it carries
// (shim/elf_note.h). Every np-exec on PATH is skipped; a PATH whose every
// match is np-exec has nothing real behind the shim (`shim-no-program`).
// Empty and relative PATH entries are skipped: resolving a program against the
// working directory would let a cloned repository plant its own `node`.
// The filesystem is reached only through the injected FileProbe, so this is
// pure and unit-tested with a table of fake files.
#ifndef NP_EXEC_SHIM_FIND_REAL_PROGRAM_H_
#define NP_EXEC_SHIM_FIND_REAL_PROGRAM_H_

#include <sys/types.h>

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace np {

struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const FileId& other) const { return dev == other.dev && ino == other.ino; }
};

struct FileFacts {
  bool exists = false;
  bool regular = false;     // A regular file after following symlinks.
  bool executable = false;  // access(X_OK) for the caller.
  FileId id;
  bool np_exec = false;  // An executable that carries np-exec's ELF note.
};

// Whether a probe reads the file's ELF note (FileFacts::np_exec): only a
// lookup along PATH asks, where a copy of np-exec is a shim to skip.
enum class NoteCheck { kSkip, kRead };

// Answers what a path is; the real one is StatFile.
using FileProbe = std::function<FileFacts(const std::string& path, NoteCheck note)>;

// stat(2) + access(2), and with kRead, for an executable regular file, the
// bounded read of its ELF program headers that finds np-exec's note.
FileFacts StatFile(const std::string& path, NoteCheck note = NoteCheck::kRead);

// Resolves `name` as exec would, skipping np-exec: `self` by identity and any
// file the probe reports as np_exec. A name with a slash is taken as a path
// (relative to `cwd`) and names exactly one file, so only `self` is refused
// there (another np-exec named by its path is a program like any other).
// Codes: `program-not-found` (NotFound), `program-not-executable`
// (PermissionDenied, when only non-executable matches exist),
// `shim-no-program` (NotFound: every match of the name on PATH is np-exec),
// `recursive-invocation` (a path naming `self`), `invalid-program` (empty,
// NUL, too long).
absl::StatusOr<std::string> FindRealProgram(absl::string_view name, absl::string_view path_list,
                                            absl::string_view cwd, const FileId& self,
                                            const FileProbe& probe);

}  // namespace np

#endif  // NP_EXEC_SHIM_FIND_REAL_PROGRAM_H_
