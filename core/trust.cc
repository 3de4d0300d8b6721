#include "core/trust.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/errors.h"
#include "core/sha256.h"
#include "core/trust_review.h"

namespace np {
namespace {

using nlohmann::json;

bool Empty(const json& value) { return value.is_null() || (value.is_array() && value.empty()); }

// Whether `key` of `isolation.container`, set to `value`, gives the sandbox
// more than the defaults. Anything not known to be harmless widens.
bool ContainerKeyWidens(const std::string& key, const json& value) {
  static const char* const kNeverWidens[] = {"image", "images",  "memory",
                                             "cpus",  "workdir", "protect"};
  for (const char* name : kNeverWidens) {
    if (key == name) return false;
  }
  if (key == "network") return value != "none";
  if (key == "runtime") {
    // A runtime weaker than the default (or one np-exec does not know) widens.
    absl::StatusOr<Runtime> runtime =
        value.is_string() ? ParseRuntime(value.get<std::string>())
                          : absl::StatusOr<Runtime>(absl::InvalidArgumentError("not a name"));
    return !runtime.ok() || TraitsOf(*runtime).weaker_than_default;
  }
  if (key == "pull") return value != "never";
  if (key == "home") return value != "ephemeral";
  // A kept sandbox shares its keeper, its mounts and its lifetime across
  // spawns (core/warm.h): the operator's to allow, or a trusted project's.
  if (key == "warm") return !value.is_null() && value != false;
  if (key == "user") return !value.is_null();
  if (key == "mounts" || key == "env" || key == "allow_hosts" || key == "home_seed" ||
      key == "credentials") {
    return !Empty(value);
  }
  return true;
}

absl::Status StoreInvalid(absl::string_view why, const json& details = nullptr) {
  return MakeError(absl::StatusCode::kDataLoss, "state-store-invalid",
                   absl::StrCat("np-exec's state record ", why,
                                "; np-exec refuses the container tier rather than guess. Remove "
                                "the record and run `np-exec trust` in the project"),
                   details);
}

bool IsHex64(const std::string& text) {
  return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return absl::ascii_isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f');
         });
}

absl::StatusOr<Tier> TierField(const json& object, const char* name) {
  auto it = object.find(name);
  if (it == object.end() || !it->is_string()) return StoreInvalid(absl::StrCat("has no ", name));
  absl::StatusOr<Tier> tier = ParseTier(it->get<std::string>());
  if (!tier.ok()) return StoreInvalid(absl::StrCat("has an unknown ", name));
  return *tier;
}

// The trusted content is kept in the record only when it fits well inside a
// store record (64 KiB) and survives a dump and a parse with the approved
// hash, since a record whose content does not match its hash is invalid.
constexpr size_t kMaxKeptConfigBytes = 32 * 1024;

// nlohmann's objects are ordered maps, so dump() sorts keys at every level;
// -1 means no whitespace.
std::string CanonicalText(const json& part) {
  return part.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<json> KeptConfig(const json& config, const std::string& sha256) {
  const std::string text = CanonicalText(config);
  if (!config.is_object() || text.size() > kMaxKeptConfigBytes || Sha256Hex(text) != sha256) {
    return std::nullopt;
  }
  json again = json::parse(text, nullptr, false);
  if (again.is_discarded() || CanonicalPartSha256(again) != sha256) return std::nullopt;
  return again;
}

}  // namespace

bool TrustedContent(const TrustInputs& inputs) {
  return inputs.record.has_value() && inputs.record->trusted_sha256 == inputs.sha256 &&
         inputs.record->trusted_tier == inputs.file_tier;
}

bool TrustRecord::operator==(const TrustRecord& other) const {
  return key == other.key && strongest == other.strongest &&
         trusted_sha256 == other.trusted_sha256 && trusted_tier == other.trusted_tier &&
         trusted_at == other.trusted_at && trusted_config == other.trusted_config;
}

