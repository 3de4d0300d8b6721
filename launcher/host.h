// Host facts, read once at start-up and handed to core/ as plain values.
//
// This is the one place np-exec reads its environment, working directory,
// identity and terminals (conventions 5 and 6).
#ifndef NP_EXEC_LAUNCHER_HOST_H_
#define NP_EXEC_LAUNCHER_HOST_H_

#include <sys/types.h>

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/plan.h"
#include "core/project_location.h"
#include "core/settings.h"
#include "shim/find_real_program.h"

namespace np {

struct HostFacts {
  char** envp = nullptr;  // The environment np-exec was started with.
  std::string cwd;        // Real path of the working directory ("" if unreadable).
  std::string path;       // PATH.
  std::string home;       // HOME.
  std::string xdg_config_home;
  // XDG_RUNTIME_DIR: where the egress proxy's private directory goes.
  std::string xdg_runtime_dir;
  std::string env_tier;        // NP_EXEC_TIER.
  std::string docker_host;     // DOCKER_HOST.
  std::string container_host;  // CONTAINER_HOST (podman remote).
  std::string term;            // TERM.
  int depth = 0;               // NP_EXEC_DEPTH.
  // NP_EXEC_ENGINE_TIMEOUT_MS: how long an engine API request may take
  // (default kEngineTimeoutMs; 1 to 60000).
  int engine_timeout_ms = 2000;
  // NP_EXEC_GRACE_MS: how long the program may take to end after a
  // terminating signal before its sandbox is taken down (default
  // 10000; 100 to 600000).
  int grace_ms = 10000;
  pid_t exec_pid = 0;       // NP_EXEC_EXEC_PID.
  std::string exec_target;  // NP_EXEC_EXEC_TARGET.
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  bool stdin_tty = false;
  bool stdout_tty = false;
  // NP_EXEC_ERROR_FORMAT=json: errors and warnings as the JSON envelope
  // (otherwise plain text, unless a verb's --json asks; output.h).
  bool json_errors = false;
  FileId self;  // Device and inode of the running np-exec (/proc/self/exe).
  // The project the working directory is in, found once from the working
  // directory's descriptor (core/project_location.h) and held open: every
  // decision of this process about "the project" is about this folder.
  // `project_located` false (facts made by hand, in tests): found from `cwd`
  // when settings are loaded.
  bool project_located = false;
  absl::StatusOr<ProjectLocation> project = ProjectLocation();
};

// Environment variable names np-exec itself reads or sets.
// (The markers np-exec sets, kDepthVar and the like, are in core/plan.h.)
inline constexpr absl::string_view kTierVar = "NP_EXEC_TIER";
inline constexpr absl::string_view kErrorFormatVar = "NP_EXEC_ERROR_FORMAT";
// Past this many nested np-exec invocations, a chain of wrappers is assumed to
// be re-entering itself and is refused.
inline constexpr int kMaxDepth = 16;

HostFacts ReadHostFacts(char** envp);

// np-exec's own path, as /proc/self/exe names it ("... (deleted)" once the
// file is removed; "" when /proc cannot say): what shims link to, and what a
// container plan binds as the sandbox's entry point. Read when asked: the
// direct tier never needs it.
std::string SelfPath();

// The value of `name` in `envp`, or "" (with a null data()) when unset.
absl::string_view GetEnv(char** envp, absl::string_view name);

// $XDG_CONFIG_HOME/nubos-pilot/config.json, defaulting to ~/.config.
std::string OperatorConfigPath(const HostFacts& host);

// The settings of the project the working directory is in (or, outside any
// project, the operator floor and NP_EXEC_TIER alone): what every verb and
// the run path load.
absl::StatusOr<Settings> LoadHostSettings(const HostFacts& host);

// The real path of the project the working directory is in ("" outside any,
// or when it cannot be found): host.project's, for what needs only its name.
std::string HostProjectRoot(const HostFacts& host);

// The LD_PRELOAD interposer's real path where np-exec ships it: next to
// np-exec in a build tree, ../lib/np-exec/ when installed; "" if absent.
std::string InstalledInterposer();

// Field `field` of /proc/PID/stat as proc(5) numbers them (>= 3: the ones after
// the command name), read as a number; 0 when the process or field is gone.
unsigned long long ProcStatField(pid_t pid, int field);

// Start time of a process in clock ticks since boot (field 22).
unsigned long long ProcessStartTime(pid_t pid);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_HOST_H_
