// Blocked egress, visible while the program runs: one line on np-exec's
// stderr per host and port the allowlist refused, naming the host and the
// exact config key to add it to, with the JSON to paste (the list as
// configured, plus that entry). Each host:port is told once per spawn, and
// at most kMaxRefusalNotices of them; then one line says the rest are in the
// audit log. Only the allowlist's own refusals are told (a listed host that
// cannot be resolved or reached, a malformed request, the connection limit
// are in the audit log, as every attempt is). Pure formatting and counting;
// the caller writes the lines.
#ifndef NP_EXEC_LAUNCHER_EGRESS_REFUSAL_NOTICE_H_
#define NP_EXEC_LAUNCHER_EGRESS_REFUSAL_NOTICE_H_

#include <optional>
#include <set>
#include <string>

#include "core/allowlist.h"
#include "launcher/egress/proxy.h"

namespace np::egress {

inline constexpr size_t kMaxRefusalNotices = 16;

// The allow_hosts entry that lets `host` on `port` through: "host" on 443,
// else "host:port"; an IPv6 literal in brackets.
std::string AllowEntryFor(const std::string& host, uint16_t port);

class RefusalNotices {
 public:
  explicit RefusalNotices(Allowlist configured) : configured_(std::move(configured)) {}

  // The line (ending in a newline) to write for `record`, or nullopt: not a
  // refusal of the allowlist's, a host:port already told, or past the bound
  // (the first record past it gets the one closing line).
  std::optional<std::string> Notice(const EgressRecord& record);

 private:
  Allowlist configured_;
  std::set<std::string> told_;
  bool capped_ = false;
};

}  // namespace np::egress

#endif  // NP_EXEC_LAUNCHER_EGRESS_REFUSAL_NOTICE_H_
