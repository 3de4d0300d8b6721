#include "core/image_ref.h"

#include <string>
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

// The cache of an image's accounts is keyed by this: the content, not a tag.
TEST(ImageRefTest, ImageIdHexAcceptsOnlyASha256Id) {
  const std::string hex(64, 'a');
  EXPECT_EQ(ImageIdHex("sha256:" + hex), hex);
  EXPECT_EQ(ImageIdHex(hex), hex);
  const std::string digits = "c653999dbd3a5b911930058be61e56d7aa69bde8f92c391955be3a79cb9dde40";
  EXPECT_EQ(ImageIdHex(digits), digits);
  for (const std::string& bad :
       {std::string(""), std::string("sha256:fake"), std::string(63, 'a'), std::string(65, 'a'),
        std::string(64, 'A'), "sha512:" + hex, "../" + hex.substr(3), hex.substr(1) + "/",
        std::string("np-test:local"), "sha256:" + hex.substr(1) + "g"}) {
    EXPECT_EQ(ImageIdHex(bad), "") << bad;
  }
}

// The engine API's "sha256:HEX" and podman's client's HEX are one image (the
// warm key); an ID of another form is not rewritten.
TEST(ImageRefTest, ImageContentIdDropsOnlyTheApisPrefix) {
  const std::string hex(64, 'a');
  EXPECT_EQ(ImageContentId("sha256:" + hex), hex);
  EXPECT_EQ(ImageContentId(hex), hex);
  EXPECT_EQ(ImageContentId("sha512:" + hex), "sha512:" + hex);
  EXPECT_EQ(ImageContentId("np-test:local"), "np-test:local");
}

}  // namespace
}  // namespace np
