// The per-session CA: short-lived, P-256, constrained to the credential
// hosts, its key never in what it hands out; and the session's files the
// sandbox trusts: written 0644 beside the socket, removed with the session.
#include "launcher/egress/session_ca.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <ctime>
#include <fstream>
#include <sstream>

#include "core/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "launcher/egress/session.h"
#include "tests/support/temp_dir.h"

namespace np::egress {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

X509* Parse(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return cert;
}

// Seconds from now to `t` (negative: in the past).
long FromNow(const ASN1_TIME* t) {
  int days = 0, seconds = 0;
  ASN1_TIME_diff(&days, &seconds, nullptr, t);
  return days * 86400L + seconds;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(SessionCaTest, TheCaIsShortLivedP256AndConstrainedToItsHosts) {
  absl::StatusOr<std::unique_ptr<SessionCa>> ca = SessionCa::Create({"api.anthropic.com"});
  ASSERT_TRUE(ca.ok()) << ca.status();
  const std::string pem = (*ca)->CertificatePem();
  EXPECT_THAT(pem, HasSubstr("BEGIN CERTIFICATE"));
  EXPECT_THAT(pem, Not(HasSubstr("PRIVATE KEY")));
  X509* cert = Parse(pem);
  ASSERT_NE(cert, nullptr);
  EXPECT_EQ(X509_check_ca(cert), 1);
  EXPECT_LE(FromNow(X509_get0_notAfter(cert)), kSessionCaLifetimeSeconds);
  EXPECT_GT(FromNow(X509_get0_notAfter(cert)), 23 * 3600);
  EXPECT_LT(FromNow(X509_get0_notBefore(cert)), -60);  // backdated for clock skew
  EVP_PKEY* key = X509_get0_pubkey(cert);
  char group[64] = {0};
  size_t size = 0;
  ASSERT_EQ(EVP_PKEY_get_group_name(key, group, sizeof group, &size), 1);
  EXPECT_STREQ(group, "prime256v1");
  EXPECT_GE(X509_get_ext_by_NID(cert, NID_name_constraints, -1), 0);
  X509_free(cert);
}

TEST(SessionCaTest, LeavesNameTheirHostAndChainToTheCa) {
  absl::StatusOr<std::unique_ptr<SessionCa>> ca = SessionCa::Create({"api.openai.com"});
  ASSERT_TRUE(ca.ok());
  absl::StatusOr<SSL_CTX*> ctx = (*ca)->ServerContext("api.openai.com");
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  absl::StatusOr<SSL_CTX*> again = (*ca)->ServerContext("api.openai.com");
  EXPECT_EQ(*ctx, *again);  // made once per host
  X509* leaf = SSL_CTX_get0_certificate(*ctx);
  ASSERT_NE(leaf, nullptr);
  EXPECT_EQ(X509_check_host(leaf, "api.openai.com", 0, 0, nullptr), 1);
  EXPECT_NE(X509_check_host(leaf, "evil.example.com", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_ca(leaf), 0);
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, (*ca)->certificate());
  X509_STORE_CTX* verify = X509_STORE_CTX_new();
  X509_STORE_CTX_init(verify, store, leaf, nullptr);
  X509_STORE_CTX_set_purpose(verify, X509_PURPOSE_SSL_SERVER);
  EXPECT_EQ(X509_verify_cert(verify), 1)
      << X509_verify_cert_error_string(X509_STORE_CTX_get_error(verify));
  X509_STORE_CTX_free(verify);
  X509_STORE_free(store);
  // A leaf for a host outside the constraint does not verify.
  absl::StatusOr<SSL_CTX*> outside = (*ca)->ServerContext("evil.example.com");
  ASSERT_TRUE(outside.ok());
  store = X509_STORE_new();
  X509_STORE_add_cert(store, (*ca)->certificate());
  verify = X509_STORE_CTX_new();
  X509_STORE_CTX_init(verify, store, SSL_CTX_get0_certificate(*outside), nullptr);
  EXPECT_NE(X509_verify_cert(verify), 1);
  X509_STORE_CTX_free(verify);
  X509_STORE_free(store);
}

TEST(SessionCaTest, TheSessionWritesTheCaAndBundleAndRemovesThem) {
  ::np::testing::TempDir temp;
  std::string dir;
  {
    absl::StatusOr<std::unique_ptr<EgressSession>> session = EgressSession::Create(temp.path(), {});
    ASSERT_TRUE(session.ok()) << session.status();
    dir = (*session)->dir();
    EXPECT_TRUE((*session)->ca_path().empty());
    std::vector<Credential> credentials = {
        {"api.anthropic.com", 443, "ANTHROPIC_API_KEY", "x-api-key", "{}"}};
    auto lookup = [](const std::string& name) {
      return name == "ANTHROPIC_API_KEY" ? std::string("sk-real") : std::string();
    };
    ASSERT_TRUE((*session)->ServeCredentials(credentials, lookup, "SYSTEM ROOTS").ok());
    struct stat st;
    ASSERT_EQ(stat((*session)->ca_path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0644u);
    const std::string ca = ReadFile((*session)->ca_path());
    const std::string bundle = ReadFile((*session)->bundle_path());
    EXPECT_THAT(ca, HasSubstr("BEGIN CERTIFICATE"));
    EXPECT_EQ(bundle, "SYSTEM ROOTS\n" + ca);
    for (const std::string& text : {ca, bundle}) {
      EXPECT_THAT(text, Not(HasSubstr("PRIVATE")));
      EXPECT_THAT(text, Not(HasSubstr("sk-real")));
    }
  }
  struct stat st;
  EXPECT_NE(stat(dir.c_str(), &st), 0);
}

TEST(SessionCaTest, AnUnsetVariableIsRefusedNamingIt) {
  ::np::testing::TempDir temp;
  absl::StatusOr<std::unique_ptr<EgressSession>> session = EgressSession::Create(temp.path(), {});
  ASSERT_TRUE(session.ok());
  std::vector<Credential> credentials = {{"a.com", 443, "GEMINI_API_KEY", "x-goog-api-key", "{}"}};
  absl::Status served = (*session)->ServeCredentials(
      credentials, [](const std::string&) { return std::string(); }, "");
  EXPECT_EQ(ErrorCode(served), "egress-credential-unset");
  EXPECT_THAT(served.message(), HasSubstr("GEMINI_API_KEY"));
  EXPECT_TRUE((*session)->ca_path().empty());
}

}  // namespace
}  // namespace np::egress
