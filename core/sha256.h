// SHA-256: the audit log's argv digest (which command ran, without storing
// arguments that may carry secrets) and the trust record's hash of a project's
// config. Neither Abseil nor nlohmann/json has a cryptographic hash, and np-exec
// links nothing else. Pure.
#ifndef NP_EXEC_CORE_SHA256_H_
#define NP_EXEC_CORE_SHA256_H_

#include <string>

#include "absl/strings/string_view.h"

namespace np {

// Lower-case hex SHA-256 of `data` (FIPS 180-4).
std::string Sha256Hex(absl::string_view data);

}  // namespace np

#endif  // NP_EXEC_CORE_SHA256_H_
