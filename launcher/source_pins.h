// The launcher's side of core/mount_pins.h: each bind source of a container
// plan opened once, after the plan's checks, and held until the spawn ends,
// so what the runtime mounts is what np-exec checked (issue 15 item 2).
//
// A source is opened with O_PATH and the kernel's name for what was opened
// (/proc/self/fd) must be the path np-exec checked. When it is not, a link is
// on the way: inside a project (where a sandboxed program can rename and
// link) that is a swap, refused with `isolation-mount-source-unstable`;
// elsewhere it is the operator's own link (a HOME under a linked /home), and
// what it resolves to is pinned. Touches the filesystem.
#ifndef NP_EXEC_LAUNCHER_SOURCE_PINS_H_
#define NP_EXEC_LAUNCHER_SOURCE_PINS_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "core/mount_pins.h"

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

  // Each source is opened once, however often the plan asks. Codes:
  // `isolation-mount-source-missing`, `isolation-mount-source-unstable`.
  absl::StatusOr<SourcePin> Pin(const std::string& source);

  // Pin, for SpawnFacts::pin; valid while this object lives.
  PinSourceFn AsFunction();

 private:
  bool keep_;
  std::map<std::string, SourcePin> pinned_;
};

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_SOURCE_PINS_H_
