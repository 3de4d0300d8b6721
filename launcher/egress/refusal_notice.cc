#include "launcher/egress/refusal_notice.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"

namespace np::egress {
namespace {

// Printable ASCII only: a host name in a record is what a program inside
// asked for.
std::string Printable(const std::string& text) {
  std::string out = text.substr(0, 255);
  for (char& c : out) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) c = '?';
  }
  return out;
}

// `"allow_hosts": [...]` with the configured entries as written and `added`.
std::string ListToPaste(const Allowlist& configured, const std::string& added) {
  nlohmann::json list = nlohmann::json::array();
  for (const AllowEntry& entry : configured.entries) list.push_back(entry.text);
  list.push_back(added);
  return absl::StrCat("\"allow_hosts\": ",
                      list.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace));
}

}  // namespace

std::string AllowEntryFor(const std::string& host, uint16_t port) {
  const std::string name = host.find(':') != std::string::npos && host.front() != '['
                               ? absl::StrCat("[", host, "]")
                               : host;
  return port == 443 ? name : absl::StrCat(name, ":", port);
}

std::optional<std::string> RefusalNotices::Notice(const EgressRecord& record) {
  if (record.allowed || record.host.empty()) return std::nullopt;
  const std::string& code = record.reason_code;
  if (code != kEgressHostNotAllowed && code != kEgressPortNotAllowed &&
      code != kEgressAddressRefused && code != kEgressBadHost) {
    return std::nullopt;
  }
  const std::string host = Printable(absl::AsciiStrToLower(record.host));
  const std::string target = absl::StrCat(host, ":", record.port);
  if (told_.count(target) > 0) return std::nullopt;
  if (told_.size() >= kMaxRefusalNotices) {
    if (capped_) return std::nullopt;
    capped_ = true;
    return absl::StrCat(
        "np-exec: egress: more hosts were refused; every attempt is in the audit "
        "log (.nubos-pilot/audit/np-exec.jsonl, event \"egress\")\n");
  }
  told_.insert(target);
  std::string line = absl::StrCat("np-exec: egress refused ", target, " (", code, "): ");
  if (code == kEgressHostNotAllowed || code == kEgressPortNotAllowed) {
    const std::string entry = AllowEntryFor(host, record.port);
    absl::StrAppend(&line, code == kEgressHostNotAllowed ? "the host" : "this port",
                    " is not on isolation.container.allow_hosts; to allow it, add \"", entry,
                    "\" there (.nubos-pilot/config.json, then np-exec trust): ",
                    ListToPaste(configured_, entry));
  } else {
    absl::StrAppend(&line, Printable(record.reason));
    if (code == kEgressAddressRefused) {
      absl::StrAppend(&line,
                      "; a name that resolves to a loopback, private or link-local address "
                      "passes only when isolation.container.allow_hosts lists that address "
                      "itself with its port");
    }
  }
  line.push_back('\n');
  return line;
}

}  // namespace np::egress
