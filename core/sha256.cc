#include "core/sha256.h"

// The low-level digest calls, deprecated in OpenSSL 3 in favour of EVP: EVP's
// one-shot fetches the algorithm from the default provider, which loads
// libcrypto's configuration and costs a short-lived np-exec five million
// instructions per process (a 4 KB hash with these calls: about 120 thousand).
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

namespace np {

std::string Sha256Hex(absl::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256_CTX context;
  SHA256_Init(&context);
  SHA256_Update(&context, data.data(), data.size());
  SHA256_Final(digest, &context);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * SHA256_DIGEST_LENGTH);
  for (unsigned char byte : digest) {
    out.push_back(kHex[byte >> 4]);
    out.push_back(kHex[byte & 15]);
  }
  return out;
}

}  // namespace np
