#include "launcher/spawn_log.h"

#include "core/errors.h"
#include "launcher/audit_log.h"
#include "launcher/state/state_store.h"

namespace np {

void SpawnLog::Append(nlohmann::json record) const {
  if (!log_.project().found()) return;
  absl::Status logged = log_.Append(std::move(record));
  if (!logged.ok()) reporter_.Warn(logged);
}

absl::Status SpawnLog::EndRun(nlohmann::json run_record, absl::Status error,
                              std::chrono::steady_clock::time_point started) const {
  nlohmann::json record = ExitRecord(std::move(run_record), ExitStatusFor(error, CommandKind::kRun),
                                     std::chrono::duration_cast<std::chrono::milliseconds>(
                                         std::chrono::steady_clock::now() - started)
                                         .count());
  record["code"] = ErrorCode(error);
  Append(std::move(record));
  return error;
}

absl::Status SpawnLog::Refuse(nlohmann::json base, absl::Status error) const {
  if (!log_.project().found()) return error;
  nlohmann::json record = RefusalRecord(std::move(base), error);
  absl::Status logged = log_.Append(record);
  if (logged.ok()) return error;
  reporter_.Warn(logged);
  absl::StatusOr<StateStore> store = OpenStateStore(host_);
  // One warning either way (the project's log failed); the operator's copy
  // is best effort.
  if (store.ok()) (void)AppendOperatorAudit(store->dir(), log_.project().root, record);
  return error;
}

}  // namespace np
