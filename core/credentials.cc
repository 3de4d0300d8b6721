#include "core/credentials.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/config.h"
#include "core/egress_entry.h"
#include "core/errors.h"
#include "core/ip_address.h"

namespace np {
namespace {

using nlohmann::json;

constexpr absl::string_view kKey = "isolation.container.credentials";
constexpr absl::string_view kPlaceholderPrefix = "np-exec-credential-placeholder:";
constexpr size_t kMaxFormat = 256;

absl::Status Invalid(size_t index, absl::string_view field, absl::string_view why) {
  return MakeError(absl::StatusCode::kInvalidArgument, "isolation-invalid-credentials",
                   absl::StrCat(kKey, "[", index, "]", field.empty() ? "" : ".", field, ": ", why),
                   {{"index", index}, {"field", field}});
}

// RFC 9110 tchar.
bool IsToken(absl::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
           absl::string_view("!#$%&'*+-.^_`|~").find(c) != absl::string_view::npos;
  });
}

bool IsLabel(absl::string_view label) {
  return !label.empty() && label.size() <= 63 && label.front() != '-' && label.back() != '-' &&
         std::all_of(label.begin(), label.end(), [](char c) {
           return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-';
         });
}

// A DNS name (the leaf certificate and SNI carry it), never an address or a
// wildcard: the key goes to one named host.
absl::Status ParseHost(const json& value, size_t index, Credential& out) {
  if (!value.is_string())
    return Invalid(index, "host", "must be a host name such as api.example.com");
  std::string text = absl::AsciiStrToLower(value.get<std::string>());
  const size_t colon = text.find(':');
  if (colon != std::string::npos) {
    if (!ParsePort(absl::string_view(text).substr(colon + 1), &out.port)) {
      return Invalid(index, "host", "the port must be a decimal number from 1 to 65535");
    }
    text.resize(colon);
  }
  if (!text.empty() && text.back() == '.') text.pop_back();
  std::vector<absl::string_view> labels = absl::StrSplit(text, '.');
  const bool all_labels = std::all_of(labels.begin(), labels.end(), IsLabel);
  const bool numeric_last = !labels.empty() && !labels.back().empty() &&
                            std::all_of(labels.back().begin(), labels.back().end(),
                                        [](char c) { return absl::ascii_isdigit(c); });
  if (text.empty() || text.size() > 253 || !all_labels || numeric_last) {
    return Invalid(index, "host",
                   absl::StrCat("\"", value.get<std::string>(),
                                "\" is not a host name (a name such as api.example.com, "
                                "optionally with :port; no address, wildcard or URL)"));
  }
  out.host = std::move(text);
  return absl::OkStatus();
}

// Names np-exec sets inside itself: a credential there would be overwritten,
// or would overwrite what the sandbox needs.
bool IsReservedName(absl::string_view name) {
  for (const std::string& assignment : EgressProxyEnvironment()) {
    if (absl::StartsWith(assignment, absl::StrCat(name, "="))) return true;
  }
  for (absl::string_view reserved : {"PATH", "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE",
                                     "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO"}) {
    if (name == reserved) return true;
  }
  return absl::StartsWith(name, "NP_EXEC_");
}

absl::Status ParseEnv(const json& value, size_t index, Credential& out) {
  if (!value.is_string()) return Invalid(index, "env", "must be a variable name");
  const std::string name = value.get<std::string>();
  absl::Status valid = ValidateEnvName(name);
  if (!valid.ok()) return Invalid(index, "env", valid.message());
  if (IsReservedName(name)) {
    return Invalid(index, "env", absl::StrCat(name, " is a variable np-exec sets itself"));
  }
  out.env = name;
  return absl::OkStatus();
}

// A request header the proxy may set: a token, and none that frames the
// message or belongs to the hop (changing those would change what the host
// reads as the request).
absl::Status ParseHeader(const json& value, size_t index, Credential& out) {
  static constexpr absl::string_view kRefused[] = {"host",
                                                   "content-length",
                                                   "transfer-encoding",
                                                   "connection",
                                                   "proxy-connection",
                                                   "keep-alive",
                                                   "te",
                                                   "trailer",
                                                   "upgrade",
                                                   "expect",
                                                   "proxy-authorization"};
  if (!value.is_string() || !IsToken(value.get<std::string>())) {
    return Invalid(index, "header", "must be a header name such as x-api-key");
  }
  const std::string name = value.get<std::string>();
  for (absl::string_view refused : kRefused) {
    if (absl::EqualsIgnoreCase(name, refused)) {
      return Invalid(index, "header", absl::StrCat(name, " frames or routes the request"));
    }
  }
  out.header = name;
  return absl::OkStatus();
}

absl::Status ParseFormat(const json& value, size_t index, Credential& out) {
  if (!value.is_string()) return Invalid(index, "format", "must be a string such as \"Bearer {}\"");
  const std::string format = value.get<std::string>();
  const size_t first = format.find("{}");
  const bool printable = std::all_of(format.begin(), format.end(), [](char c) {
    return static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f;
  });
  if (first == std::string::npos || format.find("{}", first + 2) != std::string::npos ||
      !printable || format.size() > kMaxFormat) {
    return Invalid(index, "format",
                   "must hold \"{}\" (the key) exactly once and printable ASCII only, such as "
                   "\"Bearer {}\"");
  }
  out.format = format;
  return absl::OkStatus();
}

