// The per-session certificate authority of the egress proxy's credential
// hosts (core/credentials.h), and the TLS contexts built on it. All of the
// cryptography is OpenSSL's (Debian's libssl, linked statically).
//
// The CA is made when a spawn's egress session starts: an EC P-256 key that
// exists only in this process's memory (never written anywhere, so never in
// the sandbox), a self-signed certificate valid from five minutes ago (clock
// skew between host and sandbox) for at most a day, and a name constraint
// that limits it to the credential hosts: a leaked certificate could vouch
// for nothing else. Leaf certificates (P-256, the host as SAN, serverAuth,
// the CA's validity) are made on first use per host and kept for the
// session. The upstream context verifies the real host against OpenSSL's
// default trust store (SSL_CERT_FILE and SSL_CERT_DIR are honoured, as
// OpenSSL does), with host-name checking and SNI, TLS 1.2 or later, and
// offers ALPN http/1.1 only, as the sandbox-facing context does.
// Touches nothing but memory.
#ifndef NP_EXEC_LAUNCHER_EGRESS_SESSION_CA_H_
#define NP_EXEC_LAUNCHER_EGRESS_SESSION_CA_H_

#include <openssl/ssl.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace np::egress {

// The CA's lifetime, and how far both it and its leaves are backdated.
inline constexpr long kSessionCaLifetimeSeconds = 24 * 60 * 60;
inline constexpr long kSessionCaBackdateSeconds = 5 * 60;

class SessionCa {
 public:
  // Makes the key and the certificate, constrained to `hosts` (DNS names).
  // Code: egress-ca-failed.
  static absl::StatusOr<std::unique_ptr<SessionCa>> Create(const std::vector<std::string>& hosts);
  ~SessionCa();
  SessionCa(const SessionCa&) = delete;
  SessionCa& operator=(const SessionCa&) = delete;

  // The CA certificate in PEM; never the key.
  std::string CertificatePem() const;
  X509* certificate() const { return cert_; }

  // A server context presenting a leaf for `host` signed by this CA, made
  // once per host and owned by the CA. Code: egress-ca-failed.
  absl::StatusOr<SSL_CTX*> ServerContext(const std::string& host);

 private:
  SessionCa(EVP_PKEY* key, X509* cert) : key_(key), cert_(cert) {}
  EVP_PKEY* key_;
  X509* cert_;
  std::mutex mutex_;
  std::map<std::string, SSL_CTX*> servers_;
};

// OpenSSL's first initialisation, which probes the CPU: np-exec defers that
// probe from its start-up to here (launcher/openssl_start.cc), and every
// entry below calls this first, before any key, certificate or context.
// Code: egress-ca-failed.
absl::Status StartOpenSsl();

// A client context that verifies upstream hosts against OpenSSL's default
// trust store. Code: egress-ca-failed.
absl::StatusOr<std::shared_ptr<SSL_CTX>> UpstreamContext();

// The host's system trust store as PEM: the file OpenSSL's build names as
// its default (Debian: /usr/lib/ssl/cert.pem, the ca-certificates bundle),
// whatever SSL_CERT_FILE says; "" when there is none.
std::string SystemRootsPem();

// The last OpenSSL error of this thread as one line, and clears the queue.
std::string OpenSslError();

}  // namespace np::egress

#endif  // NP_EXEC_LAUNCHER_EGRESS_SESSION_CA_H_
