// Fuzzes the egress proxy's request parser (core/http_proxy_request.h) and the
// allowlist decision on what it parsed, and, with the same bytes as one
// allow_hosts entry, the allowlist parser. Invariants:
//   - every error carries a code;
//   - a parsed head ends at the first blank line, and parses the same
//     without the bytes that follow it;
//   - a forwarded head is origin-form, CRLF-clean, has exactly one Host and
//     no Proxy-Authorization or Proxy-Connection, and ends in
//     "Connection: close" and the blank line; it parses again as a request;
//   - Decide allows only a target an entry matches, on that entry's port;
//   - an allow_hosts entry that parses round-trips through its canonical form.
#include <cstdint>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "core/allowlist.h"
#include "core/errors.h"
#include "core/http_proxy_request.h"
#include "fuzz/fuzz_invariants.h"

namespace {

using np::fuzz::Broken;

void CheckCoded(const absl::Status& status, const char* where) {
  const std::string code = np::ErrorCode(status);
  if (code.empty() || code == "internal-error")
    Broken(std::string("uncoded error in ") + where, {});
}

const np::Allowlist& Fixed() {
  static const np::Allowlist* allowlist = [] {
    absl::StatusOr<np::Allowlist> parsed = np::ParseAllowHosts(
        {"api.example.com", "*.example.org", "127.0.0.1:8080", "[::1]:8443", "10.0.0.5"});
    if (!parsed.ok()) abort();
    return new np::Allowlist(*parsed);
  }();
  return *allowlist;
}

void CheckForwardHead(const np::ProxyRequest& request) {
  const std::string& head = request.forward_head;
  if (!absl::EndsWith(head, "\r\nConnection: close\r\n\r\n"))
    Broken("forward head end: " + head, {});
  if (head.find("\r\n\r\n") != head.size() - 4) Broken("blank line inside forward head", {});
  if (!absl::StartsWith(head, request.method + " /")) Broken("not origin-form: " + head, {});
  int hosts = 0;
  std::vector<absl::string_view> lines =
      absl::StrSplit(absl::string_view(head).substr(0, head.size() - 4), "\r\n");
  for (absl::string_view line : lines) {
    if (line.find_first_of("\r\n") != absl::string_view::npos) Broken("bare CR/LF forwarded", {});
    const std::string lower = absl::AsciiStrToLower(line);
    if (absl::StartsWith(lower, "host:")) ++hosts;
    if (absl::StartsWith(lower, "proxy-authorization:") ||
        absl::StartsWith(lower, "proxy-connection:")) {
      Broken("hop-by-hop header forwarded: " + std::string(line), {});
    }
  }
  if (hosts != 1) Broken("forward head has " + std::to_string(hosts) + " Host headers", {});
  // The upstream sees an origin-form request; as a proxy request it must be
  // refused as such (proxy-bad-target), never crash or read as another host.
  absl::StatusOr<std::optional<np::ProxyRequest>> again = np::ParseProxyRequest(head);
  if (again.ok()) Broken("an origin-form request parsed as a proxy request", {});
  CheckCoded(again.status(), "ParseProxyRequest(forward_head)");
}

void CheckDecision(const np::ProxyRequest& request) {
  np::EgressDecision decision = np::Decide(Fixed(), request.host, request.port);
  if (decision.reason.find('\n') != std::string::npos) Broken("multi-line reason", {});
  if (!decision.allowed) {
    if (decision.reason_code.empty()) Broken("refusal without a code", {});
    return;
  }
  bool matched = false;
  for (const np::AllowEntry& entry : Fixed().entries) {
    if (entry.port != request.port) continue;
    if (decision.target.is_address) {
      matched = matched || (entry.kind == np::AllowEntry::Kind::kAddress &&
                            entry.address == decision.target.address);
    } else if (entry.kind == np::AllowEntry::Kind::kName) {
      matched = matched || entry.name == decision.target.name;
    } else if (entry.kind == np::AllowEntry::Kind::kWildcard) {
      matched = matched || absl::EndsWith(decision.target.name, "." + entry.name);
    }
  }
  if (!matched) Broken("allowed an unlisted target: " + request.host, {});
}

void CheckAllowHostsEntry(const std::string& text) {
  absl::StatusOr<np::Allowlist> parsed = np::ParseAllowHosts(nlohmann::json::array({text}));
  if (!parsed.ok()) {
    CheckCoded(parsed.status(), "ParseAllowHosts");
    return;
  }
  std::vector<std::string> canonical = np::AllowlistToStrings(*parsed);
  absl::StatusOr<np::Allowlist> again = np::ParseAllowHosts(canonical);
  if (!again.ok() || np::AllowlistToStrings(*again) != canonical) {
    Broken("canonical form does not round-trip: " + canonical[0], {});
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  CheckAllowHostsEntry(input);
  absl::StatusOr<std::optional<np::ProxyRequest>> parsed = np::ParseProxyRequest(input);
  if (!parsed.ok()) {
    CheckCoded(parsed.status(), "ParseProxyRequest");
    return 0;
  }
  if (!parsed->has_value()) {
    if (input.find("\r\n\r\n") != std::string::npos) Broken("a whole head left unparsed", {});
    return 0;
  }
  const np::ProxyRequest& request = **parsed;
  if (request.head_size > size || input.find("\r\n\r\n") + 4 != request.head_size) {
    Broken("head_size is not the first blank line", {});
  }
  if (request.port == 0 || request.host.empty()) Broken("empty target", {});
  absl::StatusOr<std::optional<np::ProxyRequest>> alone =
      np::ParseProxyRequest(input.substr(0, request.head_size));
  if (!alone.ok() || !alone->has_value() || (*alone)->host != request.host ||
      (*alone)->port != request.port || (*alone)->forward_head != request.forward_head) {
    Broken("the bytes after the head changed the parse", {});
  }
  if (request.kind == np::ProxyRequest::Kind::kForward) {
    CheckForwardHead(request);
  } else if (!request.forward_head.empty()) {
    Broken("CONNECT with a forward head", {});
  }
  CheckDecision(request);
  return 0;
}