absl::StatusOr<Credential> ParseEntry(const json& entry, size_t index) {
  if (!entry.is_object()) return Invalid(index, "", "must be an object {host, env, header}");
  for (const auto& field : entry.items()) {
    if (field.key() != "host" && field.key() != "env" && field.key() != "header" &&
        field.key() != "format") {
      return Invalid(index, field.key(), "unknown field (host, env, header, format)");
    }
  }
  for (const char* required : {"host", "env", "header"}) {
    if (!entry.contains(required)) return Invalid(index, required, "is required");
  }
  Credential credential;
  absl::Status parsed = ParseHost(entry["host"], index, credential);
  if (parsed.ok()) parsed = ParseEnv(entry["env"], index, credential);
  if (parsed.ok()) parsed = ParseHeader(entry["header"], index, credential);
  if (parsed.ok() && entry.contains("format"))
    parsed = ParseFormat(entry["format"], index, credential);
  if (!parsed.ok()) return parsed;
  return credential;
}

}  // namespace

absl::StatusOr<std::vector<Credential>> ParseCredentials(const json& value) {
  if (!value.is_array()) {
    return MakeError(
        absl::StatusCode::kInvalidArgument, "isolation-invalid-credentials",
        absl::StrCat(kKey, " must be an array of {\"host\", \"env\", \"header\"} objects"),
        {{"key", kKey}});
  }
  std::vector<Credential> credentials;
  for (size_t i = 0; i < value.size(); ++i) {
    absl::StatusOr<Credential> credential = ParseEntry(value[i], i);
    if (!credential.ok()) return credential.status();
    for (const Credential& earlier : credentials) {
      if (earlier.host == credential->host && earlier.port == credential->port) {
        return Invalid(
            i, "host",
            absl::StrCat(credential->host, ":", credential->port, " has a credential already"));
      }
    }
    credentials.push_back(*std::move(credential));
  }
  return credentials;
}

absl::Status CheckCredentialHosts(const std::vector<Credential>& credentials,
                                  const Allowlist& allowlist) {
  for (size_t i = 0; i < credentials.size(); ++i) {
    const Credential& credential = credentials[i];
    if (Decide(allowlist, credential.host, credential.port).allowed) continue;
    return MakeError(absl::StatusCode::kInvalidArgument, "isolation-credential-host-not-allowed",
                     absl::StrCat(kKey, "[", i, "] names ", credential.host, ":", credential.port,
                                  ", which isolation.container.allow_hosts does not let through; "
                                  "add it there or remove the credential"),
                     {{"index", i}, {"host", credential.host}, {"port", credential.port}});
  }
  return absl::OkStatus();
}

absl::Status CheckCredentialsNotForwarded(const std::vector<Credential>& credentials,
                                          const std::vector<std::string>& forwarded) {
  for (const Credential& credential : credentials) {
    if (std::find(forwarded.begin(), forwarded.end(), credential.env) == forwarded.end()) continue;
    return MakeError(
        absl::StatusCode::kInvalidArgument, "isolation-credential-env-forwarded",
        absl::StrCat(credential.env, " is both a credential of ", kKey,
                     " and forwarded by name (isolation.container.env or --env), which would hand "
                     "the sandbox its real value; remove it from the forwarded names"),
        {{"env", credential.env}});
  }
  return absl::OkStatus();
}

std::string CredentialPlaceholder(absl::string_view env) {
  return absl::StrCat(kPlaceholderPrefix, env);
}

std::string FormatCredential(absl::string_view format, absl::string_view value) {
  const size_t at = format.find("{}");
  if (at == absl::string_view::npos) return std::string(format);
  return absl::StrCat(format.substr(0, at), value, format.substr(at + 2));
}

std::vector<std::string> CredentialSandboxEnvironment(const std::vector<Credential>& credentials) {
  std::vector<std::string> env;
  if (credentials.empty()) return env;
  for (const Credential& credential : credentials) {
    const std::string assignment =
        absl::StrCat(credential.env, "=", CredentialPlaceholder(credential.env));
    if (std::find(env.begin(), env.end(), assignment) == env.end()) env.push_back(assignment);
  }
  env.push_back(absl::StrCat("NODE_EXTRA_CA_CERTS=", kCredentialCaTarget));
  for (absl::string_view name :
       {"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO"}) {
    env.push_back(absl::StrCat(name, "=", kCredentialBundleTarget));
  }
  return env;
}

json CredentialsToJson(const std::vector<Credential>& credentials) {
  json out = json::array();
  for (const Credential& credential : credentials) {
    const std::string host = credential.port == 443
                                 ? credential.host
                                 : absl::StrCat(credential.host, ":", credential.port);
    json entry = {{"host", host}, {"env", credential.env}, {"header", credential.header}};
    if (credential.format != "{}") entry["format"] = credential.format;
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace np
