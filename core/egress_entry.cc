#include "core/egress_entry.h"

#include "absl/strings/str_cat.h"

namespace np {

const std::vector<std::string>& EgressProxyEnvironment() {
  static const auto* env = [] {
    const std::string url = absl::StrCat("http://127.0.0.1:", kEgressBridgePort);
    // Both spellings: curl and Python read the lowercase ones (curl ignores
    // HTTP_PROXY in capitals), Go and Node's env-proxy support the capitals.
    return new std::vector<std::string>{absl::StrCat("HTTPS_PROXY=", url),
                                        absl::StrCat("HTTP_PROXY=", url),
                                        absl::StrCat("https_proxy=", url),
                                        absl::StrCat("http_proxy=", url), "NODE_USE_ENV_PROXY=1"};
  }();
  return *env;
}

std::vector<std::string> EgressEntryPrefix() {
  return {std::string(kEgressSelfTarget),
          std::string(kEgressEntryVerb),
          "--port",
          absl::StrCat(kEgressBridgePort),
          "--socket",
          std::string(kEgressSocketTarget),
          "--"};
}

}  // namespace np
