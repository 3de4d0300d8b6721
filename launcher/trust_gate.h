// The run path's trust and ratchet check (trust.h) against the operator state
// store, as two calls: EvaluateTrust before planning a spawn (refuse when its
// decision is not OK), RecordSpawnRan once the spawn started. `status` and
// `doctor` report TrustStatusJson. Touches the state store and reads the
// project file.
#ifndef NP_EXEC_LAUNCHER_TRUST_GATE_H_
#define NP_EXEC_LAUNCHER_TRUST_GATE_H_

#include <sys/types.h>

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/settings.h"
#include "core/trust.h"
#include "launcher/verbs_trust.h"
#include "nlohmann/json.hpp"

namespace np {

struct TrustGate {
  bool in_project = false;  // False: outside a project, nothing to check.
  TrustSubject subject;
  TrustInputs inputs;
  TrustDecision decision;  // decision.status is what the run path refuses with.
  std::string store_dir;
  // The ratchet's copy under the project's path key (ProjectPathKey) when
  // its store key is a repository's; its strongest tier counts too.
  std::optional<std::string> path_key;
  std::optional<TrustRecord> path_record;
};

// Loads the project's subject, reads its record and decides. Outside a
// project: in_project false, decision not-needed, the store untouched.
// Errors (the config's own codes, `project-git-invalid`, the store's codes:
// a broken store refuses, it never reads as "no record").
absl::StatusOr<TrustGate> EvaluateTrust(const Settings& settings, absl::string_view xdg_state_home,
                                        absl::string_view home, uid_t uid);

// Raises the record's strongest tier to what the file asked for
// (RecordAfterSpawn), under the store's lock, and its copy under the path key;
// writes only what changes.
absl::Status RecordSpawnRan(const TrustGate& gate, uid_t uid);

// {state, widening, sha256, recorded_tier} for `status --json`'s `trust`.
nlohmann::json TrustStatusJson(const TrustGate& gate);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_TRUST_GATE_H_
