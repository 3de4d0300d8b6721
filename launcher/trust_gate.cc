#include "launcher/trust_gate.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "launcher/state/state_store.h"

namespace np {
namespace {

// The ratchet's copy under the path key of a project whose store key is its
// repository's: read into `gate`, and its strongest tier raises `record`'s
// (a `.git` made to read as none, its HEAD removed from inside, changes the
// store key, never the path key).
absl::Status ReadPathRatchet(const StateStore& store, TrustGate& gate,
                             std::optional<TrustRecord>& record) {
  const std::string path_key = ProjectPathKey(gate.subject.project_real);
  if (path_key == gate.subject.key) return absl::OkStatus();
  absl::StatusOr<std::optional<TrustRecord>> copy = store.Read(path_key);
  if (!copy.ok()) return copy.status();
  gate.path_key = path_key;
  gate.path_record = *copy;
  if (!copy->has_value()) return absl::OkStatus();
  if (!record.has_value()) {
    record = TrustRecord{};
    record->key = gate.subject.key;
    record->strongest = (*copy)->strongest;
  } else if ((*copy)->strongest > record->strongest) {
    record->strongest = (*copy)->strongest;
  }
  return absl::OkStatus();
}

// The strongest tier the enclosing project `above` ran on: under its store
// key or its path key, whichever is stronger; nullopt when it never ran.
absl::StatusOr<std::optional<Tier>> EnclosingStrongest(const StateStore& store,
                                                       const std::string& above) {
  absl::StatusOr<std::string> key = ProjectStoreKey(above);
  if (!key.ok()) return key.status();
  std::optional<Tier> strongest;
  for (const std::string& each : {*key, ProjectPathKey(above)}) {
    absl::StatusOr<std::optional<TrustRecord>> record = store.Read(each);
    if (!record.ok()) return record.status();
    if (record->has_value() && (!strongest.has_value() || (*record)->strongest > *strongest)) {
      strongest = (*record)->strongest;
    }
  }
  return strongest;
}

}  // namespace

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
  absl::Status copy = ReadPathRatchet(*store, gate, *record);
  if (!copy.ok()) return copy;
  gate.inputs = TrustInputsFor(gate.subject, *record);
  gate.decision = DecideTrust(gate.inputs);
  if (!gate.decision.status.ok()) return gate;
  // A project nested inside another (a `.nubos-pilot/` the sandboxed program
  // may have made below the project it ran in) cannot ask for less than an
  // enclosing project's ratchet: unless the operator trusted this project's
  // own content, its tier must reach the strongest any enclosing project ran on.
  if (TrustedContent(gate.inputs)) return gate;
  for (const std::string& above : settings.project.enclosing) {
    absl::StatusOr<std::optional<Tier>> strongest = EnclosingStrongest(*store, above);
    if (!strongest.ok()) return strongest.status();
    if (!strongest->has_value() || **strongest <= gate.inputs.effective_tier) continue;
    gate.decision.state = TrustState::kLowered;
    gate.decision.status =
        MakeError(absl::StatusCode::kFailedPrecondition, "isolation-tier-lowered",
                  absl::StrCat("this project lies inside ", above, ", which ran on the ",
                               TierName(**strongest), " tier; a project below it cannot ask for ",
                               TierName(gate.inputs.effective_tier),
                               " unless you review its config and run `np-exec trust` in it"),
                  {{"enclosing_project", above},
                   {"recorded_tier", TierName(**strongest)},
                   {"tier", TierName(gate.inputs.effective_tier)}});
    return gate;
  }
  return gate;
}

absl::Status RecordSpawnRan(const TrustGate& gate, uid_t uid) {
  if (!gate.in_project) return absl::OkStatus();
  const Tier asked = gate.inputs.file_tier;
  auto raises = [asked](const std::optional<TrustRecord>& record) {
    return !record.has_value() || asked > record->strongest;
  };
  const bool copy_raises = gate.path_key.has_value() && raises(gate.path_record);
  // Nothing to raise: skip the lock and the write on the common path.
  if (!raises(gate.inputs.record) && !copy_raises) return absl::OkStatus();
  absl::StatusOr<StateStore> store = StateStore::Open(gate.store_dir, uid);
  if (!store.ok()) return store.status();
  for (const std::string& key : {gate.subject.key, gate.path_key.value_or("")}) {
    if (key.empty()) continue;
    absl::StatusOr<TrustRecord> written =
        store->Update(key, [&](const std::optional<TrustRecord>& current) {
          return RecordAfterSpawn(current, key, gate.inputs);
        });
    if (!written.ok()) return written.status();
  }
  return absl::OkStatus();
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
