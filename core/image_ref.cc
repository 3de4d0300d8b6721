#include "core/image_ref.h"

namespace np {

ImagePinning ClassifyImage(absl::string_view image) {
  if (image.find('@') != absl::string_view::npos) return ImagePinning::kDigest;
  // The tag follows the last ':' after the last '/', so a registry port
  // ("host:5000/name") is not mistaken for one.
  size_t slash = image.rfind('/');
  size_t colon = image.rfind(':');
  if (colon == absl::string_view::npos || (slash != absl::string_view::npos && colon < slash)) {
    return ImagePinning::kMoving;
  }
  return image.substr(colon + 1) == "latest" ? ImagePinning::kMoving : ImagePinning::kTag;
}

absl::string_view ImagePinningName(ImagePinning pinning) {
  switch (pinning) {
    case ImagePinning::kDigest:
      return "digest";
    case ImagePinning::kTag:
      return "tag";
    case ImagePinning::kMoving:
      return "moving";
  }
  return "moving";
}

std::string ImageContentId(absl::string_view id) {
  if (id.substr(0, 7) == "sha256:") id.remove_prefix(7);
  return std::string(id);
}

std::string ImageIdHex(absl::string_view id) {
  std::string hex = ImageContentId(id);
  if (hex.size() != 64) return "";
  for (char c : hex) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return "";
  }
  return hex;
}

}  // namespace np
