// What shim directories hold: which entries are np-exec shims, and what
// real program each one reaches on PATH. For `shims list`, `shims remove`,
// `which` and doctor. Reads directories and stats files; runs nothing.
#ifndef NP_EXEC_LAUNCHER_SHIM_DIR_H_
#define NP_EXEC_LAUNCHER_SHIM_DIR_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "launcher/host.h"

namespace np {

// One np-exec shim: DIR/NAME, and the real program a spawn of it runs (the
// lookup's error when there is none: `shim-no-program` when only np-exec
// answers to the name, `program-not-found`, `program-not-executable`).
struct Shim {
  std::string dir;
  std::string name;
  std::string path;
  absl::StatusOr<std::string> program = std::string();
};

// A shim is a symbolic link that resolves to an np-exec (this one, by device
// and inode, or another installation, by its ELF note), or a hard link of
// this np-exec under another name. A copy of np-exec is not a shim: it may
// be an installation. Nor is anything named np-exec.
bool IsShim(const std::string& path, const FileId& self);

// `shim-bad-name` unless `name` can be a shim's file name (no slash, not
// empty, ".", ".." or "np-exec").
absl::Status ValidateShimName(absl::string_view name);

// The shims in `dir`, sorted by name, each resolved on the caller's PATH.
// Codes: `shim-dir-unreadable` (not a directory that can be read).
absl::StatusOr<std::vector<Shim>> ListShims(const std::string& dir, const HostFacts& host);

// The absolute PATH entries (in order, each once) that hold a shim.
std::vector<std::string> ShimDirsOnPath(const HostFacts& host);

// Where a shell would find `name` on PATH: the first absolute entry holding
// an executable of that name, whatever it is; nullopt when none does.
struct PathMatch {
  std::string dir;
  std::string path;
  bool shim = false;
};
std::optional<PathMatch> FirstOnPath(const std::string& name, const HostFacts& host);

// The directory part of an absolute path ("/" for "/x").
std::string DirOf(const std::string& path);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_SHIM_DIR_H_
