#include "core/errors.h"

#include <optional>

#include "absl/strings/cord.h"

namespace np {
namespace {

constexpr absl::string_view kCodeUrl = "np-exec/code";
constexpr absl::string_view kDetailsUrl = "np-exec/details";

}  // namespace

absl::Status MakeError(absl::StatusCode canonical, absl::string_view code,
                       absl::string_view message, const nlohmann::json& details) {
  absl::Status status(canonical, message);
  status.SetPayload(kCodeUrl, absl::Cord(code));
  if (!details.is_null()) {
    // dump() with the replace handler cannot throw on invalid UTF-8 coming
    // from hostile paths.
    status.SetPayload(kDetailsUrl, absl::Cord(details.dump(
                                       -1, ' ', false, nlohmann::json::error_handler_t::replace)));
  }
  return status;
}

std::string ErrorCode(const absl::Status& status) {
  if (status.ok()) return "";
  absl::optional<absl::Cord> code = status.GetPayload(kCodeUrl);
  if (!code.has_value()) return "internal-error";
  return std::string(*code);
}

nlohmann::json ErrorDetails(const absl::Status& status) {
  absl::optional<absl::Cord> details = status.GetPayload(kDetailsUrl);
  if (!details.has_value()) return nullptr;
  nlohmann::json parsed =
      nlohmann::json::parse(std::string(*details), nullptr, /*allow_exceptions=*/false);
  return parsed.is_discarded() ? nlohmann::json(nullptr) : parsed;
}

bool HasErrorCode(const absl::Status& status, absl::string_view code) {
  return ErrorCode(status) == code;
}

}  // namespace np
