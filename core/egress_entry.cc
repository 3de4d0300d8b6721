#include "core/egress_entry.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

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

bool NodeAcceptsDisableWarning(absl::string_view version_output) {
  absl::string_view text = absl::StripAsciiWhitespace(version_output);
  if (!absl::ConsumePrefix(&text, "v")) return false;
  std::vector<absl::string_view> parts = absl::StrSplit(text, '.');
  int major = 0, minor = 0;
  if (parts.size() < 2 || !absl::SimpleAtoi(parts[0], &major) ||
      !absl::SimpleAtoi(parts[1], &minor)) {
    return false;
  }
  return major > 21 || (major == 21 && minor >= 3) || (major == 20 && minor >= 11);
}

std::string WithNodeProxyWarningSilenced(absl::string_view current) {
  for (absl::string_view word : absl::StrSplit(current, ' ', absl::SkipEmpty())) {
    if (word == kNodeProxyWarningOption) return std::string(current);
  }
  current = absl::StripTrailingAsciiWhitespace(current);
  return current.empty() ? std::string(kNodeProxyWarningOption)
                         : absl::StrCat(current, " ", kNodeProxyWarningOption);
}

}  // namespace np
