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
#include "core/plan.h"
#include "core/project_location.h"
#include "core/settings.h"
#include "launcher/host.h"
#include "nlohmann/json.hpp"

namespace np {

// <root>/.nubos-pilot/audit/np-exec.jsonl
std::string AuditLogPath(const std::string& project_root);

// The argv digest the log records: SHA-256 of the arguments joined by NUL.
std::string ArgvDigest(const std::vector<std::string>& argv);

// The records' schema. Every line has "time" (added on append) and what
// SpawnRecord names: pid, program, argv_digest, cwd.
nlohmann::json SpawnRecord(const HostFacts& host, const std::vector<std::string>& program);

// SpawnRecord plus the tier: tier, effective_from, and on the container tier
// runtime and, for image runtimes, image.
nlohmann::json TierRecord(const HostFacts& host, const Settings& settings,
                          const std::vector<std::string>& program);

// A refusal: `base` (SpawnRecord or TierRecord) with decision "refused" and
// the error's code.
nlohmann::json RefusalRecord(nlohmann::json base, const absl::Status& error);

// The "run" line written before the program starts: TierRecord with
// decision "run", env (names), and for a wrapped plan the mounts, and the
// container's name; for an in-place plan the path executed.
nlohmann::json RunRecord(const HostFacts& host, const Settings& settings, const SpawnPlan& plan,
                         const std::vector<std::string>& program);

// The "exit" line that follows a supervised run: the run line's fields with
// event "exit", exit_status and duration_ms instead of decision.
nlohmann::json ExitRecord(nlohmann::json run_record, int exit_status, long long duration_ms);

// Appends one record (a JSON object; "time" is added) as one line. Returns
// the error instead of writing it; the caller reports it.
absl::Status AppendAudit(const std::string& project_root, nlohmann::json record);

// The same through `project_fd`, the opened folder `project_root` names (a
// watchdog's inherited descriptor), so the line goes to the project judged
// even while its path is swapped. A spawn's own lines: ProjectAuditLog.
absl::Status AppendAuditAt(int project_fd, const std::string& project_root, nlohmann::json record);

// One spawn's lines into its project's log: opened at the first line, from
// the `.nubos-pilot` directory the config was read from when there is one
// (`state_dir`, else through the project folder's descriptor), and kept open
// for the next line, so a run line and its exit line land in the same file.
class ProjectAuditLog {
 public:
  ProjectAuditLog(ProjectLocation project, std::shared_ptr<const OpenFd> state_dir)
      : project_(std::move(project)), state_dir_(std::move(state_dir)) {}
  absl::Status Append(nlohmann::json record);
  const ProjectLocation& project() const { return project_; }

 private:
  ProjectLocation project_;
  std::shared_ptr<const OpenFd> state_dir_;
  std::shared_ptr<const OpenFd> log_;
};

// Where a refusal goes when the project's own log cannot be written (a
// `.nubos-pilot` or `audit` that is a link, a FIFO, someone else's file):
// `<state store>/refusals.jsonl`, outside every project and sandbox, opened
// the same way. The record gains "project".
inline constexpr char kOperatorAuditName[] = "refusals.jsonl";
absl::Status AppendOperatorAudit(const std::string& state_dir, const std::string& project_root,
                                 nlohmann::json record);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_AUDIT_LOG_H_
