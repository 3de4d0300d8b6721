// libcrypto's start-up CPU probe, deferred (launcher/openssl_start.cc): this
// binary is linked with np-exec's wrap of the archive's .init call (np-exec's
// own .init is checked by tests/launcher/hot_order_test.cc), so it
// has not probed when its test starts, and has once StartOpenSsl, which every
// OpenSSL-using entry of np-exec calls first, returns.
#include <openssl/crypto.h>
#include <openssl/ssl.h>

#include <string>

#include "core/sha256.h"
#include "gtest/gtest.h"
#include "launcher/egress/session_ca.h"

// OpenSSL's record of the CPU's features (crypto/cryptlib.h): all zero until
// its probe has run.
extern "C" unsigned int OPENSSL_ia32cap_P[];

namespace np {
namespace {

TEST(OpenSslStartTest, TheCpuProbeWaitsForOpenSslsFirstUseAndRunsBeforeItsWork) {
  EXPECT_EQ(OPENSSL_ia32cap_P[0], 0u) << "libcrypto probed the CPU at start-up";
  // core's SHA-256 runs before it, on OpenSSL's integer code (no features
  // known yet): the known answers, then the same with the features known.
  const std::string million(1000000, 'a');
  const std::string kAbc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  const std::string kMillion = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
  EXPECT_EQ(Sha256Hex("abc"), kAbc);
  EXPECT_EQ(Sha256Hex(million), kMillion);
  EXPECT_EQ(OPENSSL_ia32cap_P[0], 0u) << "SHA-256 set OpenSSL up";
  ASSERT_TRUE(egress::StartOpenSsl().ok());
  EXPECT_EQ(Sha256Hex("abc"), kAbc);
  EXPECT_EQ(Sha256Hex(million), kMillion);
  // CPUID leaf 1's EDX, as OpenSSL keeps it: the FPU and TSC bits are set on
  // every x86-64 processor.
  EXPECT_NE(OPENSSL_ia32cap_P[0], 0u) << "StartOpenSsl left OpenSSL without the CPU's features";
  absl::StatusOr<std::unique_ptr<egress::SessionCa>> ca =
      egress::SessionCa::Create({"api.example.test"});
  ASSERT_TRUE(ca.ok()) << ca.status();
  EXPECT_FALSE((*ca)->CertificatePem().empty());
}

}  // namespace
}  // namespace np
