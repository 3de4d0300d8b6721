// `np-exec trust [--show | --revoke]`: the operator approves the exact content
// of np-exec's part of a project's config (trust.h), shows what the store
// remembers, or forgets the approval. Needs no prompt: running it in the
// project is the approval. Not wired into the command line here; cli.cc and
// app.cc call VerbTrust. Touches the state store and reads the project file.
#ifndef NP_EXEC_LAUNCHER_VERBS_TRUST_H_
#define NP_EXEC_LAUNCHER_VERBS_TRUST_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/settings.h"
#include "core/trust.h"
#include "launcher/cli.h"
#include "launcher/host.h"
#include "launcher/outcome.h"
#include "launcher/state_store.h"
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
// records the current content's hash and tier (trust.h TrustCurrentConfig)
// and lists its widening keys with their values; kShow prints the record and
// the state DecideTrust gives now; kRevoke forgets the trust (the ratchet
// stays). Codes: the store's.
absl::StatusOr<TrustVerbOutput> RunTrustVerb(TrustVerbMode mode, const TrustSubject& subject,
                                             StateStore& store, absl::string_view now);

// The whole verb (`np-exec trust [--show | --revoke] [--json]`): loads the
// settings from the working directory, opens the store ($XDG_STATE_HOME or
// HOME), runs the mode and writes its output.
absl::StatusOr<Outcome> VerbTrust(const CommandLine& cl, const HostFacts& host);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_VERBS_TRUST_H_
