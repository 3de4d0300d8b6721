#include "launcher/egress/session_ca.h"

#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/errors.h"

namespace np::egress {
namespace {

constexpr unsigned char kAlpn[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};

absl::Status CaFailed(absl::string_view what) {
  return MakeError(
      absl::StatusCode::kInternal, "egress-ca-failed",
      absl::StrCat("cannot make the egress proxy's session CA: ", what, ": ", OpenSslError()));
}

EVP_PKEY* NewKey() { return EVP_EC_gen("P-256"); }

bool RandomSerial(X509* cert) {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return false;
  bytes[0] &= 0x7f;  // positive
  BIGNUM* bn = BN_bin2bn(bytes, sizeof bytes, nullptr);
  const bool ok = bn != nullptr && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert)) != nullptr;
  BN_free(bn);
  return ok;
}

bool AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  const bool ok = ext != nullptr && X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

// A certificate for `key` named CN=`common_name`, valid from a little before
// now until `not_after`, with the given extensions, not yet signed.
X509* NewCertificate(EVP_PKEY* key, const std::string& common_name, const ASN1_TIME* not_after) {
  X509* cert = X509_new();
  X509_NAME* name = X509_get_subject_name(cert);
  const bool ok =
      cert != nullptr && X509_set_version(cert, 2) == 1 && RandomSerial(cert) &&
      X509_gmtime_adj(X509_getm_notBefore(cert), -kSessionCaBackdateSeconds) != nullptr &&
      (not_after != nullptr
           ? X509_set1_notAfter(cert, not_after) == 1
           : X509_gmtime_adj(X509_getm_notAfter(cert),
                             kSessionCaLifetimeSeconds - kSessionCaBackdateSeconds) != nullptr) &&
      X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                 reinterpret_cast<const unsigned char*>(common_name.c_str()), -1,
                                 -1, 0) == 1 &&
      X509_set_pubkey(cert, key) == 1;
  if (!ok) {
    X509_free(cert);
    return nullptr;
  }
  return cert;
}

absl::Status ConfigureAlpnAndVersion(SSL_CTX* ctx) {
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) return CaFailed("min version");
  SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  return absl::OkStatus();
}

// The sandbox-facing side speaks HTTP/1.1 only: the proxy frames requests
// of that protocol (core/credential_request.h).
int SelectHttp11(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in,
                 unsigned int inlen, void*) {
  unsigned char* selected = nullptr;
  if (SSL_select_next_proto(&selected, outlen, kAlpn, sizeof kAlpn, in, inlen) !=
      OPENSSL_NPN_NEGOTIATED) {
    return SSL_TLSEXT_ERR_NOACK;
  }
  *out = selected;
  return SSL_TLSEXT_ERR_OK;
}

}  // namespace

absl::Status StartOpenSsl() {
  // Options not yet initialised, so the call does not return before its base
  // step, which runs the CPU probe; the ones a first key would ask for anyway.
  if (OPENSSL_init_crypto(OPENSSL_INIT_ADD_ALL_CIPHERS | OPENSSL_INIT_ADD_ALL_DIGESTS, nullptr) !=
      1) {
    return CaFailed("OpenSSL's initialisation");
  }
  return absl::OkStatus();
}

