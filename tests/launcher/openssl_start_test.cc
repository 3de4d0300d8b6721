// libcrypto's start-up CPU probe, deferred (launcher/openssl_start.cc): this
// binary is linked as np-exec is (the archive's .init call wrapped), so it
// has not probed when its test starts, and has once StartOpenSsl, which every
// OpenSSL-using entry of np-exec calls first, returns.
#include <openssl/crypto.h>
#include <openssl/ssl.h>

#include "gtest/gtest.h"
#include "launcher/egress/session_ca.h"

// OpenSSL's record of the CPU's features (crypto/cryptlib.h): all zero until
// its probe has run.
extern "C" unsigned int OPENSSL_ia32cap_P[];

namespace np {
namespace {

TEST(OpenSslStartTest, TheCpuProbeWaitsForOpenSslsFirstUseAndRunsBeforeItsWork) {
  EXPECT_EQ(OPENSSL_ia32cap_P[0], 0u) << "libcrypto probed the CPU at start-up";
  ASSERT_TRUE(egress::StartOpenSsl().ok());
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
