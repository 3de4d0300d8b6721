#include "core/image_ref.h"

#include <vector>

#include "gtest/gtest.h"

namespace np {
namespace {

TEST(ImageRefTest, ClassifyImage) {
  struct Case {
    const char* image;
    ImagePinning pinning;
  };
  const std::vector<Case> cases = {
      {"node:22-bookworm-slim", ImagePinning::kTag},
      {"node", ImagePinning::kMoving},
      {"node:latest", ImagePinning::kMoving},
      {"library/node", ImagePinning::kMoving},
      {"registry:5000/node", ImagePinning::kMoving},
      {"registry:5000/node:22", ImagePinning::kTag},
      {"registry:5000/node:latest", ImagePinning::kMoving},
      {"ghcr.io/org/node:1.2.3", ImagePinning::kTag},
      {"node@sha256:0123abcd", ImagePinning::kDigest},
      {"node:22@sha256:0123abcd", ImagePinning::kDigest},
      {"registry:5000/node@sha256:0123abcd", ImagePinning::kDigest},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ImagePinningName(ClassifyImage(c.image)), ImagePinningName(c.pinning)) << c.image;
  }
}

TEST(ImageRefTest, PinningNames) {
  EXPECT_EQ(ImagePinningName(ImagePinning::kDigest), "digest");
  EXPECT_EQ(ImagePinningName(ImagePinning::kTag), "tag");
  EXPECT_EQ(ImagePinningName(ImagePinning::kMoving), "moving");
}

}  // namespace
}  // namespace np
