// How firmly an image reference pins the sandbox's contents. Pure.
#ifndef NP_EXEC_CORE_IMAGE_REF_H_
#define NP_EXEC_CORE_IMAGE_REF_H_

#include "absl/strings/string_view.h"

namespace np {

// kDigest: "name@sha256:..." names exact bytes. kTag: a version tag, which
// its publisher can still move. kMoving: no tag or "latest", which moves by
// design: the sandbox changes with no change to the repository (ADR-0029).
enum class ImagePinning { kDigest, kTag, kMoving };

ImagePinning ClassifyImage(absl::string_view image);
absl::string_view ImagePinningName(ImagePinning pinning);

}  // namespace np

#endif  // NP_EXEC_CORE_IMAGE_REF_H_
