// The audit log: one JSON line per spawn or refusal.
//
// Appended to <project>/.nubos-pilot/audit/np-exec.jsonl, created 0600, opened
// O_APPEND and written with a single write(2) per line, so concurrent spawns
// never interleave or tear a line. It records env names and an argv digest,
// never values. A log that cannot be written never blocks a spawn silently:
// the failure is reported on stderr and np-exec goes on. Writes files.
#ifndef NP_EXEC_LAUNCHER_AUDIT_LOG_H_
#define NP_EXEC_LAUNCHER_AUDIT_LOG_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

namespace np {

// <root>/.nubos-pilot/audit/np-exec.jsonl
std::string AuditLogPath(const std::string& project_root);

// The argv digest the log records: SHA-256 of the arguments joined by NUL.
std::string ArgvDigest(const std::vector<std::string>& argv);

// Appends one record (a JSON object; "time" is added) as one line. Returns
// the error instead of writing it; the caller reports it.
absl::Status AppendAudit(const std::string& project_root, nlohmann::json record);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_AUDIT_LOG_H_
