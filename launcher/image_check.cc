#include "launcher/image_check.h"

#include "absl/strings/str_cat.h"
#include "core/errors.h"

namespace np {

absl::Status ImageMissingError(absl::string_view image, absl::string_view runtime) {
  return MakeError(absl::StatusCode::kFailedPrecondition, "isolation-image-missing",
                   absl::StrCat("image \"", image,
                                "\" is not present locally and np-exec "
                                "does not pull unless asked. Get it with `",
                                runtime, " pull ", image,
                                "` (or build or import it), or set "
                                "isolation.container.pull to \"missing\""),
                   {{"image", image}});
}

ImageCheck CheckConfiguredImage(const Settings& settings, const RuntimeDriver& driver,
                                const Endpoint& endpoint, const ProbeResult& probe,
                                const HostFacts& host) {
  const ContainerConfig& config = settings.config.container;
  ImageCheck check;
  check.uses_image = TraitsOf(config.runtime).uses_image;
  if (!check.uses_image || !probe.available) return check;
  check.present = driver.ImagePresent(config.image, endpoint, host);
  if (settings.resolved.tier == Tier::kContainer && check.present == false &&
      !config.pull_missing) {
    check.status = ImageMissingError(config.image, RuntimeName(config.runtime));
  }
  return check;
}

}  // namespace np
