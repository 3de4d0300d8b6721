#include "launcher/verbs_trust.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "core/config_file.h"
#include "core/errors.h"
#include "core/trust_review.h"
#include "launcher/output.h"
#include "launcher/spawn_facts.h"
#include "launcher/verbs.h"

namespace np {
namespace {

// The value a dotted widening key names in the raw config.
nlohmann::json ValueAt(const nlohmann::json& root, const std::string& dotted) {
  const nlohmann::json* node = &root;
  for (absl::string_view part : absl::StrSplit(dotted, '.')) {
    if (!node->is_object()) return nullptr;
    auto it = node->find(std::string(part));
    if (it == node->end()) return nullptr;
    node = &*it;
  }
  return *node;
}

nlohmann::json WideningJson(const TrustSubject& subject) {
  nlohmann::json out = nlohmann::json::array();
  for (const std::string& key : WideningKeys(subject.raw_config)) {
    out.push_back({{"key", key}, {"value", ValueAt(subject.raw_config, key)}});
  }
  return out;
}

std::string WideningText(const nlohmann::json& widening) {
  if (widening.empty()) {
    return "  no widening keys: this content needs no trust to run; the record also accepts its "
           "tier for the ratchet\n";
  }
  std::string text = "  widening keys (the sandbox gets more than the defaults):\n";
  for (const nlohmann::json& item : widening) {
    absl::StrAppend(&text, "    - ", item["key"].get<std::string>(), " = ", DumpJson(item["value"]),
                    "\n");
  }
  return text;
}

// The changes since the content trusted before, as JSON and as text.
struct Review {
  nlohmann::json json;
  std::string text;
};

std::string Shown(const nlohmann::json& value) {
  return value.is_null() ? std::string("(unset)") : DumpJson(value);
}

// `inputs` are TrustInputsFor the subject and the store's record.
Review ReviewOf(const TrustSubject& subject, const TrustInputs& inputs,
                const TrustReviewContext& context) {
  Review review;
  const std::optional<TrustRecord>& record = inputs.record;
  const bool trusted_before = record.has_value() && record->trusted_sha256.has_value();
  if (!trusted_before) {
    review.json["compared_with"] = "nothing trusted before";
    review.text = "  nothing of this project was trusted before\n";
  } else if (TrustedContent(inputs)) {
    review.json["compared_with"] = "the same content";
    review.text = absl::StrCat("  unchanged since you trusted it (", record->trusted_at, ")\n");
  } else if (!record->trusted_config.has_value()) {
    review.json["compared_with"] = "a content not kept";
    review.text =
        absl::StrCat("  changed since you trusted it (", record->trusted_at,
                     "); that record kept only its hash, so the change cannot be shown\n");
  } else {
    review.json["compared_with"] = "the content trusted before";
    nlohmann::json changes = nlohmann::json::array();
    review.text = absl::StrCat("  changes since you trusted it (", record->trusted_at, "):\n");
    for (const ConfigChange& change : ConfigChanges(*record->trusted_config, inputs.config)) {
      changes.push_back({{"key", change.key}, {"before", change.before}, {"after", change.after}});
      absl::StrAppend(&review.text, "    ", change.key, ": ", Shown(change.before), " -> ",
                      Shown(change.after), "\n");
    }
    review.json["changes"] = changes;
  }
  const std::vector<std::string> warnings = RiskWarnings(subject.container, context.home);
  review.json["warnings"] = warnings;
  if (!warnings.empty()) {
    absl::StrAppend(&review.text, "  look twice:\n");
    for (const std::string& warning : warnings)
      absl::StrAppend(&review.text, "    ! ", warning, "\n");
  }
  // A user the project chose is named as the ids it gets in the image, so
  // "image" is never trusted without saying who that is.
  if (context.user.has_value()) {
    const nlohmann::json& user = *context.user;
    review.json["user"] = user;
    absl::StrAppend(&review.text, "  runs as (uid:gid in ", user["image"].get<std::string>(), "): ",
                    user.contains("ids")
                        ? user["ids"].get<std::string>()
                        : absl::StrCat("refused at every spawn, ", user["why"].get<std::string>()),
                    "\n");
  }
  return review;
}

absl::Status Declined(const std::string& project) {
  return MakeError(absl::StatusCode::kCancelled, "trust-declined",
                   absl::StrCat("nothing was trusted for ", project,
                                "; its spawns stay refused until you run `np-exec trust` there and "
                                "answer yes (or `np-exec trust --yes`)"),
                   {{"project", project}});
}

}  // namespace

std::string TrustTimestampNow() {
  const time_t now = time(nullptr);
  struct tm utc;
  gmtime_r(&now, &utc);
  return absl::StrFormat("%04d-%02d-%02dT%02d:%02d:%02dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                         utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec);
}

TrustInputs TrustInputsFor(const TrustSubject& subject, const std::optional<TrustRecord>& record) {
  TrustInputs inputs;
  inputs.record = record;
  inputs.config_exists = subject.config_exists;
  inputs.config = CanonicalPart(subject.raw_config);
  inputs.sha256 = CanonicalPartSha256(inputs.config);
  inputs.file_tier = subject.file_tier;
  inputs.effective_tier = subject.effective_tier;
  inputs.widening = WideningKeys(subject.raw_config);
  return inputs;
}

absl::StatusOr<TrustSubject> LoadTrustSubject(const Settings& settings) {
  if (settings.project_root.empty()) {
    return MakeError(absl::StatusCode::kFailedPrecondition, "not-in-project",
                     "np-exec trust runs in a project (a folder with .nubos-pilot/ above the "
                     "working directory)");
  }
  // The settings' one read of the project: its real path and the config's
  // bytes, so what is trusted is what was planned (never a second read).
  TrustSubject subject;
  subject.project_real = settings.project_root;
  subject.config_exists = settings.config_exists;
  subject.raw_config = settings.raw_config;
  // Parsed again so what is trusted is exactly what the hash covers; a config
  // that does not validate is refused with its own code, never trusted.
  absl::StatusOr<ProjectConfig> parsed = ParseProjectConfig(subject.raw_config);
  if (!parsed.ok()) return parsed.status();
  subject.file_tier = ProjectFileTier(*parsed);
  subject.container = parsed->container;
  subject.effective_tier = settings.resolved.tier;
  absl::StatusOr<std::string> key = ProjectStoreKey(subject.project_real, settings.git.get());
  if (!key.ok()) return key.status();
  subject.key = *std::move(key);
  return subject;
}

namespace {

// `np-exec trust`: the review, the operator's yes, the record.
absl::StatusOr<TrustVerbOutput> TrustConfig(const TrustSubject& subject, StateStore& store,
                                            absl::string_view now,
                                            const TrustReviewContext& context) {
  TrustVerbOutput output;
  const nlohmann::json widening = WideningJson(subject);
  const std::string sha = ConfigSha256(subject.raw_config);
  absl::StatusOr<std::optional<TrustRecord>> before = store.Read(subject.key);
  if (!before.ok()) return before.status();
  const Review review = ReviewOf(subject, TrustInputsFor(subject, *before), context);
  const std::string about =
      absl::StrCat("  sha256: ", sha, "\n  tier: ", TierName(subject.file_tier), "\n",
                   WideningText(widening), review.text);
  if (context.confirm && !context.confirm(absl::StrCat(
                             "the config of ", subject.project_real,
                             subject.config_exists ? "" : " (no config file)", "\n", about))) {
    return Declined(subject.project_real);
  }
  absl::StatusOr<TrustRecord> record =
      store.Update(subject.key, [&](const std::optional<TrustRecord>& current) {
        return TrustCurrentConfig(current, subject.key, TrustInputsFor(subject, current), now);
      });
  if (!record.ok()) return record.status();
  output.json = {
      {"project", subject.project_real},     {"trusted", true},      {"sha256", sha},
      {"tier", TierName(subject.file_tier)}, {"widening", widening}, {"review", review.json},
      {"record", TrustRecordToJson(*record)}};
  if (review.json.contains("user")) output.json["user"] = review.json["user"];
  output.text = absl::StrCat("trusted the config of ", subject.project_real,
                             subject.config_exists ? "" : " (no config file)", "\n",
                             context.confirm ? std::string() : about);
  return output;
}

// `np-exec trust --show`: the record and what the current config would need.
absl::StatusOr<TrustVerbOutput> ShowTrust(const TrustSubject& subject, StateStore& store,
                                          const TrustReviewContext& context) {
  TrustVerbOutput output;
  const nlohmann::json widening = WideningJson(subject);
  const std::string sha = ConfigSha256(subject.raw_config);
  absl::StatusOr<std::optional<TrustRecord>> record = store.Read(subject.key);
  if (!record.ok()) return record.status();
  const TrustInputs inputs = TrustInputsFor(subject, *record);
  const TrustDecision decision = DecideTrust(inputs);
  const Review review = ReviewOf(subject, inputs, context);
  output.json = {
      {"project", subject.project_real},
      {"key", subject.key},
      {"record", record->has_value() ? TrustRecordToJson(**record) : nullptr},
      {"current", {{"sha256", sha}, {"tier", TierName(subject.file_tier)}, {"widening", widening}}},
      {"state", TrustStateName(decision.state)},
      {"review", review.json}};
  if (review.json.contains("user")) output.json["user"] = review.json["user"];
  output.text = absl::StrCat("project: ", subject.project_real,
                             "\n  trust: ", TrustStateName(decision.state));
  if (record->has_value()) {
    const TrustRecord& r = **record;
    absl::StrAppend(&output.text, "\n  strongest tier it ran on: ", TierName(r.strongest));
    absl::StrAppend(&output.text, "\n  trusted: ",
                    r.trusted_sha256.has_value()
                        ? absl::StrCat(*r.trusted_sha256, " (tier ", TierName(r.trusted_tier), ", ",
                                       r.trusted_at, ")")
                        : std::string("nothing"));
  } else {
    absl::StrAppend(&output.text, "\n  no record yet");
  }
  absl::StrAppend(&output.text, "\n  current config: ", sha, "\n", WideningText(widening),
                  review.text);
  return output;
}

// `np-exec trust --revoke`: the trust forgotten, the ratchet kept.
absl::StatusOr<TrustVerbOutput> RevokeTrustOf(const TrustSubject& subject, StateStore& store) {
  TrustVerbOutput output;
  absl::StatusOr<std::optional<TrustRecord>> before = store.Read(subject.key);
  if (!before.ok()) return before.status();
  const bool had = before->has_value() && (*before)->trusted_sha256.has_value();
  std::optional<TrustRecord> after;
  if (had) {
    absl::StatusOr<TrustRecord> record =
        store.Update(subject.key, [](const std::optional<TrustRecord>& current) {
          return current.has_value() ? RevokeTrust(*current) : TrustRecord{};
        });
    if (!record.ok()) return record.status();
    after = *record;
  }
  output.json = {{"project", subject.project_real},
                 {"revoked", had},
                 {"record", after.has_value() ? TrustRecordToJson(*after) : nullptr}};
  output.text = had ? absl::StrCat("forgot the trust of ", subject.project_real,
                                   "; the ratchet (strongest tier it ran on) stays\n")
                    : absl::StrCat("nothing was trusted for ", subject.project_real, "\n");
  return output;
}

}  // namespace

absl::StatusOr<TrustVerbOutput> RunTrustVerb(TrustVerbMode mode, const TrustSubject& subject,
                                             StateStore& store, absl::string_view now,
                                             const TrustReviewContext& context) {
  switch (mode) {
    case TrustVerbMode::kTrust:
      return TrustConfig(subject, store, now, context);
    case TrustVerbMode::kShow:
      return ShowTrust(subject, store, context);
    case TrustVerbMode::kRevoke:
      return RevokeTrustOf(subject, store);
  }
  return absl::InternalError("unknown trust mode");
}

// Asks on the terminal (stdin and stderr), one line: "y" or "yes" trusts.
bool AskOnTerminal(const std::string& review) {
  WriteAll(
      2, absl::StrCat("np-exec is about to trust ", review, "Trust exactly this content? [y/N] "));
  std::string answer;
  char c;
  while (answer.size() < 64) {
    const ssize_t n = read(0, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || c == '\n') break;
    answer.push_back(c);
  }
  const std::string word(absl::StripAsciiWhitespace(absl::AsciiStrToLower(answer)));
  return word == "y" || word == "yes";
}

absl::StatusOr<TrustVerbOutput> RunTrustVerbOn(TrustVerbMode mode, const Settings& settings,
                                               const HostFacts& host, TrustReviewContext context) {
  absl::StatusOr<TrustSubject> subject = LoadTrustSubject(settings);
  if (!subject.ok()) return subject.status();
  absl::StatusOr<StateStore> store = OpenStateStore(host);
  if (!store.ok()) return store.status();
  context.home = host.home;
  return RunTrustVerb(mode, *subject, *store, TrustTimestampNow(), context);
}

absl::StatusOr<Outcome> VerbTrust(const CommandLine& cl, const HostFacts& host) {
  const TrustVerbMode mode = cl.trust_show     ? TrustVerbMode::kShow
                             : cl.trust_revoke ? TrustVerbMode::kRevoke
                                               : TrustVerbMode::kTrust;
  // Inside a project only: its config's own errors are the verb's.
  absl::StatusOr<Settings> settings =
      LoadSettings({host.cwd, OperatorConfigPath(host), host.env_tier, false});
  if (!settings.ok()) return settings.status();
  TrustReviewContext context;
  if (mode != TrustVerbMode::kRevoke) context.user = DescribeProjectUser(*settings, host);
  // On a terminal the operator is asked; a script says --yes, and without a
  // terminal running the verb is the approval, as it always was.
  if (mode == TrustVerbMode::kTrust && !cl.trust_yes && !cl.json && host.stdin_tty &&
      isatty(2) == 1) {
    context.confirm = AskOnTerminal;
  }
  absl::StatusOr<TrustVerbOutput> output = RunTrustVerbOn(mode, *settings, host, context);
  if (!output.ok()) return output.status();
  if (cl.json) {
    WriteJson(output->json);
  } else {
    WriteAll(1, output->text);
  }
  return Outcome{0};
}

}  // namespace np
