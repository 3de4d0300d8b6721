// SHA-256: the audit log's argv digest (which command ran, without storing
// arguments that may carry secrets), the trust record's hash of a project's
// config, a warm sandbox's key, a remote engine's check. libcrypto's (OpenSSL,
// linked for the egress proxy's TLS): neither Abseil nor nlohmann/json has a
// cryptographic hash. Pure.
#ifndef NP_EXEC_CORE_SHA256_H_
#define NP_EXEC_CORE_SHA256_H_

#include <string>

#include "absl/strings/string_view.h"

namespace np {

// Lower-case hex SHA-256 of `data` (FIPS 180-4).
std::string Sha256Hex(absl::string_view data);

}  // namespace np

#endif  // NP_EXEC_CORE_SHA256_H_
