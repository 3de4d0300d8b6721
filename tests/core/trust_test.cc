#include "core/trust.h"

#include <string>
#include <vector>

#include "core/errors.h"
#include "core/sha256.h"
#include "gtest/gtest.h"

namespace np {
namespace {

using nlohmann::json;

json Container(const json& container) { return {{"isolation", {{"container", container}}}}; }

TEST(TrustTest, EveryContainerKeyIsClassified) {
  struct Case {
    const char* key;
    json value;
    bool widens;
  };
  const std::vector<Case> cases = {
      {"network", "none", false},
      {"network", "bridge", true},
      {"network", "host", true},
      {"network", "allowlist", true},
      {"allow_hosts", json::array({"example.com"}), true},
      {"allow_hosts", json::array(), false},
      {"mounts", json::array({{{"source", "/home/u/.ssh"}, {"target", "/s"}}}), true},
      {"mounts", json::array(), false},
      {"env", json::array({"AWS_SECRET_ACCESS_KEY"}), true},
      {"env", json::array(), false},
      {"user", "image", true},
      {"user", "1000:1000", true},
      {"user", "root", true},
      {"user", nullptr, false},
      {"runtime", "bwrap", true},
      {"runtime", "docker", false},
      {"runtime", "podman", false},
      {"runtime", "something-new", true},
      {"pull", "missing", true},
      {"pull", "never", false},
      {"home", "persistent", true},
      {"home", "ephemeral", false},
      {"home_seed", json::array({".gitconfig"}), true},
      {"home_seed", json::array(), false},
      {"images", {{"codex", "np-agent-codex:local"}}, false},
      {"image", "evil:latest", false},
      {"memory", "512m", false},
      {"cpus", 2, false},
      {"workdir", "/work", false},
      {"protect", json::array({"scripts/"}), false},
      {"a_key_added_later", true, true},
  };
  for (const Case& c : cases) {
    std::vector<std::string> keys = WideningKeys(Container({{c.key, c.value}}));
    if (c.widens) {
      EXPECT_EQ(keys, std::vector<std::string>{std::string("isolation.container.") + c.key})
          << c.key << "=" << c.value.dump();
    } else {
      EXPECT_TRUE(keys.empty()) << c.key << "=" << c.value.dump();
    }
  }
}

TEST(TrustTest, IsolationLevelKeysAreClassified) {
  EXPECT_TRUE(WideningKeys({{"isolation", {{"tier", "container"}}}}).empty());
  EXPECT_TRUE(WideningKeys({{"isolation", {{"interpose", json::array({"python3"})}}}}).empty());
  EXPECT_TRUE(WideningKeys({{"workflow", {{"worktree_isolation", true}}}}).empty());
  EXPECT_TRUE(WideningKeys(json::object()).empty());
  EXPECT_TRUE(WideningKeys({{"other", {{"network", "host"}}}}).empty());
  EXPECT_EQ(WideningKeys({{"isolation", {{"later", 1}}}}),
            std::vector<std::string>{"isolation.later"});
  EXPECT_EQ(WideningKeys({{"isolation", {{"container", "x"}}}}),
            std::vector<std::string>{"isolation.container"});
  EXPECT_EQ(WideningKeys(Container({{"network", "host"}, {"env", {"A"}}, {"image", "x"}})),
            (std::vector<std::string>{"isolation.container.env", "isolation.container.network"}));
}

TEST(TrustTest, CanonicalFormCoversOnlyNpExecsPartSortedWithoutWhitespace) {
  const json a = json::parse(
      R"({"zeta": 1, "isolation": {"tier": "container", "container": {"network": "none",
          "image": "x"}}, "workflow": {"worktree_isolation": true, "other": 3}})");
  const json b = json::parse(
      R"({"workflow": {"other": 4, "worktree_isolation": true}, "isolation": {"container":
          {"image": "x", "network": "none"}, "tier": "container"}, "milestones": [1]})");
  EXPECT_EQ(CanonicalConfig(a),
            R"({"isolation":{"container":{"image":"x","network":"none"},"tier":"container"},)"
            R"("workflow":{"worktree_isolation":true}})");
  EXPECT_EQ(CanonicalConfig(a), CanonicalConfig(b));
  EXPECT_EQ(ConfigSha256(a), ConfigSha256(b));
  EXPECT_EQ(ConfigSha256(a), Sha256Hex(CanonicalConfig(a)));
  EXPECT_EQ(CanonicalConfig(json::object()), "{}");
  EXPECT_NE(ConfigSha256(a), ConfigSha256(Container({{"image", "y"}})));
}

