// Issue 17: `isolation.container.home` and `home_seed` as the config parser
// reads them, and what trust makes of a project asking for them.
#include "core/config.h"
#include "core/errors.h"
#include "core/trust.h"
#include "gtest/gtest.h"

namespace np {
namespace {

using nlohmann::json;

json Container(const json& container) {
  return json{{"isolation", {{"tier", "container"}, {"container", container}}}};
}

TEST(AgentHomeConfigTest, EphemeralIsTheDefault) {
  absl::StatusOr<ProjectConfig> config = ParseProjectConfig(json::object());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->container.persistent_home);
  EXPECT_TRUE(config->container.home_seed.empty());
  config = ParseProjectConfig(Container({{"home", "ephemeral"}}));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->container.persistent_home);
}

TEST(AgentHomeConfigTest, PersistentWithSeedsNormalised) {
  absl::StatusOr<ProjectConfig> config = ParseProjectConfig(Container(
      {{"home", "persistent"},
       {"home_seed", {".claude.json", "./.codex//config.toml", ".claude.json", ".config/gh/"}}}));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->container.persistent_home);
  EXPECT_EQ(config->container.home_seed,
            (std::vector<std::string>{".claude.json", ".codex/config.toml", ".config/gh"}));
}

TEST(AgentHomeConfigTest, WrongValuesAreCodedErrors) {
  const std::vector<json> bad = {
      {{"home", "Persistent"}},
      {{"home", true}},
      {{"home", nullptr}},
      {{"home", "persistent"}, {"home_seed", ".claude.json"}},
      {{"home", "persistent"}, {"home_seed", {"/etc/shadow"}}},
      {{"home", "persistent"}, {"home_seed", {"../other-user/.ssh/id_rsa"}}},
      {{"home", "persistent"}, {"home_seed", {".config/../../etc"}}},
      {{"home", "persistent"}, {"home_seed", {""}}},
      {{"home", "persistent"}, {"home_seed", {"."}}},
      {{"home", "persistent"}, {"home_seed", {"./"}}},
      {{"home", "persistent"}, {"home_seed", {std::string("a\0b", 3)}}},
      {{"home", "persistent"}, {"home_seed", {"a\nb"}}},
      {{"home", "persistent"}, {"home_seed", {42}}},
      {{"home", "persistent"}, {"home_seed", {std::string(5000, 'a')}}},
      // A seed is copied into a persistent home only.
      {{"home_seed", {".claude.json"}}},
      {{"home", "ephemeral"}, {"home_seed", {".claude.json"}}},
  };
  for (const json& container : bad) {
    absl::StatusOr<ProjectConfig> config = ParseProjectConfig(Container(container));
    ASSERT_FALSE(config.ok()) << container.dump();
    EXPECT_EQ(ErrorCode(config.status()), "isolation-invalid-value") << container.dump();
  }
}

TEST(AgentHomeConfigTest, TypoIsAnUnknownKeyWithSuggestion) {
  absl::StatusOr<ProjectConfig> config = ParseProjectConfig(Container({{"hom", "persistent"}}));
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(ErrorCode(config.status()), "isolation-unknown-key");
  EXPECT_EQ(ErrorDetails(config.status())["suggestion"], "isolation.container.home");
}

TEST(AgentHomeConfigTest, OperatorPersistentHomeLetsTheProjectSeed) {
  ContainerConfig base;
  ASSERT_TRUE(ParseOperatorContainer(Container({{"home", "persistent"}}), base).ok());
  EXPECT_TRUE(base.persistent_home);
  absl::StatusOr<ProjectConfig> config =
      ParseProjectConfig(Container({{"home_seed", {".gitconfig"}}}), base);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->container.persistent_home);
  EXPECT_EQ(config->container.home_seed, std::vector<std::string>{".gitconfig"});
}

// A project asking for a persistent home or seeds widens the tier: refused
// until the operator trusts exactly that content, and again after an edit.
TEST(AgentHomeConfigTest, PersistentHomeAndSeedsNeedTrust) {
  const json file = Container({{"home", "persistent"}, {"home_seed", {".claude.json"}}});
  TrustInputs inputs;
  inputs.config_exists = true;
  inputs.sha256 = ConfigSha256(file);
  inputs.file_tier = Tier::kContainer;
  inputs.effective_tier = Tier::kContainer;
  inputs.widening = WideningKeys(file);
  EXPECT_EQ(inputs.widening, (std::vector<std::string>{"isolation.container.home",
                                                       "isolation.container.home_seed"}));
  TrustDecision untrusted = DecideTrust(inputs);
  EXPECT_EQ(untrusted.state, TrustState::kUntrusted);
  EXPECT_EQ(ErrorCode(untrusted.status), "isolation-config-untrusted");

  inputs.record = TrustCurrentConfig(std::nullopt, "k", inputs, "now");
  EXPECT_TRUE(DecideTrust(inputs).status.ok());

  const json edited = Container({{"home", "persistent"}, {"home_seed", {".ssh/id_rsa"}}});
  inputs.sha256 = ConfigSha256(edited);
  inputs.widening = WideningKeys(edited);
  TrustDecision changed = DecideTrust(inputs);
  EXPECT_EQ(changed.state, TrustState::kChanged);
  EXPECT_EQ(ErrorCode(changed.status), "isolation-config-untrusted");

  // The default, spelled out, needs none.
  EXPECT_TRUE(
      WideningKeys(Container({{"home", "ephemeral"}, {"home_seed", json::array()}})).empty());
}

}  // namespace
}  // namespace np
