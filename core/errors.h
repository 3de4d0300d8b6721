// Error values shared by every layer.
//
// np-exec reports failures as absl::Status. Besides the canonical code
// (InvalidArgument for bad input, FailedPrecondition for wrong system state,
// ...) each error carries a stable, kebab-case code string such as
// "isolation-mount-forbidden-source" and optional JSON details. The code string
// is the contract: tests, nubos-pilot's workflows and the exit-status mapping in
// main read it, never the message text. Pure; touches nothing.
#ifndef NP_EXEC_CORE_ERRORS_H_
#define NP_EXEC_CORE_ERRORS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace np {

// Builds an error with a stable code string and, when given, JSON details.
absl::Status MakeError(absl::StatusCode canonical, absl::string_view code,
                       absl::string_view message, const nlohmann::json& details = nullptr);

// Returns the stable code string of an error ("" for OK, "internal-error" for a
// status that was not built by MakeError).
std::string ErrorCode(const absl::Status& status);

// Returns the JSON details of an error, or null.
nlohmann::json ErrorDetails(const absl::Status& status);

// True when the status carries the given code string.
bool HasErrorCode(const absl::Status& status, absl::string_view code);

}  // namespace np

#endif  // NP_EXEC_CORE_ERRORS_H_