TEST(TrustTest, ProjectFileTierHonoursTheWorktreeFloor) {
  ProjectConfig config;
  EXPECT_EQ(ProjectFileTier(config), Tier::kDirect);
  config.worktree_isolation = true;
  EXPECT_EQ(ProjectFileTier(config), Tier::kWorktree);
  config.tier = Tier::kContainer;
  EXPECT_EQ(ProjectFileTier(config), Tier::kContainer);
}

TrustRecord Record(Tier strongest, std::optional<std::string> sha = std::nullopt,
                   Tier trusted_tier = Tier::kDirect) {
  TrustRecord record;
  record.key = "k";
  record.strongest = strongest;
  record.trusted_sha256 = sha;
  record.trusted_tier = trusted_tier;
  return record;
}

TEST(TrustTest, DecisionTable) {
  const std::string kSha(64, 'a');
  const std::string kOther(64, 'b');
  const std::vector<std::string> kWide = {"isolation.container.network"};
  constexpr Tier D = Tier::kDirect;
  constexpr Tier W = Tier::kWorktree;
  constexpr Tier C = Tier::kContainer;
  struct Row {
    const char* name;
    std::optional<TrustRecord> record;
    bool exists;
    Tier file;
    Tier effective;
    std::vector<std::string> widening;
    TrustState state;
    const char* code;  // "" runs.
  };
  const std::vector<Row> rows = {
      {"no record, defaults", std::nullopt, false, D, D, {}, TrustState::kNotNeeded, ""},
      {"no record, container", std::nullopt, true, C, C, {}, TrustState::kNotNeeded, ""},
      {"edited down", Record(C), true, D, D, {}, TrustState::kLowered, "isolation-tier-lowered"},
      {"edited to worktree",
       Record(C),
       true,
       W,
       W,
       {},
       TrustState::kLowered,
       "isolation-tier-lowered"},
      {"deleted", Record(C), false, D, D, {}, TrustState::kLowered, "isolation-tier-lowered"},
      {"worktree floor gone",
       Record(W),
       true,
       D,
       D,
       {},
       TrustState::kLowered,
       "isolation-tier-lowered"},
      {"lowered but floor holds", Record(C), true, D, C, {}, TrustState::kNotNeeded, ""},
      {"lowered, widening, floor holds", Record(C), true, D, C, kWide, TrustState::kUntrusted,
       "isolation-config-untrusted"},
      {"lowered content trusted", Record(C, kSha, D), true, D, D, {}, TrustState::kTrusted, ""},
      {"lowered, other content trusted",
       Record(C, kOther, D),
       true,
       D,
       D,
       {},
       TrustState::kLowered,
       "isolation-tier-lowered"},
      {"trusted hash, other tier",
       Record(C, kSha, W),
       true,
       D,
       D,
       {},
       TrustState::kLowered,
       "isolation-tier-lowered"},
      {"raised", Record(W), true, C, C, {}, TrustState::kNotNeeded, ""},
      {"widening, no record", std::nullopt, true, C, C, kWide, TrustState::kUntrusted,
       "isolation-config-untrusted"},
      {"widening, record without trust", Record(C), true, C, C, kWide, TrustState::kUntrusted,
       "isolation-config-untrusted"},
      {"widening trusted", Record(C, kSha, C), true, C, C, kWide, TrustState::kTrusted, ""},
      {"widening changed", Record(C, kOther, C), true, C, C, kWide, TrustState::kChanged,
       "isolation-config-untrusted"},
      {"widening via operator floor", std::nullopt, true, D, C, kWide, TrustState::kUntrusted,
       "isolation-config-untrusted"},
      {"widening, not container", std::nullopt, true, D, D, kWide, TrustState::kNotNeeded, ""},
      {"no widening, trusted content",
       Record(C, kSha, C),
       true,
       C,
       C,
       {},
       TrustState::kTrusted,
       ""},
      {"no widening, other content",
       Record(C, kOther, C),
       true,
       C,
       C,
       {},
       TrustState::kNotNeeded,
       ""},
  };
  for (const Row& row : rows) {
    TrustInputs inputs;
    inputs.record = row.record;
    inputs.config_exists = row.exists;
    inputs.sha256 = kSha;
    inputs.file_tier = row.file;
    inputs.effective_tier = row.effective;
    inputs.widening = row.widening;
    TrustDecision decision = DecideTrust(inputs);
    EXPECT_EQ(TrustStateName(decision.state), TrustStateName(row.state)) << row.name;
    EXPECT_EQ(ErrorCode(decision.status), row.code) << row.name;
    if (!decision.status.ok()) {
      EXPECT_EQ(decision.status.code(), absl::StatusCode::kFailedPrecondition) << row.name;
    }
    if (decision.state == TrustState::kUntrusted || decision.state == TrustState::kChanged) {
      EXPECT_EQ(ErrorDetails(decision.status)["widening"], json(row.widening)) << row.name;
    }
  }
}

