// Trust and the tier ratchet: which project configs need the operator's
// `np-exec trust`, and whether a spawn may run given what the operator state
// store remembers of the project.
//
// A project's config may come from a repository nobody reviewed. Two rules
// keep it from opening the container tier up (ADR-0029: never silently
// downgrade; the project and nothing else):
//   - widening: keys that give the sandbox more than the defaults (network,
//     mounts, env names, another user, a weaker runtime, pulling images, a
//     persistent home) run only once the operator trusted that exact content,
//     recorded as the SHA-256 of the canonical form of np-exec's part;
//   - the ratchet: once a project ran on a tier, a config that asks for less
//     (edited, deleted, renamed away) is refused until the operator trusts it.
// The operator's own file and NP_EXEC_TIER are the operator's and need no
// trust. Pure: the store's records come in and go out as values.
#ifndef NP_EXEC_CORE_TRUST_H_
#define NP_EXEC_CORE_TRUST_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/config.h"
#include "core/tier.h"
#include "nlohmann/json.hpp"

namespace np {

// What the store remembers of one project.
struct TrustRecord {
  std::string key;                            // The project's store key (state_store.h).
  Tier strongest = Tier::kDirect;             // The strongest tier its config asked for at a spawn.
  std::optional<std::string> trusted_sha256;  // Hex SHA-256 of the trusted canonical config.
  Tier trusted_tier = Tier::kDirect;          // The tier that content asked for.
  std::string trusted_at;                     // When, as the launcher wrote it.
  // The trusted content itself (CanonicalPart), so a later change can be shown
  // key by key; records written before it was kept have none.
  std::optional<nlohmann::json> trusted_config;
  bool operator==(const TrustRecord& other) const;
};

// The dotted names of the widening keys in a project config (the parsed
// file, an object): every key of `isolation` and `isolation.container` widens
// unless it is one of `tier`, `interpose`, `image`, `images`, `memory`, `cpus`,
// `workdir`, `protect`, or has its default-or-narrower value (`network`
// "none", `runtime` "docker" or "podman", `pull` "never", `home` "ephemeral",
// `user` null, empty `mounts`, `env`, `allow_hosts`, `home_seed`). Unknown
// keys widen, so a key added later fails closed. Sorted.
std::vector<std::string> WideningKeys(const nlohmann::json& project_config);

// np-exec's part of the config: `isolation` and `workflow.worktree_isolation`
// ({} when neither is set).
nlohmann::json CanonicalPart(const nlohmann::json& project_config);

// CanonicalPart as JSON with sorted keys and no whitespace.
std::string CanonicalConfig(const nlohmann::json& project_config);

// Lower-case hex SHA-256 of a CanonicalPart in canonical form.
std::string CanonicalPartSha256(const nlohmann::json& part);

// Lower-case hex SHA-256 of CanonicalConfig.
std::string ConfigSha256(const nlohmann::json& project_config);

// The tier the project's own file asks for: its `isolation.tier` (default
// direct), raised to worktree by `workflow.worktree_isolation`.
Tier ProjectFileTier(const ProjectConfig& config);

// The state `status` reports.
enum class TrustState { kNotNeeded, kTrusted, kUntrusted, kChanged, kLowered };
absl::string_view TrustStateName(TrustState state);

struct TrustInputs {
  std::optional<TrustRecord> record;    // nullopt: the store has none.
  bool config_exists = false;           // The project's config file is there.
  std::string sha256;                   // ConfigSha256 of the current file ({} when absent).
  Tier file_tier = Tier::kDirect;       // ProjectFileTier of the current file.
  Tier effective_tier = Tier::kDirect;  // What would run (floors included).
  std::vector<std::string> widening;    // WideningKeys of the current file.
  nlohmann::json config = nlohmann::json::object();  // CanonicalPart of the current file.
};

// Whether the record trusted exactly the current content: its trusted_sha256
// is the current sha256 and its trusted_tier the current file_tier.
bool TrustedContent(const TrustInputs& inputs);

struct TrustDecision {
  TrustState state = TrustState::kNotNeeded;
  // OK: the spawn may run. Otherwise `isolation-tier-lowered` or
  // `isolation-config-untrusted` (FailedPrecondition), nothing runs (125).
  absl::Status status;
};

// The decision table, first matching row wins ("trusted content" means the
// record's trusted_sha256 is the current sha256 and its trusted_tier the
// current file_tier):
//   1. a record, file_tier < strongest, effective_tier < strongest, and not
//      trusted content: lowered, refused `isolation-tier-lowered`;
//   2. effective tier container, widening keys, trusted content: trusted, run;
//   3. effective tier container, widening keys, another content trusted
//      before: changed, refused `isolation-config-untrusted`, naming the keys
//      that changed when the record kept the trusted content;
//   4. effective tier container, widening keys, nothing trusted: untrusted,
//      refused `isolation-config-untrusted`;
//   5. otherwise run: trusted when the content is trusted, else not-needed.
TrustDecision DecideTrust(const TrustInputs& inputs);

// The record after a spawn that ran: strongest raised to file_tier (a new
// record for `key` when there was none); trust unchanged.
TrustRecord RecordAfterSpawn(const std::optional<TrustRecord>& record, absl::string_view key,
                             const TrustInputs& inputs);

// What `np-exec trust` records: the current content trusted with its tier,
// and strongest reset to that tier (the operator accepts a lowered tier).
TrustRecord TrustCurrentConfig(const std::optional<TrustRecord>& record, absl::string_view key,
                               const TrustInputs& inputs, absl::string_view now);

// `np-exec trust --revoke`: trust forgotten, the ratchet kept.
TrustRecord RevokeTrust(const TrustRecord& record);

// The record as stored: {"version":1,"key","strongest_tier","trusted":null
// or {"sha256","tier","at"[,"config"]}}; "config" is the trusted content, and
// a stored one whose hash is not "sha256" is `state-store-invalid`.
nlohmann::json TrustRecordToJson(const TrustRecord& record);

// Parses a stored record strictly; anything unexpected, or a key other than
// `expected_key`, is `state-store-invalid`, never "no record".
absl::StatusOr<TrustRecord> TrustRecordFromJson(const nlohmann::json& value,
                                                absl::string_view expected_key);

}  // namespace np

#endif  // NP_EXEC_CORE_TRUST_H_
