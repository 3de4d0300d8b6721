// `np-exec trust [--show | --revoke] [--yes]`: the operator approves the exact
// content of np-exec's part of a project's config (trust.h), shows what the
// store remembers, or forgets the approval. Before it records, it shows what
// changed since the content trusted last (core/trust_review.h) and warns on
// the risky widenings; on a terminal it asks (--yes does not), elsewhere
// running it is the approval. Not wired into the command line here; cli.cc and
// app.cc call VerbTrust. Touches the state store and reads the project file.
#ifndef NP_EXEC_LAUNCHER_VERBS_TRUST_H_
#define NP_EXEC_LAUNCHER_VERBS_TRUST_H_

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/settings.h"
#include "core/trust.h"
#include "launcher/cli.h"
#include "launcher/host.h"
#include "launcher/outcome.h"
#include "launcher/state/state_store.h"
#include "nlohmann/json.hpp"

namespace np {

enum class TrustVerbMode { kTrust, kShow, kRevoke };

// The project a trust verb acts on, with its config as read and as parsed.
struct TrustSubject {
  std::string project_real;             // Real path of the project root.
  std::string key;                      // ProjectStoreKey(project_real).
  nlohmann::json raw_config;            // The project file ({} when missing or empty).
  bool config_exists = false;           // The file is there.
  Tier file_tier = Tier::kDirect;       // ProjectFileTier.
  Tier effective_tier = Tier::kDirect;  // Settings' resolved tier.
  ContainerConfig container;            // The project file's own, parsed.
};

// The inputs DecideTrust judges for `subject` against the store's `record`.
TrustInputs TrustInputsFor(const TrustSubject& subject, const std::optional<TrustRecord>& record);

// What kTrust shows before it records, and who is asked.
struct TrustReviewContext {
  std::string home;                    // The operator's HOME, for RiskWarnings.
  std::optional<nlohmann::json> user;  // DescribeProjectUser's, when the project chose a user.
  // Asked with the review before anything is recorded; false declines
  // (`trust-declined`, nothing recorded). Empty: no question.
  std::function<bool(const std::string& review)> confirm;
};

// Builds the subject from loaded settings: re-reads the project file for its
// raw JSON. Codes: `not-in-project` (settings found no project), the config
// file's own codes, `project-git-invalid`.
absl::StatusOr<TrustSubject> LoadTrustSubject(const Settings& settings);

// What a trust verb reports: `json` for --json, `text` for people.
struct TrustVerbOutput {
  nlohmann::json json;
  std::string text;
};

// Carries out one mode against `store`; `now` stamps a new trust. kTrust
// records the current content's hash, tier and content (trust.h
// TrustCurrentConfig) and lists its widening keys with their values, the
// changes since the content trusted before and the risky widenings; kShow
// prints the record, the state DecideTrust gives now and the same review;
// kRevoke forgets the trust (the ratchet stays). Codes: the store's,
// `trust-declined`.
absl::StatusOr<TrustVerbOutput> RunTrustVerb(TrustVerbMode mode, const TrustSubject& subject,
                                             StateStore& store, absl::string_view now,
                                             const TrustReviewContext& review = {});

// RunTrustVerb on the settings' project, in the store of `host`, now; the
// context's `home` is the host's.
absl::StatusOr<TrustVerbOutput> RunTrustVerbOn(TrustVerbMode mode, const Settings& settings,
                                               const HostFacts& host, TrustReviewContext context);

// Now, as a trust record stamps it (UTC, ISO 8601 to the second).
std::string TrustTimestampNow();

// The whole verb (`np-exec trust [--show | --revoke] [--json]`): loads the
// settings from the working directory, opens the store ($XDG_STATE_HOME or
// HOME), runs the mode and writes its output.
absl::StatusOr<Outcome> VerbTrust(const CommandLine& cl, const HostFacts& host);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_VERBS_TRUST_H_