std::vector<std::string> WideningKeys(const json& project_config) {
  std::vector<std::string> keys;
  if (!project_config.is_object()) return keys;
  auto isolation = project_config.find("isolation");
  if (isolation == project_config.end() || !isolation->is_object()) return keys;
  for (const auto& item : isolation->items()) {
    if (item.key() == "tier" || item.key() == "interpose") continue;
    if (item.key() != "container") {
      keys.push_back(absl::StrCat("isolation.", item.key()));
      continue;
    }
    if (!item.value().is_object()) {
      keys.push_back("isolation.container");
      continue;
    }
    for (const auto& key : item.value().items()) {
      if (ContainerKeyWidens(key.key(), key.value())) {
        keys.push_back(absl::StrCat("isolation.container.", key.key()));
      }
    }
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

json CanonicalPart(const json& project_config) {
  json part = json::object();
  if (project_config.is_object()) {
    if (auto it = project_config.find("isolation"); it != project_config.end()) {
      part["isolation"] = *it;
    }
    auto workflow = project_config.find("workflow");
    if (workflow != project_config.end() && workflow->is_object()) {
      if (auto wt = workflow->find("worktree_isolation"); wt != workflow->end()) {
        part["workflow"] = {{"worktree_isolation", *wt}};
      }
    }
  }
  return part;
}

std::string CanonicalConfig(const json& project_config) {
  return CanonicalText(CanonicalPart(project_config));
}

std::string CanonicalPartSha256(const json& part) { return Sha256Hex(CanonicalText(part)); }

std::string ConfigSha256(const json& project_config) {
  return Sha256Hex(CanonicalConfig(project_config));
}

Tier ProjectFileTier(const ProjectConfig& config) {
  Tier tier = config.tier.value_or(Tier::kDirect);
  if (config.worktree_isolation && tier < Tier::kWorktree) tier = Tier::kWorktree;
  return tier;
}

absl::string_view TrustStateName(TrustState state) {
  switch (state) {
    case TrustState::kNotNeeded:
      return "not-needed";
    case TrustState::kTrusted:
      return "trusted";
    case TrustState::kUntrusted:
      return "untrusted";
    case TrustState::kChanged:
      return "changed";
    case TrustState::kLowered:
      return "lowered";
  }
  return "untrusted";
}

TrustDecision DecideTrust(const TrustInputs& inputs) {
  TrustDecision decision;
  const bool trusted = TrustedContent(inputs);
  if (inputs.record.has_value() && inputs.file_tier < inputs.record->strongest &&
      inputs.effective_tier < inputs.record->strongest && !trusted) {
    decision.state = TrustState::kLowered;
    const absl::string_view recorded = TierName(inputs.record->strongest);
    decision.status = MakeError(
        absl::StatusCode::kFailedPrecondition, "isolation-tier-lowered",
        absl::StrCat("this project ran on tier ", recorded, ", and its config ",
                     inputs.config_exists
                         ? absl::StrCat("now asks for ", TierName(inputs.file_tier))
                         : std::string("file is gone"),
                     "; np-exec does not silently downgrade. If you made this change, run "
                     "`np-exec trust` in the project to accept it"),
        {{"recorded", recorded},
         {"requested", TierName(inputs.file_tier)},
         {"effective", TierName(inputs.effective_tier)},
         {"config_exists", inputs.config_exists}});
    return decision;
  }
  if (inputs.effective_tier == Tier::kContainer && !inputs.widening.empty()) {
    if (trusted) {
      decision.state = TrustState::kTrusted;
      return decision;
    }
    const bool changed = inputs.record.has_value() && inputs.record->trusted_sha256.has_value();
    decision.state = changed ? TrustState::kChanged : TrustState::kUntrusted;
    // What changed, key by key, when the record kept what was trusted.
    std::vector<std::string> changed_keys;
    if (changed && inputs.record->trusted_config.has_value()) {
      changed_keys = ChangedKeys(ConfigChanges(*inputs.record->trusted_config, inputs.config));
    }
    std::string what = "you have not trusted it";
    if (changed) {
      what = changed_keys.empty() ? std::string("has changed since you trusted it")
                                  : absl::StrCat("has changed since you trusted it (changed: ",
                                                 absl::StrJoin(changed_keys, ", "), ")");
    }
    json details = {{"widening", inputs.widening},
                    {"sha256", inputs.sha256},
                    {"state", TrustStateName(decision.state)}};
    if (!changed_keys.empty()) details["changed"] = changed_keys;
    decision.status = MakeError(
        absl::StatusCode::kFailedPrecondition, "isolation-config-untrusted",
        absl::StrCat("this project's config widens the container tier (",
                     absl::StrJoin(inputs.widening, ", "), ") and ", what,
                     "; a repository's config may come from anyone. Review it (`np-exec trust "
                     "--show`) and run `np-exec trust` in the project to allow exactly this "
                     "content"),
        std::move(details));
    return decision;
  }
  decision.state = trusted ? TrustState::kTrusted : TrustState::kNotNeeded;
  return decision;
}

TrustRecord RecordAfterSpawn(const std::optional<TrustRecord>& record, absl::string_view key,
                             const TrustInputs& inputs) {
  TrustRecord next = record.value_or(TrustRecord{});
  next.key = std::string(key);
  if (!record.has_value() || inputs.file_tier > next.strongest) next.strongest = inputs.file_tier;
  return next;
}

TrustRecord TrustCurrentConfig(const std::optional<TrustRecord>& record, absl::string_view key,
                               const TrustInputs& inputs, absl::string_view now) {
  TrustRecord next = record.value_or(TrustRecord{});
  next.key = std::string(key);
  next.strongest = inputs.file_tier;
  next.trusted_sha256 = inputs.sha256;
  next.trusted_tier = inputs.file_tier;
  next.trusted_at = std::string(now);
  next.trusted_config = KeptConfig(inputs.config, inputs.sha256);
  return next;
}

TrustRecord RevokeTrust(const TrustRecord& record) {
  TrustRecord next = record;
  next.trusted_sha256.reset();
  next.trusted_tier = Tier::kDirect;
  next.trusted_at.clear();
  next.trusted_config.reset();
  return next;
}

json TrustRecordToJson(const TrustRecord& record) {
  json trusted = nullptr;
  if (record.trusted_sha256.has_value()) {
    trusted = {{"sha256", *record.trusted_sha256},
               {"tier", TierName(record.trusted_tier)},
               {"at", record.trusted_at}};
    if (record.trusted_config.has_value()) trusted["config"] = *record.trusted_config;
  }
  return {{"version", 1},
          {"key", record.key},
          {"strongest_tier", TierName(record.strongest)},
          {"trusted", trusted}};
}

absl::StatusOr<TrustRecord> TrustRecordFromJson(const json& value, absl::string_view expected_key) {
  if (!value.is_object()) return StoreInvalid("is not a JSON object");
  for (const auto& item : value.items()) {
    if (item.key() != "version" && item.key() != "key" && item.key() != "strongest_tier" &&
        item.key() != "trusted") {
      return StoreInvalid("has an unknown field", {{"field", item.key()}});
    }
  }
  if (value.value("version", json()) != 1) return StoreInvalid("has an unknown version");
  auto key = value.find("key");
  if (key == value.end() || !key->is_string() || key->get<std::string>() != expected_key) {
    return StoreInvalid("belongs to another project", {{"expected", expected_key}});
  }
  TrustRecord record;
  record.key = key->get<std::string>();
  absl::StatusOr<Tier> strongest = TierField(value, "strongest_tier");
  if (!strongest.ok()) return strongest.status();
  record.strongest = *strongest;
  auto trusted = value.find("trusted");
  if (trusted == value.end()) return StoreInvalid("has no trusted field");
  if (trusted->is_null()) return record;
  const auto config = trusted->is_object() ? trusted->find("config") : trusted->end();
  const size_t fields = config == trusted->end() ? 3 : 4;
  if (!trusted->is_object() || trusted->size() != fields) {
    return StoreInvalid("has a malformed trust");
  }
  auto sha = trusted->find("sha256");
  auto at = trusted->find("at");
  if (sha == trusted->end() || !sha->is_string() || !IsHex64(sha->get<std::string>()) ||
      at == trusted->end() || !at->is_string()) {
    return StoreInvalid("has a malformed trust");
  }
  absl::StatusOr<Tier> tier = TierField(*trusted, "tier");
  if (!tier.ok()) return tier.status();
  record.trusted_sha256 = sha->get<std::string>();
  record.trusted_tier = *tier;
  record.trusted_at = at->get<std::string>();
  if (config != trusted->end()) {
    // What is shown as trusted must be what the hash approved.
    if (!config->is_object() || CanonicalPartSha256(*config) != *record.trusted_sha256) {
      return StoreInvalid("has a trusted config that does not match its sha256");
    }
    record.trusted_config = *config;
  }
  return record;
}

}  // namespace np
