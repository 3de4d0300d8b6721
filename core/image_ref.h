// How firmly an image reference pins the sandbox's contents, and the
// content ID an engine gives an image. Pure.
#ifndef NP_EXEC_CORE_IMAGE_REF_H_
#define NP_EXEC_CORE_IMAGE_REF_H_

#include <string>

#include "absl/strings/string_view.h"

namespace np {

// kDigest: "name@sha256:..." names exact bytes. kTag: a version tag, which
// its publisher can still move. kMoving: no tag or "latest", which moves by
// design: the sandbox changes with no change to the repository (ADR-0029).
enum class ImagePinning { kDigest, kTag, kMoving };

ImagePinning ClassifyImage(absl::string_view image);
absl::string_view ImagePinningName(ImagePinning pinning);

// The 64 lowercase hex digits of an engine's image ID ("sha256:HEX" from
// the engine API, bare HEX from `podman image inspect`): the digest of the
// image's configuration, which names its layers, so one ID is one content
// whatever tag points at it. "" for anything else.
std::string ImageIdHex(absl::string_view id);

// The ID as both of an engine's answers name one image: without the API's
// "sha256:" (the warm key and the account view's cache key must not tell
// "sha256:HEX" and HEX apart); an ID of another form is kept as it is.
std::string ImageContentId(absl::string_view id);

}  // namespace np

#endif  // NP_EXEC_CORE_IMAGE_REF_H_
