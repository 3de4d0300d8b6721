// Finding the project and reading its config file.
//
// The project root is the nearest ancestor of the working directory that holds
// a `.nubos-pilot/` directory (nubos-pilot's findProjectRoot). The config file
// is read with one open and one read, is capped in size and nesting, and a
// missing or empty file means "no settings". Reads the filesystem; never spawns
// and never reads the environment.
#ifndef NP_EXEC_CORE_CONFIG_FILE_H_
#define NP_EXEC_CORE_CONFIG_FILE_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace np {

// Larger config files are refused (`config-too-large`), so a hostile file
// cannot make every spawn slow or exhaust memory.
inline constexpr size_t kMaxConfigBytes = 1 << 20;
// Deeper JSON is refused (`config-invalid-json`) before it reaches the parser.
inline constexpr int kMaxConfigDepth = 64;

// `not-in-project`, started from `cwd`.
absl::Status NotInProject(absl::string_view cwd);

// Every directory at or above `path` (absolute, normalised) that holds a
// `.nubos-pilot/` directory, nearest first; lstat, so a `.nubos-pilot` link
// does not count. What a sandboxed program of one of them can rename.
std::vector<std::string> ProjectsAtOrAbove(absl::string_view path);

// `<root>/.nubos-pilot/config.json`.
std::string ProjectConfigPath(absl::string_view project_root);

// Reads a JSON config file. A missing file, an empty or whitespace-only one
// gives an empty object; a leading UTF-8 BOM is ignored. Errors:
// `config-unreadable` (including a dangling symlink), `config-not-a-file`
// (details.kind is "directory" or "other"), `config-too-large`,
// `config-invalid-json`, `config-invalid-shape` (not an object). Details carry
// only the file's base name.
absl::StatusOr<nlohmann::json> ReadConfigFile(absl::string_view path);

// Reads and parses the config file open at `fd` (closed here) as
// ReadConfigFile does once it opened the file; `name` names it in errors.
absl::StatusOr<nlohmann::json> ReadConfigDescriptor(int fd, absl::string_view name);
// The same, leaving `fd` open for the caller.
absl::StatusOr<nlohmann::json> ReadConfigOpen(int fd, absl::string_view name);

// `config-not-a-file` for a project's `.nubos-pilot` or `config.json`
// (`name`) that is a symbolic link: either could point the config anywhere
// (project_location.h reads it through the opened folder, never a link).
absl::Status ProjectConfigLinkError(absl::string_view name);

// Parses config text (as ReadConfigFile does after reading). `name` is used in
// error details.
absl::StatusOr<nlohmann::json> ParseConfigText(absl::string_view text, absl::string_view name);

}  // namespace np

#endif  // NP_EXEC_CORE_CONFIG_FILE_H_
