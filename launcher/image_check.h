// Whether the configured image is there for a spawn: the check `status` and
// `doctor` gate on, and the error a spawn refused for a missing image gets.
// Asks the runtime's driver (an engine API request or `image inspect`).
#ifndef NP_EXEC_LAUNCHER_IMAGE_CHECK_H_
#define NP_EXEC_LAUNCHER_IMAGE_CHECK_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/settings.h"
#include "launcher/host.h"
#include "launcher/runtime/driver.h"

namespace np {

// `isolation-image-missing`: `image` is not present and np-exec does not pull
// it (pull "never"); the message says how to get it.
absl::Status ImageMissingError(absl::string_view image, absl::string_view runtime);

struct ImageCheck {
  bool uses_image = false;      // The runtime runs images (not bubblewrap).
  std::optional<bool> present;  // nullopt: the runtime is unusable or did not say.
  // isolation-image-missing when a spawn here would be refused for it: the
  // container tier, the image absent and pull "never". OK otherwise (with
  // pull "missing" the runtime pulls it at the spawn).
  absl::Status status;
};

// Checks the configured image on `driver` (probed as `probe`).
ImageCheck CheckConfiguredImage(const Settings& settings, const RuntimeDriver& driver,
                                const Endpoint& endpoint, const ProbeResult& probe,
                                const HostFacts& host);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_IMAGE_CHECK_H_
