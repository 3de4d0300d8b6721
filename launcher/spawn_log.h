// The audit log of one spawn: the lines the run path and a printed plan's
// sandbox-exec write for it (audit_log.h), in one place.
#ifndef NP_EXEC_LAUNCHER_SPAWN_LOG_H_
#define NP_EXEC_LAUNCHER_SPAWN_LOG_H_

#include <chrono>

#include "absl/status/status.h"
#include "core/project_location.h"
#include "launcher/audit_log.h"
#include "launcher/host.h"
#include "launcher/outcome.h"
#include "nlohmann/json.hpp"

namespace np {

// Appends to the project's log (none outside a project); a failure is a
// warning and the spawn goes on.
class SpawnLog {
 public:
  // Lines go to the log of the opened project folder (none outside a
  // project), whatever its path names meanwhile.
  // `state_dir`: the `.nubos-pilot` directory the config was read from, when
  // the caller holds it (ProjectAuditLog).
  SpawnLog(const Reporter& reporter, const HostFacts& host, ProjectLocation project,
           std::shared_ptr<const OpenFd> state_dir = nullptr)
      : reporter_(reporter), host_(host), log_(std::move(project), std::move(state_dir)) {}

  void Append(nlohmann::json record) const;

  // A spawn whose run line is written ends in an exit line, even when the
  // runtime then failed on np-exec's terms (an image that is missing, a proxy
  // that did not start): the exit status np-exec returns and the error's
  // code, never a refusal after a run. Hands the error back.
  absl::Status EndRun(nlohmann::json run_record, absl::Status error,
                      std::chrono::steady_clock::time_point started) const;

  // Records a refusal and hands the error back, for `return log.Refuse(...)`.
  // A refusal the project's log cannot take (a linked `.nubos-pilot`, a FIFO)
  // goes to the operator's state store instead, so it is never lost.
  absl::Status Refuse(nlohmann::json base, absl::Status error) const;

 private:
  const Reporter& reporter_;
  const HostFacts& host_;
  mutable ProjectAuditLog log_;
};

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_SPAWN_LOG_H_
