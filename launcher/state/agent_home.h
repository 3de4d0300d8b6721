// The persistent agent home (`isolation.container.home: "persistent"`): one
// directory per project in the operator state store, mounted as the
// sandbox's HOME so an agent's login and settings survive between spawns of
// that project and never reach another project.
//
// `<store>/homes/<FileStem(project key)>` (state_store.h: the key every
// worktree of one repository shares), mode 0700, the caller's. The program
// inside can write anything in it, links to host files included, so np-exec
// never follows a link below it: the home is created as a fresh private
// directory, seeded there (`home_seed`: files of the operator's HOME, opened
// without following links and copied, never mounted) and renamed into place,
// so nothing is ever written into a home a sandbox has seen; reset renames it
// away and removes it with openat/unlinkat, never following a link; the size
// walk does not follow links either. A spawn holds a shared lock on the home
// for its lifetime, so reset refuses (`agent-home-in-use`) while one runs.
// Touches the filesystem.
#ifndef NP_EXEC_LAUNCHER_STATE_AGENT_HOME_H_
#define NP_EXEC_LAUNCHER_STATE_AGENT_HOME_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/settings.h"
#include "launcher/state/state_store.h"

namespace np {

// The host path of the home of the project whose store key is `key`.
std::string AgentHomePath(absl::string_view store_dir, absl::string_view key);

// What a new home is seeded from.
struct HomeSeed {
  std::string operator_home;  // The caller's HOME (seeds are relative to it).
  std::string project_real;   // Never copied from, nor a directory holding it.
  std::vector<std::string> paths;
};

// A spawn's hold on its home: created (and seeded) when missing, locked
// shared until destroyed.
class AgentHomeLease {
 public:
  // Codes: `agent-home-invalid` (a link, a file or another user's directory
  // in the home's place), `agent-home-seed-refused` (a seed that leads out of
  // the operator's HOME, into the project or the store, is not a regular file
  // or directory, or is too large), `state-store-unwritable`.
  static absl::StatusOr<AgentHomeLease> Acquire(const StateStore& store, absl::string_view key,
                                                const HomeSeed& seed);

  AgentHomeLease(AgentHomeLease&& other) noexcept;
  AgentHomeLease& operator=(AgentHomeLease&& other) noexcept;
  AgentHomeLease(const AgentHomeLease&) = delete;
  AgentHomeLease& operator=(const AgentHomeLease&) = delete;
  ~AgentHomeLease();

  const std::string& path() const { return path_; }
  // Seeds copied when this lease created the home; empty otherwise.
  const std::vector<std::string>& seeded() const { return seeded_; }

 private:
  AgentHomeLease(std::string path, int lock_fd) : path_(std::move(path)), lock_fd_(lock_fd) {}

  std::string path_;
  int lock_fd_ = -1;
  std::vector<std::string> seeded_;
};

struct AgentHomeInfo {
  std::string path;
  bool exists = false;
  uint64_t bytes = 0;  // Disk usage (st_blocks), links not followed.
};

// Where the home is and how large, for `doctor` and `home`. Codes:
// `agent-home-invalid`.
absl::StatusOr<AgentHomeInfo> InspectAgentHome(const StateStore& store, absl::string_view key);

// `np-exec home --reset`: removes the home (the next spawn creates and
// seeds a new one). Returns whether there was one. Codes: `agent-home-in-use`
// (a spawn holds it), `agent-home-invalid`, `state-store-unwritable`.
absl::StatusOr<bool> ResetAgentHome(const StateStore& store, absl::string_view key);

// For the run path and sandbox-exec: when the settings ask for a persistent
// home, opens the store and acquires the project's home; nullopt otherwise.
absl::StatusOr<std::optional<AgentHomeLease>> AcquireHomeForSpawn(const Settings& settings,
                                                                  absl::string_view xdg_state_home,
                                                                  absl::string_view home,
                                                                  uid_t uid);

// The home's host path for a plan (nothing is created); "" when the settings
// ask for none or the store has no place.
std::string PlannedAgentHome(const Settings& settings, absl::string_view xdg_state_home,
                             absl::string_view home);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_STATE_AGENT_HOME_H_