TEST(TrustTest, RecordsAfterSpawnTrustAndRevoke) {
  TrustInputs inputs;
  inputs.sha256 = std::string(64, 'c');
  inputs.file_tier = Tier::kWorktree;
  TrustRecord fresh = RecordAfterSpawn(std::nullopt, "key", inputs);
  EXPECT_EQ(fresh.key, "key");
  EXPECT_EQ(fresh.strongest, Tier::kWorktree);
  EXPECT_FALSE(fresh.trusted_sha256.has_value());
  inputs.file_tier = Tier::kContainer;
  EXPECT_EQ(RecordAfterSpawn(fresh, "key", inputs).strongest, Tier::kContainer);
  inputs.file_tier = Tier::kDirect;  // A spawn that ran lower (a floor held) never lowers it.
  EXPECT_EQ(RecordAfterSpawn(Record(Tier::kContainer), "k", inputs).strongest, Tier::kContainer);

  TrustRecord trusted = TrustCurrentConfig(Record(Tier::kContainer), "k", inputs, "2026-12-01");
  EXPECT_EQ(trusted.strongest, Tier::kDirect);
  EXPECT_EQ(trusted.trusted_sha256, inputs.sha256);
  EXPECT_EQ(trusted.trusted_tier, Tier::kDirect);
  inputs.record = trusted;
  EXPECT_TRUE(DecideTrust(inputs).status.ok());
  TrustRecord revoked = RevokeTrust(trusted);
  EXPECT_FALSE(revoked.trusted_sha256.has_value());
  EXPECT_EQ(revoked.strongest, trusted.strongest);
}

TEST(TrustTest, StoredRecordsRoundTripAndAnythingElseIsInvalid) {
  TrustRecord record = Record(Tier::kContainer, std::string(64, 'f'), Tier::kContainer);
  record.trusted_at = "2026-12-01T08:00:00.000Z";
  absl::StatusOr<TrustRecord> back = TrustRecordFromJson(TrustRecordToJson(record), "k");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, record);
  TrustRecord plain = Record(Tier::kWorktree);
  back = TrustRecordFromJson(TrustRecordToJson(plain), "k");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, plain);

  const json good = TrustRecordToJson(record);
  std::vector<json> bad = {json::array(), json("x"), json::object()};
  auto with = [&good](const char* key, const json& value) {
    json copy = good;
    copy[key] = value;
    return copy;
  };
  bad.push_back(with("version", 2));
  bad.push_back(with("key", "another project"));
  bad.push_back(with("strongest_tier", "none"));
  bad.push_back(with("strongest_tier", 2));
  bad.push_back(with("trusted", "yes"));
  bad.push_back(with("trusted", {{"sha256", "abc"}, {"tier", "direct"}, {"at", ""}}));
  bad.push_back(
      with("trusted", {{"sha256", std::string(64, 'A')}, {"tier", "direct"}, {"at", ""}}));
  bad.push_back(with("trusted", {{"sha256", std::string(64, 'a')}, {"tier", "x"}, {"at", ""}}));
  bad.push_back(with("extra", true));
  json no_trusted = good;
  no_trusted.erase("trusted");
  bad.push_back(no_trusted);
  for (const json& value : bad) {
    absl::StatusOr<TrustRecord> parsed = TrustRecordFromJson(value, "k");
    ASSERT_FALSE(parsed.ok()) << value.dump();
    EXPECT_EQ(ErrorCode(parsed.status()), "state-store-invalid") << value.dump();
  }
}