std::string SystemRootsPem() {
  std::ifstream in(X509_get_default_cert_file(), std::ios::binary);
  if (!in.is_open()) return std::string();
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string OpenSslError() {
  std::string text;
  while (unsigned long code = ERR_get_error()) {
    char buffer[256];
    ERR_error_string_n(code, buffer, sizeof buffer);
    text = buffer;  // the last one is the closest to the failure
  }
  return text.empty() ? std::string("no OpenSSL error recorded") : text;
}

absl::StatusOr<std::unique_ptr<SessionCa>> SessionCa::Create(
    const std::vector<std::string>& hosts) {
  absl::Status started = StartOpenSsl();
  if (!started.ok()) return started;
  EVP_PKEY* key = NewKey();
  if (key == nullptr) return CaFailed("key");
  X509* cert = NewCertificate(key, "np-exec egress session CA", nullptr);
  std::vector<std::string> permitted;
  for (const std::string& host : hosts) permitted.push_back(absl::StrCat("permitted;DNS:", host));
  const bool ok = cert != nullptr && X509_set_issuer_name(cert, X509_get_subject_name(cert)) == 1 &&
                  AddExtension(cert, cert, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") &&
                  AddExtension(cert, cert, NID_key_usage, "critical,keyCertSign,cRLSign") &&
                  AddExtension(cert, cert, NID_subject_key_identifier, "hash") &&
                  (permitted.empty() ||
                   AddExtension(cert, cert, NID_name_constraints,
                                absl::StrCat("critical,", absl::StrJoin(permitted, ",")))) &&
                  X509_sign(cert, key, EVP_sha256()) > 0;
  if (!ok) {
    X509_free(cert);
    EVP_PKEY_free(key);
    return CaFailed("certificate");
  }
  return std::unique_ptr<SessionCa>(new SessionCa(key, cert));
}

SessionCa::~SessionCa() {
  for (auto& [host, ctx] : servers_) SSL_CTX_free(ctx);
  X509_free(cert_);
  EVP_PKEY_free(key_);
}

std::string SessionCa::CertificatePem() const {
  BIO* bio = BIO_new(BIO_s_mem());
  std::string pem;
  if (bio != nullptr && PEM_write_bio_X509(bio, cert_) == 1) {
    char* data = nullptr;
    const long size = BIO_get_mem_data(bio, &data);
    pem.assign(data, static_cast<size_t>(size));
  }
  BIO_free(bio);
  return pem;
}

absl::StatusOr<SSL_CTX*> SessionCa::ServerContext(const std::string& host) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = servers_.find(host); it != servers_.end()) return it->second;
  EVP_PKEY* key = NewKey();
  X509* leaf = key != nullptr ? NewCertificate(key, host, X509_get0_notAfter(cert_)) : nullptr;
  const bool signed_ok =
      leaf != nullptr && X509_set_issuer_name(leaf, X509_get_subject_name(cert_)) == 1 &&
      AddExtension(leaf, cert_, NID_basic_constraints, "critical,CA:FALSE") &&
      AddExtension(leaf, cert_, NID_key_usage, "critical,digitalSignature") &&
      AddExtension(leaf, cert_, NID_ext_key_usage, "serverAuth") &&
      AddExtension(leaf, cert_, NID_subject_alt_name, absl::StrCat("DNS:", host)) &&
      AddExtension(leaf, cert_, NID_authority_key_identifier, "keyid:always") &&
      X509_sign(leaf, key_, EVP_sha256()) > 0;
  SSL_CTX* ctx = signed_ok ? SSL_CTX_new(TLS_server_method()) : nullptr;
  const bool ready = ctx != nullptr && ConfigureAlpnAndVersion(ctx).ok() &&
                     SSL_CTX_use_certificate(ctx, leaf) == 1 &&
                     SSL_CTX_use_PrivateKey(ctx, key) == 1 && SSL_CTX_add1_chain_cert(ctx, cert_);
  X509_free(leaf);
  EVP_PKEY_free(key);
  if (!ready) {
    SSL_CTX_free(ctx);
    return CaFailed(absl::StrCat("the certificate for ", host));
  }
  SSL_CTX_set_alpn_select_cb(ctx, SelectHttp11, nullptr);
  servers_[host] = ctx;
  return ctx;
}

absl::StatusOr<std::shared_ptr<SSL_CTX>> UpstreamContext() {
  absl::Status started = StartOpenSsl();
  if (!started.ok()) return started;
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) return CaFailed("the upstream context");
  std::shared_ptr<SSL_CTX> owned(ctx, SSL_CTX_free);
  absl::Status configured = ConfigureAlpnAndVersion(ctx);
  if (!configured.ok()) return configured;
  if (SSL_CTX_set_default_verify_paths(ctx) != 1) return CaFailed("the system trust store");
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  if (SSL_CTX_set_alpn_protos(ctx, kAlpn, sizeof kAlpn) != 0) return CaFailed("ALPN");
  return owned;
}

}  // namespace np::egress
