#include "launcher/trust_gate.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "launcher/state/state_store.h"

namespace np {

absl::StatusOr<TrustGate> EvaluateTrust(const Settings& settings, absl::string_view xdg_state_home,
                                        absl::string_view home, uid_t uid) {
  TrustGate gate;
  if (settings.project_root.empty()) {
    gate.inputs.effective_tier = settings.resolved.tier;
    gate.decision = DecideTrust(gate.inputs);
    return gate;
  }
  gate.in_project = true;
  absl::StatusOr<TrustSubject> subject = LoadTrustSubject(settings);
  if (!subject.ok()) return subject.status();
  gate.subject = *std::move(subject);
  absl::StatusOr<std::string> dir = StateStoreDir(xdg_state_home, home);
  if (!dir.ok()) return dir.status();
  gate.store_dir = *dir;
  absl::StatusOr<StateStore> store = StateStore::Open(gate.store_dir, uid);
  if (!store.ok()) return store.status();
  absl::StatusOr<std::optional<TrustRecord>> record = store->Read(gate.subject.key);
  if (!record.ok()) return record.status();
  gate.inputs = TrustInputsFor(gate.subject, *record);
  gate.decision = DecideTrust(gate.inputs);
  if (!gate.decision.status.ok()) return gate;
  // A project nested inside another (a `.nubos-pilot/` the sandboxed program
  // may have made below the project it ran in) cannot ask for less than an
  // enclosing project's ratchet: unless the operator trusted this project's
  // own content, its tier must reach the strongest any enclosing project ran on.
  if (TrustedContent(gate.inputs)) return gate;
  for (const std::string& above : settings.project.enclosing) {
    absl::StatusOr<std::string> key = ProjectStoreKey(above);
    if (!key.ok()) return key.status();
    absl::StatusOr<std::optional<TrustRecord>> enclosing = store->Read(*key);
    if (!enclosing.ok()) return enclosing.status();
    if (!enclosing->has_value() || (*enclosing)->strongest <= gate.inputs.effective_tier) continue;
    gate.decision.state = TrustState::kLowered;
    gate.decision.status = MakeError(
        absl::StatusCode::kFailedPrecondition, "isolation-tier-lowered",
        absl::StrCat("this project lies inside ", above, ", which ran on the ",
                     TierName((*enclosing)->strongest), " tier; a project below it cannot ask for ",
                     TierName(gate.inputs.effective_tier),
                     " unless you review its config and run `np-exec trust` in it"),
        {{"enclosing_project", above},
         {"recorded_tier", TierName((*enclosing)->strongest)},
         {"tier", TierName(gate.inputs.effective_tier)}});
    return gate;
  }
  return gate;
}

absl::Status RecordSpawnRan(const TrustGate& gate, uid_t uid) {
  if (!gate.in_project) return absl::OkStatus();
  // Nothing to raise: skip the lock and the write on the common path.
  if (gate.inputs.record.has_value() && gate.inputs.file_tier <= gate.inputs.record->strongest) {
    return absl::OkStatus();
  }
  absl::StatusOr<StateStore> store = StateStore::Open(gate.store_dir, uid);
  if (!store.ok()) return store.status();
  const std::string& key = gate.subject.key;
  absl::StatusOr<TrustRecord> written =
      store->Update(key, [&](const std::optional<TrustRecord>& current) {
        return RecordAfterSpawn(current, key, gate.inputs);
      });
  return written.status();
}

nlohmann::json TrustStatusJson(const TrustGate& gate) {
  nlohmann::json out = {{"state", TrustStateName(gate.decision.state)},
                        {"widening", gate.inputs.widening}};
  if (gate.in_project) out["sha256"] = gate.inputs.sha256;
  out["recorded_tier"] = gate.inputs.record.has_value()
                             ? nlohmann::json(TierName(gate.inputs.record->strongest))
                             : nlohmann::json(nullptr);
  return out;
}

}  // namespace np
