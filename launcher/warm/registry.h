// Where the warm sandboxes of one user are found: the state store's `warm/`
// directory (0700, the caller's), one directory per sandbox,
// "<key's first 32 hex digits>-<8 random hex digits>", holding
//   ctl.sock   the holder's listening socket (launcher/warm/holder.h)
//   lock       flock'd exclusively by the client a spawn runs for, and by the
//              holder when it ends an idle sandbox: one spawn at a time
//   info.json  {key, project, runtime, program, started, idle_seconds},
//              flock'd shared by the sandbox's holder for as long as it lives
//   runtime.log  what the sandbox's runtime wrote on stderr
// and the rendezvous directories of spawns that start a sandbox, "rv-...",
// each beside its lock "rv-....lock", flock'd shared by the spawn and by the
// sandbox's holder until its keeper has connected. Only
// np-exec's own processes of this user reach any of it; the sandboxes never
// do. Touches the filesystem and sockets.
#ifndef NP_EXEC_LAUNCHER_WARM_REGISTRY_H_
#define NP_EXEC_LAUNCHER_WARM_REGISTRY_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/warm.h"
#include "launcher/state/state_store.h"
#include "launcher/warm/channel.h"
#include "nlohmann/json.hpp"

namespace np::warm {

inline constexpr absl::string_view kWarmDir = "warm";
inline constexpr absl::string_view kControlSocket = "ctl.sock";
inline constexpr absl::string_view kSlotLock = "lock";
inline constexpr absl::string_view kSlotInfo = "info.json";
// In info.json: its holder holds a shared lock on it (NewSlot::alive).
inline constexpr absl::string_view kHolderLockKey = "holder_lock";
// The runtime's stderr, told to the first spawn if the sandbox never came up.
inline constexpr absl::string_view kRuntimeLog = "runtime.log";

// One warm sandbox, claimed for one spawn: its directory, the lock held, and
// the connection to its holder.
struct Slot {
  std::string name;
  OwnedFd dir;
  OwnedFd lock;
  OwnedFd connection;
};

// The store's warm/ directory. Codes: the store's.
absl::StatusOr<OwnedFd> OpenWarmDir(const StateStore& store);

// The absolute path of a fresh rendezvous directory below warm/ for a
// spawn's plan (SpawnFacts::warm_dir), not made yet: only a spawn that
// starts a sandbox makes it (MakeRendezvousDir), one handed to a running
// sandbox never needs it. Codes: the store's.
absl::StatusOr<std::string> NameRendezvousDir(const StateStore& store);
// Makes that directory (private) in the open warm/ directory, and its lock,
// held shared: the returned descriptor. First removes the directories no one holds
// any more (their spawn and its holder are gone). Code:
// `state-store-unwritable`.
absl::StatusOr<OwnedFd> MakeRendezvousDir(int warm_dir, const std::string& path);
// Removes it (and a socket left in it) and its lock file.
void RemoveRendezvousDir(const std::string& path);
// The lock file beside the rendezvous directory `path`, which its spawn and
// then its holder hold shared.
std::string RendezvousLockPath(const std::string& path);

// A spawn's rendezvous directory, removed when the spawn ends, unless a
// holder took it over (Abandon): the holder removes it as soon as its keeper
// has connected, and until then holds its lock, so no spawn's clean-up takes
// it from under a sandbox still coming up.
class RendezvousDir {
 public:
  explicit RendezvousDir(std::string path) : path_(std::move(path)) {}
  RendezvousDir(const RendezvousDir&) = delete;
  RendezvousDir& operator=(const RendezvousDir&) = delete;
  ~RendezvousDir() { RemoveRendezvousDir(path_); }
  const std::string& path() const { return path_; }
  // The lock MakeRendezvousDir took, held for as long as this spawn runs.
  void Hold(OwnedFd lock) { lock_ = std::move(lock); }
  // The holder forked from this spawn keeps the directory (and its own copy
  // of the lock): this spawn's end leaves both.
  void Abandon() { path_.clear(); }

 private:
  std::string path_;
  OwnedFd lock_;
};

// The first sandbox of `key` that is idle and whose holder answers, claimed;
// nullopt when there is none. Directories of holders that are gone are
// removed on the way.
std::optional<Slot> ClaimIdle(int warm_dir, const std::string& key);

// A new sandbox's directory for `key`, claimed, with its listening socket
// (`listener`) and info.json written, and held with a shared lock (`alive`)
// for as long as the sandbox's holder lives: the holder inherits it, and a
// slot whose info.json no one holds is a dead holder's. Codes:
// `state-store-unwritable`, `warm-channel`.
struct NewSlot {
  Slot slot;
  OwnedFd listener;
  OwnedFd alive;
};
absl::StatusOr<NewSlot> MakeSlot(int warm_dir, const std::string& key, const nlohmann::json& info);

// Removes a slot's directory (its holder is ending or gone).
void RemoveSlot(int warm_dir, const std::string& name);

// Every warm sandbox of this user: its info, and whether a spawn runs in it.
// A slot whose holder is gone (killed) is no sandbox: removed, not listed.
std::vector<nlohmann::json> ListSandboxes(int warm_dir);

// Asks every warm sandbox (of `project`, when not empty) to end; the number asked.
int StopSandboxes(int warm_dir, const std::string& project);

}  // namespace np::warm

#endif  // NP_EXEC_LAUNCHER_WARM_REGISTRY_H_