// `trust` keeps the content it approved, so a later change is named key by
// key; a kept content whose hash is not the approved one is never believed.
TEST(TrustTest, TheTrustedContentIsKeptAndMustMatchItsHash) {
  const json file = Container({{"network", "bridge"}, {"image", "a:1"}});
  TrustInputs inputs;
  inputs.sha256 = ConfigSha256(file);
  inputs.config = CanonicalPart(file);
  inputs.file_tier = Tier::kContainer;
  inputs.effective_tier = Tier::kContainer;
  inputs.widening = WideningKeys(file);
  TrustRecord trusted = TrustCurrentConfig(std::nullopt, "k", inputs, "2026-12-02");
  ASSERT_TRUE(trusted.trusted_config.has_value());
  EXPECT_EQ(*trusted.trusted_config, CanonicalPart(file));
  absl::StatusOr<TrustRecord> back = TrustRecordFromJson(TrustRecordToJson(trusted), "k");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, trusted);

  // Another content under the approved hash (an edited record).
  json forged = TrustRecordToJson(trusted);
  forged["trusted"]["config"] = CanonicalPart(Container({{"network", "host"}}));
  absl::StatusOr<TrustRecord> parsed = TrustRecordFromJson(forged, "k");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(ErrorCode(parsed.status()), "state-store-invalid");
  forged["trusted"]["config"] = "not an object";
  EXPECT_FALSE(TrustRecordFromJson(forged, "k").ok());

  // Only the image changed: the refusal names it, not every widening key.
  const json edited = Container({{"network", "bridge"}, {"image", "b:2"}});
  TrustInputs now = inputs;
  now.record = trusted;
  now.sha256 = ConfigSha256(edited);
  now.config = CanonicalPart(edited);
  now.widening = WideningKeys(edited);
  TrustDecision decision = DecideTrust(now);
  EXPECT_EQ(decision.state, TrustState::kChanged);
  EXPECT_EQ(ErrorCode(decision.status), "isolation-config-untrusted");
  EXPECT_NE(decision.status.message().find("(changed: isolation.container.image)"),
            std::string::npos)
      << decision.status.message();
  EXPECT_EQ(ErrorDetails(decision.status)["changed"], json({"isolation.container.image"}));

  // A record from before the content was kept still works, without the names.
  TrustRecord old = trusted;
  old.trusted_config.reset();
  back = TrustRecordFromJson(TrustRecordToJson(old), "k");
  ASSERT_TRUE(back.ok()) << back.status();
  now.record = old;
  decision = DecideTrust(now);
  EXPECT_EQ(ErrorCode(decision.status), "isolation-config-untrusted");
  EXPECT_EQ(decision.status.message().find("(changed:"), std::string::npos);

  // A content too large for a store record is trusted by its hash alone.
  json big = Container({{"env", json::array()}});
  for (int i = 0; i < 4000; ++i) {
    big["isolation"]["container"]["env"].push_back("VARIABLE_NUMBER_" + std::to_string(i));
  }
  inputs.sha256 = ConfigSha256(big);
  inputs.config = CanonicalPart(big);
  TrustRecord large = TrustCurrentConfig(std::nullopt, "k", inputs, "2026-12-02");
  EXPECT_EQ(large.trusted_sha256, inputs.sha256);
  EXPECT_FALSE(large.trusted_config.has_value());
  EXPECT_FALSE(RevokeTrust(trusted).trusted_config.has_value());
}

}  // namespace
}  // namespace np
