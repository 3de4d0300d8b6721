// The launcher's side of core/mount_pins.h: each bind source of a container
// plan opened once, after the plan's checks, and held until the spawn ends,
// so what the runtime mounts is what np-exec checked.
//
// A source is opened with O_PATH and the kernel's name for what was opened
// (/proc/self/fd) must be the path np-exec checked, a real path: anything
// else (a link on the way, a rename) is a swap, refused with
// `isolation-mount-source-unstable`. Touches the filesystem.
#ifndef NP_EXEC_LAUNCHER_SOURCE_PINS_H_
#define NP_EXEC_LAUNCHER_SOURCE_PINS_H_

#include <sys/stat.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/mount_pins.h"
#include "core/protected_paths.h"
#include "core/runtime.h"
#include "core/settings.h"
#include "launcher/state/nofollow_path.h"

namespace np {

class SourcePins {
 public:
  // `keep_descriptors`: the runtime binds descriptors (bubblewrap on the run
  // path), so each stays open until this object is gone; otherwise only the
  // identity is kept.
  explicit SourcePins(bool keep_descriptors) : keep_(keep_descriptors) {}
  ~SourcePins();
  SourcePins(const SourcePins&) = delete;
  SourcePins& operator=(const SourcePins&) = delete;

  // Each source is opened once, however often the plan asks; with
  // descriptors, each call hands out a descriptor of its own (a duplicate:
  // bubblewrap closes what it binds), closed with this object. Codes:
  // `isolation-mount-source-missing`, `isolation-mount-source-unstable`.
  absl::StatusOr<SourcePin> Pin(const std::string& source);

  // Pins `source` to the descriptor `fd` np-exec already holds (the
  // project's folder, its `.nubos-pilot`, the config file it read: the
  // spawn's one look), so a later Pin of it binds what was judged instead of
  // opening the path again. The same check as Pin's: the kernel's name for
  // `fd` must be `source`. `fd` is duplicated, not taken.
  absl::Status Adopt(const std::string& source, int fd);

  // Sources below `root` are opened from then on through `fd` (the opened
  // project folder, duplicated), one component at a time and never through a
  // link, so a folder swapped in at `root` while np-exec pins is never what
  // is pinned: what is pinned is the node at that name below the held
  // folder. A folder on the way is opened once for every source below it.
  // Codes: Pin's.
  absl::Status ReadBelow(const std::string& root, int fd);

  // Pin, for SpawnFacts::pin; valid while this object lives.
  PinSourceFn AsFunction();

  // What the descriptor `fd` this object handed out was opened as (its
  // device, inode and type, from the open's own stat); nullopt for any other.
  std::optional<SourcePin> HandedAs(int fd) const;

 private:
  SourcePin Handed(const SourcePin& pin, bool first);

  // The descriptor of a source, with its stat in `st`: below `root_` through
  // `root_fd_`, else by its path. -1 with errno set when it cannot be opened
  // or read, or is a link.
  int OpenSource(const std::string& source, struct stat* st);
  bool Below(const std::string& source) const;  // Read through root_fd_.

  bool keep_;
  std::string root_;
  int root_fd_ = -1;
  std::optional<FoldersBelow> folders_;  // Below root_fd_.
  std::map<std::string, SourcePin> pinned_;
  std::map<int, SourcePin> by_fd_;  // Every descriptor handed out.
  std::vector<int> handed_;
};

// Adopts the spawn's one look at the project (settings.h): its folder, its
// `.nubos-pilot/` and the config file that was read, each as the source of
// its bind; every other source below the project is read through its folder
// (ReadBelow). Nothing outside a project. Codes: Adopt's.
absl::Status AdoptProjectSnapshot(const Settings& settings, SourcePins& pins);

// A printed plan's placeholders, once sandbox-exec has made them
// (ProtectedPlaceholders::Create, whose shared lock keeps them until the spawn
// ends; the plan could not pin them, they did not exist yet): each read-only
// placeholder bind of `binds` pinned in `pins` and handed to `pinned` with
// its host source and its target inside (`project_mount`: the project's), for
// the runtime's driver to pin in the printed argv
// (RuntimeDriver::PinPrintedPlaceholders). Codes: Pin's, `pinned`'s.
using PinnedPlaceholderFn = std::function<absl::Status(
    const std::string& source, const std::string& target, const SourcePin& pin)>;
absl::Status ForEachPinnedPlaceholder(const std::vector<ProtectedBind>& binds,
                                      const std::string& project_real,
                                      const std::string& project_mount, SourcePins& pins,
                                      const PinnedPlaceholderFn& pinned);

// `spawn-failed`: the printed argv lacks `what` (a placeholder's bind, the
// entry point's mount-check); nothing ran.
absl::Status PrintedArgvLacks(absl::string_view what);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_SOURCE_PINS_H_
