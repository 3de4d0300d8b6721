// `isolation.container.credentials`: API keys the egress proxy adds on the
// host, so that the sandbox never holds them (design.md section 8).
//
// Each entry names a host (a DNS name, port 443 unless given), the variable
// of np-exec's environment that holds the key, the request header it goes
// in, and how the header's value is written (`format`, "{}" standing for
// the key; default "{}"). Inside the sandbox the variable holds
// CredentialPlaceholder(env) instead of the key; the proxy terminates TLS for
// that host alone and replaces a header whose value is exactly the formatted
// placeholder with the formatted key. The CA certificate the sandbox trusts
// for it is mounted at kCredentialCaTarget and named by the variables of
// CredentialSandboxEnvironment. Pure.
//
// Codes: `isolation-invalid-credentials` (InvalidArgument, details
// {index, field}) for a malformed list or entry,
// `isolation-credentials-without-allowlist`,
// `isolation-credential-host-not-allowed` (the host is not on allow_hosts),
// `isolation-credential-env-forwarded` (the variable is also forwarded by
// name, which would hand the sandbox the real value).
#ifndef NP_EXEC_CORE_CREDENTIALS_H_
#define NP_EXEC_CORE_CREDENTIALS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/allowlist.h"
#include "nlohmann/json.hpp"

namespace np {

struct Credential {
  std::string host;  // lowercase, without a trailing dot
  uint16_t port = 443;
  std::string env;     // the variable of np-exec's environment
  std::string header;  // as written (compared case-insensitively)
  std::string format = "{}";

  bool operator==(const Credential& other) const {
    return host == other.host && port == other.port && env == other.env && header == other.header &&
           format == other.format;
  }
};

// Where the sandbox finds the session CA: the CA alone (for
// NODE_EXTRA_CA_CERTS, which adds to node's own roots), and a bundle of the
// host's system roots plus the session CA (for the variables that replace a
// client's trust store: SSL_CERT_FILE and the like).
inline constexpr absl::string_view kCredentialCaTarget = "/run/np-exec/session-ca.pem";
inline constexpr absl::string_view kCredentialBundleTarget = "/run/np-exec/ca-bundle.pem";

// Parses the value of `isolation.container.credentials`: an array (empty is
// none) of {host, env, header, format?}; no unknown field, no host twice.
absl::StatusOr<std::vector<Credential>> ParseCredentials(const nlohmann::json& value);

// Every credential's host and port must be let through by `allowlist`.
absl::Status CheckCredentialHosts(const std::vector<Credential>& credentials,
                                  const Allowlist& allowlist);

// No credential's variable may also be forwarded by name.
absl::Status CheckCredentialsNotForwarded(const std::vector<Credential>& credentials,
                                          const std::vector<std::string>& forwarded);

// "np-exec-credential-placeholder:NAME": what the sandbox sees in NAME.
std::string CredentialPlaceholder(absl::string_view env);

// `format` with its one "{}" replaced by `value`.
std::string FormatCredential(absl::string_view format, absl::string_view value);

// The variables set inside for `credentials` (none when empty), as
// "NAME=value": each credential's placeholder, NODE_EXTRA_CA_CERTS naming
// kCredentialCaTarget, and SSL_CERT_FILE, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE
// and GIT_SSL_CAINFO naming kCredentialBundleTarget.
std::vector<std::string> CredentialSandboxEnvironment(const std::vector<Credential>& credentials);

// The entries as the config writes them, for status and the trust review.
nlohmann::json CredentialsToJson(const std::vector<Credential>& credentials);

}  // namespace np

#endif  // NP_EXEC_CORE_CREDENTIALS_H_
