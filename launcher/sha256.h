// SHA-256, for the audit log's argv digest: the log records which command ran
// without storing arguments that may carry secrets. Neither Abseil nor
// nlohmann/json has a cryptographic hash, and the launcher links nothing else.
#ifndef NP_EXEC_LAUNCHER_SHA256_H_
#define NP_EXEC_LAUNCHER_SHA256_H_

#include <string>

#include "absl/strings/string_view.h"

namespace np {

// Lower-case hex SHA-256 of `data` (FIPS 180-4).
std::string Sha256Hex(absl::string_view data);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_SHA256_H_
