#include "core/errors.h"

#include <string>

#include "gtest/gtest.h"

namespace np {
namespace {

TEST(ErrorsTest, CodeAndDetailsTravelWithTheStatus) {
  absl::Status status =
      MakeError(absl::StatusCode::kPermissionDenied, "some-code", "message", {{"key", "value"}});
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(status.message(), "message");
  EXPECT_EQ(ErrorCode(status), "some-code");
  EXPECT_TRUE(HasErrorCode(status, "some-code"));
  EXPECT_FALSE(HasErrorCode(status, "other-code"));
  EXPECT_EQ(ErrorDetails(status), (nlohmann::json{{"key", "value"}}));
}

TEST(ErrorsTest, NoDetailsIsNull) {
  absl::Status status = MakeError(absl::StatusCode::kInvalidArgument, "c", "m");
  EXPECT_TRUE(ErrorDetails(status).is_null());
}

TEST(ErrorsTest, OkAndForeignStatuses) {
  EXPECT_EQ(ErrorCode(absl::OkStatus()), "");
  EXPECT_EQ(ErrorCode(absl::InternalError("boom")), "internal-error");
  EXPECT_TRUE(ErrorDetails(absl::InternalError("boom")).is_null());
}

TEST(ErrorsTest, InvalidUtf8InDetailsDoesNotThrow) {
  // Hostile paths reach details; dumping them must not throw.
  absl::Status status = MakeError(absl::StatusCode::kInvalidArgument, "c", "m",
                                  {{"path", std::string("/a\xFF\xFE/b")}});
  EXPECT_EQ(ErrorCode(status), "c");
  EXPECT_TRUE(ErrorDetails(status).is_object());
}

}  // namespace
}  // namespace np
