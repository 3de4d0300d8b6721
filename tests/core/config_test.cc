#include "core/config.h"

#include <string>
#include <vector>

#include "core/errors.h"
#include "gtest/gtest.h"

namespace np {
namespace {

using nlohmann::json;

// {"isolation": {"container": {key: value}}}
json WithContainer(const std::string& key, const json& value) {
  return json{{"isolation", {{"container", {{key, value}}}}}};
}

TEST(ConfigTest, EmptyObjectGivesDefaults) {
  absl::StatusOr<ProjectConfig> config = ParseProjectConfig(json::object());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->tier.has_value());
  EXPECT_FALSE(config->worktree_isolation);
  const ContainerConfig& c = config->container;
  EXPECT_EQ(c.runtime, Runtime::kDocker);
  EXPECT_EQ(c.image, "node:22-bookworm-slim");
  EXPECT_EQ(c.network, Network::kNone);
  EXPECT_EQ(c.user.kind, UserSpec::Kind::kCaller);
  EXPECT_FALSE(c.memory.has_value());
  EXPECT_FALSE(c.cpus.has_value());
  EXPECT_TRUE(c.mounts.empty());
  EXPECT_TRUE(c.env.empty());
  EXPECT_FALSE(c.workdir.has_value());
  EXPECT_FALSE(c.pull_missing);
}

// Two faults: the tier's is named, as the reference names it.
TEST(ConfigTest, AnInvalidTierIsNamedBeforeAnyOtherFault) {
  for (const char* text : {
           R"({"isolation":{"tier":"bogus","contaner":{}}})",
           R"({"isolation":{"tier":"bogus","container":{"network":"everywhere"}}})",
           R"({"workflow":{"worktree_isolation":"yes"},"isolation":{"tier":"bogus"}})",
           R"({"Isolation":{},"isolation":{"tier":7}})",
           R"({"isolation":{"interpose":"node","tier":"bogus"}})",
       }) {
    absl::StatusOr<ProjectConfig> parsed = ParseProjectConfig(json::parse(text));
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(ErrorCode(parsed.status()), "isolation-invalid-tier") << text;
  }
}

TEST(ConfigTest, KeysOfOtherPartsAreIgnored) {
  json root = {{"model", "x"},
               {"workflow", {{"parallel", 3}, {"worktree_isolation", false}}},
               {"phases", {1, 2, 3}}};
  EXPECT_TRUE(ParseProjectConfig(root).ok());
}

TEST(ConfigTest, NonObjectRootIsInvalidShape) {
  for (const json& root : {json::array(), json(1), json("x"), json(nullptr), json(true)}) {
    absl::StatusOr<ProjectConfig> config = ParseProjectConfig(root);
    ASSERT_FALSE(config.ok()) << root;
    EXPECT_EQ(ErrorCode(config.status()), "config-invalid-shape") << root;
  }
}

TEST(ConfigTest, EveryTierNameIsAccepted) {
  struct Case {
    const char* name;
    Tier tier;
  };
  for (const Case& c : {Case{"direct", Tier::kDirect}, Case{"worktree", Tier::kWorktree},
                        Case{"container", Tier::kContainer}}) {
    absl::StatusOr<ProjectConfig> config =
        ParseProjectConfig(json{{"isolation", {{"tier", c.name}}}});
    ASSERT_TRUE(config.ok()) << c.name;
    ASSERT_TRUE(config->tier.has_value());
    EXPECT_EQ(*config->tier, c.tier);
  }
}

TEST(ConfigTest, EveryValidContainerValueIsAccepted) {
  json root = R"({"isolation": {"tier": "container", "container": {
      "runtime": "podman", "image": "ghcr.io/org/node@sha256:abc", "network": "bridge",
      "user": "1000:1000", "memory": "512m", "cpus": 1.5,
      "mounts": [{"source": "/opt/data", "target": "/data"},
                 {"source": "/opt/cache", "target": "/cache", "mode": "rw"}],
      "env": ["API_KEY", "_X1"], "workdir": "/work/", "pull": "missing"}},
      "workflow": {"worktree_isolation": true}})"_json;
  absl::StatusOr<ProjectConfig> config = ParseProjectConfig(root);
  ASSERT_TRUE(config.ok()) << config.status();
  const ContainerConfig& c = config->container;
  EXPECT_TRUE(config->worktree_isolation);
  EXPECT_EQ(c.runtime, Runtime::kPodman);
  EXPECT_EQ(c.image, "ghcr.io/org/node@sha256:abc");
  EXPECT_EQ(c.network, Network::kBridge);
  EXPECT_EQ(c.user.kind, UserSpec::Kind::kExplicit);
  EXPECT_EQ(c.user.value, "1000:1000");
  EXPECT_EQ(c.memory, "512m");
  EXPECT_EQ(c.cpus, "1.5");
  ASSERT_EQ(c.mounts.size(), 2u);
  EXPECT_FALSE(c.mounts[0].writable);  // ro is the default.
  EXPECT_TRUE(c.mounts[1].writable);
  EXPECT_EQ(c.mounts[1].target, "/cache");
  EXPECT_EQ(c.env, (std::vector<std::string>{"API_KEY", "_X1"}));
  EXPECT_EQ(c.workdir, "/work");
  EXPECT_TRUE(c.pull_missing);
}

TEST(ConfigTest, NullValuesMeanDefaults) {
  json root = R"({"isolation": {"container": {"user": null, "memory": null, "cpus": null,
                                              "workdir": null}}})"_json;
  absl::StatusOr<ProjectConfig> config = ParseProjectConfig(root);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->container.user.kind, UserSpec::Kind::kCaller);
  EXPECT_FALSE(config->container.memory.has_value());
  EXPECT_FALSE(config->container.cpus.has_value());
  EXPECT_FALSE(config->container.workdir.has_value());
}

TEST(ConfigTest, UserImageAndLimitsAsNumbers) {
  json root = R"({"isolation": {"container": {"user": "image", "memory": 536870912,
                                              "cpus": 2}}})"_json;
  absl::StatusOr<ProjectConfig> config = ParseProjectConfig(root);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->container.user.kind, UserSpec::Kind::kImage);
  // The runtime gets the text; the value as written is kept for status.
  EXPECT_EQ(config->container.memory, "536870912");
  EXPECT_EQ(config->container.cpus, "2");
  EXPECT_EQ(config->container.memory_as_written, json(536870912));
  EXPECT_TRUE(config->container.cpus_as_written.is_number_integer());
  EXPECT_EQ(config->container.cpus_as_written, json(2));
}

// Several agent CLIs in one project: `images` picks a program's image by its
// file name, over the operator's, and every other program runs in `image`.
TEST(ConfigTest, ImagesPickAProgramsImageByItsName) {
  ContainerConfig base;
  base.images["gemini"] = "np-agent-gemini:local";
  base.images["codex"] = "operator-codex:1";
  json root = R"({"isolation": {"container": {"image": "np-agent-claude:local",
      "images": {"codex": "np-agent-codex:local", "node": "node:22"}}}})"_json;
  absl::StatusOr<ProjectConfig> config = ParseProjectConfig(root, base);
  ASSERT_TRUE(config.ok()) << config.status();
  const ContainerConfig& c = config->container;
  EXPECT_EQ(ImageFor(c, "codex"), "np-agent-codex:local");
  EXPECT_EQ(ImageFor(c, "/usr/local/bin/codex"), "np-agent-codex:local");
  EXPECT_EQ(ImageFor(c, "gemini"), "np-agent-gemini:local");
  EXPECT_EQ(ImageFor(c, "claude"), "np-agent-claude:local");
  EXPECT_EQ(ImageFor(c, "codex-other"), "np-agent-claude:local");
  EXPECT_EQ(ImageFor(c, ""), "np-agent-claude:local");

  for (const json& bad : {json("np-agent-codex:local"), json::array(), json({{"a/b", "x:1"}}),
                          json({{"..", "x:1"}}), json({{"", "x:1"}}), json({{"tab\t", "x:1"}})}) {
    absl::StatusOr<ProjectConfig> refused = ParseProjectConfig(WithContainer("images", bad));
    ASSERT_FALSE(refused.ok()) << bad.dump();
    EXPECT_EQ(ErrorCode(refused.status()), "isolation-invalid-value") << bad.dump();
  }
  absl::StatusOr<ProjectConfig> flag =
      ParseProjectConfig(WithContainer("images", {{"codex", "--privileged"}}));
  EXPECT_EQ(ErrorCode(flag.status()), "isolation-invalid-image");
  EXPECT_EQ(ErrorDetails(flag.status())["key"], "isolation.container.images.codex");
  absl::StatusOr<ProjectConfig> empty =
      ParseProjectConfig(WithContainer("images", {{"codex", ""}}));
  EXPECT_EQ(ErrorCode(empty.status()), "isolation-no-image");
  // The image's own user, chosen through `images`, is the project's choice.
  absl::StatusOr<ProjectConfig> image_user = ParseProjectConfig(
      R"({"isolation": {"container": {"user": "image", "images": {"a": "b:1"}}}})"_json);
  ASSERT_TRUE(image_user.ok()) << image_user.status();
  EXPECT_TRUE(image_user->container.user_from_project);
}

TEST(ConfigTest, LimitsAsStringsStayStrings) {
  json root = R"({"isolation": {"container": {"memory": "2g", "cpus": "1.5"}}})"_json;
  absl::StatusOr<ProjectConfig> config = ParseProjectConfig(root);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->container.memory_as_written, json("2g"));
  EXPECT_EQ(config->container.cpus_as_written, json("1.5"));
}

// The reference's resolveTier reads null as its default (its test IS-5).
TEST(ConfigTest, TierNullIsTheDefault) {
  absl::StatusOr<ProjectConfig> config =
      ParseProjectConfig(json{{"isolation", {{"tier", nullptr}}}});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->tier.has_value());
}

TEST(ConfigTest, MountWithAColonNamesTheField) {
  absl::StatusOr<ProjectConfig> config = ParseProjectConfig(
      WithContainer("mounts", {{{"source", "/s"}, {"target", "/t"}},
                               {{"source", "/data"}, {"target", "/d:ro"}, {"mode", "rw"}}}));
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(ErrorCode(config.status()), "isolation-mount-colon-in-path");
  EXPECT_EQ(ErrorDetails(config.status())["field"], "target");
  EXPECT_EQ(ErrorDetails(config.status())["key"], "isolation.container.mounts[1].target");
}

struct BadCase {
  std::string name;
  json root;
  std::string code;
};

TEST(ConfigTest, WrongTypesAndValuesAreCodedNeverCoerced) {
  const std::vector<BadCase> cases = {
      // isolation and isolation.tier
      {"IsolationString", {{"isolation", "container"}}, "isolation-invalid-value"},
      {"IsolationArray", {{"isolation", json::array()}}, "isolation-invalid-value"},
      {"TierUnknown", {{"isolation", {{"tier", "none"}}}}, "isolation-invalid-tier"},
      {"TierCase", {{"isolation", {{"tier", "Container"}}}}, "isolation-invalid-tier"},
      {"TierNumber", {{"isolation", {{"tier", 2}}}}, "isolation-invalid-tier"},
      {"TierSeven", {{"isolation", {{"tier", 7}}}}, "isolation-invalid-tier"},
      {"TierSevenString", {{"isolation", {{"tier", "7"}}}}, "isolation-invalid-tier"},
      {"TierEmpty", {{"isolation", {{"tier", ""}}}}, "isolation-invalid-tier"},
      {"TierBool", {{"isolation", {{"tier", true}}}}, "isolation-invalid-tier"},
      {"TierArray", {{"isolation", {{"tier", {"container"}}}}}, "isolation-invalid-tier"},
      {"ContainerString", {{"isolation", {{"container", "docker"}}}}, "isolation-invalid-value"},
      {"ContainerNull", {{"isolation", {{"container", nullptr}}}}, "isolation-invalid-value"},
      // workflow.worktree_isolation
      {"WorkflowString", {{"workflow", "x"}}, "isolation-invalid-value"},
      {"WorktreeString",
       {{"workflow", {{"worktree_isolation", "true"}}}},
       "isolation-invalid-value"},
      {"WorktreeNumber", {{"workflow", {{"worktree_isolation", 1}}}}, "isolation-invalid-value"},
      {"WorktreeNull",
       {{"workflow", {{"worktree_isolation", nullptr}}}},
       "isolation-invalid-value"},
      // runtime
      {"RuntimeUnknown", WithContainer("runtime", "lxc"), "isolation-invalid-runtime"},
      {"RuntimeNumber", WithContainer("runtime", 1), "isolation-invalid-runtime"},
      {"RuntimeNull", WithContainer("runtime", nullptr), "isolation-invalid-runtime"},
      // image
      {"ImageEmpty", WithContainer("image", ""), "isolation-no-image"},
      {"ImageNull", WithContainer("image", nullptr), "isolation-no-image"},
      {"ImageNumber", WithContainer("image", 22), "isolation-no-image"},
      {"ImageArray", WithContainer("image", {"node"}), "isolation-no-image"},
      {"ImageFlag", WithContainer("image", "--privileged"), "isolation-invalid-image"},
      {"ImageSpace", WithContainer("image", "node 22"), "isolation-invalid-image"},
      {"ImageNewline", WithContainer("image", "node\n"), "isolation-invalid-image"},
      {"ImageTooLong", WithContainer("image", std::string(600, 'a')), "isolation-invalid-image"},
      // network
      {"NetworkUnknown", WithContainer("network", "internet"), "isolation-invalid-network"},
      {"NetworkBool", WithContainer("network", false), "isolation-invalid-network"},
      {"NetworkNull", WithContainer("network", nullptr), "isolation-invalid-network"},
      // user
      {"UserNumber", WithContainer("user", 1000), "isolation-invalid-value"},
      {"UserBool", WithContainer("user", true), "isolation-invalid-value"},
      {"UserArray", WithContainer("user", {"a"}), "isolation-invalid-value"},
      {"UserEmpty", WithContainer("user", ""), "isolation-invalid-value"},
      {"UserFlag", WithContainer("user", "-root"), "isolation-invalid-value"},
      {"UserThreeParts", WithContainer("user", "a:b:c"), "isolation-invalid-value"},
      {"UserEmptyGroup", WithContainer("user", "a:"), "isolation-invalid-value"},
      {"UserSpace", WithContainer("user", "a b"), "isolation-invalid-value"},
      // memory and cpus
      {"MemoryBool", WithContainer("memory", true), "isolation-invalid-value"},
      {"MemoryArray", WithContainer("memory", {1}), "isolation-invalid-value"},
      {"MemoryObject", WithContainer("memory", json::object()), "isolation-invalid-value"},
      {"MemoryWords", WithContainer("memory", "lots"), "isolation-invalid-value"},
      {"MemoryNegative", WithContainer("memory", "-1g"), "isolation-invalid-value"},
      {"MemoryNegativeNumber", WithContainer("memory", -5), "isolation-invalid-value"},
      {"MemoryEmpty", WithContainer("memory", ""), "isolation-invalid-value"},
      {"CpusZero", WithContainer("cpus", 0), "isolation-invalid-value"},
      {"CpusZeroString", WithContainer("cpus", "0"), "isolation-invalid-value"},
      {"CpusNegative", WithContainer("cpus", -1), "isolation-invalid-value"},
      {"CpusWords", WithContainer("cpus", "two"), "isolation-invalid-value"},
      {"CpusBool", WithContainer("cpus", false), "isolation-invalid-value"},
      {"CpusFlag", WithContainer("cpus", "--privileged"), "isolation-invalid-value"},
      // mounts
      {"MountsObject", WithContainer("mounts", json::object()), "isolation-invalid-value"},
      {"MountsString", WithContainer("mounts", "/a:/b"), "isolation-invalid-value"},
      {"MountNotObject", WithContainer("mounts", {"/a"}), "isolation-bad-mount"},
      {"MountNull", WithContainer("mounts", json::array({nullptr})), "isolation-bad-mount"},
      {"MountNumber", WithContainer("mounts", json::array({7})), "isolation-bad-mount"},
      {"MountArray", WithContainer("mounts", json::array({json::array({"/a", "/b"})})),
       "isolation-bad-mount"},
      {"MountNoSource", WithContainer("mounts", {{{"target", "/t"}}}), "isolation-mount-no-source"},
      {"MountSourceNumber", WithContainer("mounts", {{{"source", 1}, {"target", "/t"}}}),
       "isolation-mount-no-source"},
      {"MountSourceNull", WithContainer("mounts", {{{"source", nullptr}, {"target", "/t"}}}),
       "isolation-mount-no-source"},
      {"MountSourceEmpty", WithContainer("mounts", {{{"source", ""}, {"target", "/t"}}}),
       "isolation-mount-no-source"},
      {"MountSourceBlank", WithContainer("mounts", {{{"source", " \t "}, {"target", "/t"}}}),
       "isolation-mount-no-source"},
      // The source is checked before the target, as in the reference.
      {"MountNeither", WithContainer("mounts", json::array({json::object()})),
       "isolation-mount-no-source"},
      {"MountNoTarget", WithContainer("mounts", {{{"source", "/s"}}}),
       "isolation-mount-bad-target"},
      {"MountTargetNull", WithContainer("mounts", {{{"source", "/s"}, {"target", nullptr}}}),
       "isolation-mount-bad-target"},
      {"MountTargetRelative", WithContainer("mounts", {{{"source", "/s"}, {"target", "t"}}}),
       "isolation-mount-bad-target"},
      {"MountTargetEmpty", WithContainer("mounts", {{{"source", "/s"}, {"target", ""}}}),
       "isolation-mount-bad-target"},
      // A relative target with a colon is first not absolute (the reference's order).
      {"MountTargetRelativeColon",
       WithContainer("mounts", {{{"source", "/s"}, {"target", "t:ro"}}}),
       "isolation-mount-bad-target"},
      {"MountTargetColon", WithContainer("mounts", {{{"source", "/s"}, {"target", "/t:rw"}}}),
       "isolation-mount-colon-in-path"},
      {"MountSourceColon", WithContainer("mounts", {{{"source", "/s:/etc"}, {"target", "/t"}}}),
       "isolation-mount-colon-in-path"},
      {"MountSourceRelativeColon", WithContainer("mounts", {{{"source", "s:x"}, {"target", "/t"}}}),
       "isolation-mount-colon-in-path"},
      // The mode is checked before the colon, as in the reference.
      {"MountColonAndBadMode",
       WithContainer("mounts", {{{"source", "/s:x"}, {"target", "/t"}, {"mode", "rwx"}}}),
       "isolation-mount-bad-mode"},
      {"MountModeUnknown",
       WithContainer("mounts", {{{"source", "/s"}, {"target", "/t"}, {"mode", "rwx"}}}),
       "isolation-mount-bad-mode"},
      {"MountModeBool",
       WithContainer("mounts", {{{"source", "/s"}, {"target", "/t"}, {"mode", true}}}),
       "isolation-mount-bad-mode"},
      {"MountModeUpper",
       WithContainer("mounts", {{{"source", "/s"}, {"target", "/t"}, {"mode", "RW"}}}),
       "isolation-mount-bad-mode"},
      {"MountUnknownKey",
       WithContainer("mounts", {{{"source", "/s"}, {"target", "/t"}, {"readonly", false}}}),
       "isolation-unknown-key"},
      // env
      {"EnvString", WithContainer("env", "API_KEY"), "isolation-invalid-value"},
      {"EnvObject", WithContainer("env", {{"API_KEY", "v"}}), "isolation-invalid-value"},
      {"EnvNumber", WithContainer("env", {1}), "isolation-bad-env-name"},
      {"EnvAssignment", WithContainer("env", {"API_KEY=secret"}), "isolation-bad-env-name"},
      {"EnvEmpty", WithContainer("env", {""}), "isolation-bad-env-name"},
      {"EnvDigit", WithContainer("env", {"1X"}), "isolation-bad-env-name"},
      {"EnvHome", WithContainer("env", {"HOME"}), "isolation-bad-env-name"},
      // workdir
      {"WorkdirNumber", WithContainer("workdir", 1), "isolation-invalid-value"},
      {"WorkdirRelative", WithContainer("workdir", "work"), "isolation-invalid-value"},
      {"WorkdirRoot", WithContainer("workdir", "/"), "isolation-invalid-value"},
      {"WorkdirDotDot", WithContainer("workdir", "/a/../b"), "isolation-invalid-value"},
      {"WorkdirComma", WithContainer("workdir", "/a,b"), "isolation-invalid-value"},
      {"WorkdirColon", WithContainer("workdir", "/a:b"), "isolation-invalid-value"},
      {"WorkdirNewline", WithContainer("workdir", "/a\nb"), "isolation-invalid-value"},
      {"WorkdirEmpty", WithContainer("workdir", ""), "isolation-invalid-value"},
      // pull
      {"PullAlways", WithContainer("pull", "always"), "isolation-invalid-value"},
      {"PullBool", WithContainer("pull", true), "isolation-invalid-value"},
  };
  for (const BadCase& c : cases) {
    absl::StatusOr<ProjectConfig> config = ParseProjectConfig(c.root);
    ASSERT_FALSE(config.ok()) << c.name << ": " << c.root;
    EXPECT_EQ(ErrorCode(config.status()), c.code) << c.name << ": " << config.status();
  }
}

TEST(ConfigTest, UnknownKeysAreRefusedWithSuggestion) {
  struct Case {
    json root;
    std::string key;
    std::string suggestion;  // "" when nothing is close.
  };
  const std::vector<Case> cases = {
      {{{"isolation", {{"tire", "container"}}}}, "isolation.tire", "isolation.tier"},
      {{{"isolation", {{"contianer", json::object()}}}},
       "isolation.contianer",
       "isolation.container"},
      {{{"isolation", {{"sandbox", true}}}}, "isolation.sandbox", ""},
      {WithContainer("imgae", "node"), "isolation.container.imgae", "isolation.container.image"},
      {WithContainer("netwrok", "none"), "isolation.container.netwrok",
       "isolation.container.network"},
      {WithContainer("privileged", true), "isolation.container.privileged", ""},
      {WithContainer("mounts", {{{"source", "/s"}, {"target", "/t"}, {"mdoe", "rw"}}}),
       "isolation.container.mounts[0].mdoe", "isolation.container.mounts[0].mode"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ProjectConfig> config = ParseProjectConfig(c.root);
    ASSERT_FALSE(config.ok()) << c.key;
    EXPECT_EQ(ErrorCode(config.status()), "isolation-unknown-key") << c.key;
    json details = ErrorDetails(config.status());
    EXPECT_EQ(details["key"], c.key);
    if (c.suggestion.empty()) {
      EXPECT_FALSE(details.contains("suggestion")) << c.key;
    } else {
      EXPECT_EQ(details["suggestion"], c.suggestion) << c.key;
      // The message is what a person reads; it must carry the suggestion.
      EXPECT_NE(std::string(config.status().message()).find(c.suggestion), std::string::npos);
    }
  }
}

TEST(ConfigTest, TypoCannotLeaveProjectOnDirect) {
  // The one typo ADR-0029 names: it must be an error, not a silent default.
  absl::StatusOr<ProjectConfig> config =
      ParseProjectConfig(json::parse(R"({"isolation": {"tire": "container"}})"));
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(ErrorCode(config.status()), "isolation-unknown-key");
}

TEST(ConfigTest, OperatorTierReadsOnlyTheTier) {
  struct Case {
    json root;
    std::optional<Tier> tier;
  };
  const std::vector<Case> cases = {
      {json::object(), std::nullopt},
      {{{"isolation", json::object()}}, std::nullopt},
      {{{"isolation", {{"tier", "container"}}}}, Tier::kContainer},
      {{{"isolation", {{"tier", "direct"}}}}, Tier::kDirect},
      {{{"isolation", {{"tier", nullptr}}}}, std::nullopt},
      {{{"other", 1}, {"isolation", {{"tier", "worktree"}}}}, Tier::kWorktree},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::optional<Tier>> tier = ParseOperatorTier(c.root);
    ASSERT_TRUE(tier.ok()) << c.root;
    EXPECT_EQ(*tier, c.tier) << c.root;
  }
}

TEST(ConfigTest, OperatorTierErrorsAreCoded) {
  struct Case {
    json root;
    std::string code;
  };
  const std::vector<Case> cases = {
      {json::array(), "config-invalid-shape"},
      {{{"isolation", "container"}}, "isolation-invalid-value"},
      {{{"isolation", {{"tier", "none"}}}}, "isolation-invalid-tier"},
      {{{"isolation", {{"tier", 1}}}}, "isolation-invalid-tier"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::optional<Tier>> tier = ParseOperatorTier(c.root);
    ASSERT_FALSE(tier.ok()) << c.root;
    EXPECT_EQ(ErrorCode(tier.status()), c.code) << c.root;
  }
}

TEST(ConfigTest, EnvTierEmptyMeansUnset) {
  absl::StatusOr<std::optional<Tier>> unset = ParseEnvTier("");
  ASSERT_TRUE(unset.ok());
  EXPECT_FALSE(unset->has_value());
  absl::StatusOr<std::optional<Tier>> container = ParseEnvTier("container");
  ASSERT_TRUE(container.ok());
  EXPECT_EQ(*container, Tier::kContainer);
  for (const char* bad : {"none", "Container", " ", "0"}) {
    absl::StatusOr<std::optional<Tier>> tier = ParseEnvTier(bad);
    ASSERT_FALSE(tier.ok()) << bad;
    EXPECT_EQ(ErrorCode(tier.status()), "isolation-invalid-tier") << bad;
  }
}

TEST(ConfigTest, EnvNamesFollowThePortableGrammar) {
  for (const char* good : {"A", "_", "API_KEY", "a1", "_1_", "PATH", "NODE_OPTIONS"}) {
    EXPECT_TRUE(ValidateEnvName(good).ok()) << good;
  }
  for (const char* bad :
       {"", "1A", "A=B", "A B", "A-B", "A.B", "HOME", "Ä", "-e", "A,B", "$A", "A\n"}) {
    absl::Status status = ValidateEnvName(bad);
    ASSERT_FALSE(status.ok()) << bad;
    EXPECT_EQ(ErrorCode(status), "isolation-bad-env-name") << bad;
  }
  EXPECT_EQ(ErrorCode(ValidateEnvName(std::string(256, 'A'))), "isolation-bad-env-name");
  EXPECT_TRUE(ValidateEnvName(std::string(255, 'A')).ok());
}

TEST(ConfigTest, EnvListSplitsOnCommas) {
  absl::StatusOr<std::vector<std::string>> names = ParseEnvList("A,B_2,_C");
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (std::vector<std::string>{"A", "B_2", "_C"}));
}

// As the reference's wrap: items are trimmed and empty ones dropped.
TEST(ConfigTest, EnvListTrimsNamesAndDropsEmptyItems) {
  struct Case {
    const char* list;
    std::vector<std::string> names;
  };
  const std::vector<Case> cases = {
      {" FOO , BAR ", {"FOO", "BAR"}},
      {"FOO,,BAR", {"FOO", "BAR"}},
      {"FOO,", {"FOO"}},
      {",FOO", {"FOO"}},
      {"\tFOO\n", {"FOO"}},
      {"", {}},
      {" , ,", {}},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::vector<std::string>> names = ParseEnvList(c.list);
    ASSERT_TRUE(names.ok()) << c.list << ": " << names.status();
    EXPECT_EQ(*names, c.names) << c.list;
  }
}

TEST(ConfigTest, EnvListNameStillMalformedAfterTrimmingIsRefused) {
  for (const char* bad : {"A=1", "A,HOME", "A B", " A B ", "FOO, 1X", "A,B=2 ", "A\v,=B"}) {
    absl::StatusOr<std::vector<std::string>> list = ParseEnvList(bad);
    ASSERT_FALSE(list.ok()) << bad;
    EXPECT_EQ(ErrorCode(list.status()), "isolation-bad-env-name") << bad;
  }
}

TEST(ConfigTest, NetworkNames) {
  EXPECT_EQ(NetworkName(Network::kNone), "none");
  EXPECT_EQ(NetworkName(Network::kBridge), "bridge");
  EXPECT_EQ(NetworkName(Network::kHost), "host");
}

}  // namespace
}  // namespace np

namespace np {
namespace {

TEST(ConfigNearMissTest, TopLevelKeysAlmostNpExecsAreRefused) {
  for (const char* key :
       {"Isolation", "ISOLATION", "isolaton", "isollation", "workfow", "Workflow"}) {
    absl::StatusOr<ProjectConfig> config = ParseProjectConfig({{key, nlohmann::json::object()}});
    ASSERT_FALSE(config.ok()) << key;
    EXPECT_EQ(ErrorCode(config.status()), "isolation-unknown-key") << key;
    absl::StatusOr<std::optional<Tier>> floor =
        ParseOperatorTier({{key, nlohmann::json::object()}});
    EXPECT_FALSE(floor.ok()) << key;
  }
  for (const char* key : {"spawn", "security", "learnings", "runtime", "model_profile"}) {
    EXPECT_TRUE(ParseProjectConfig({{key, 1}}).ok()) << key;
  }
}

}  // namespace
}  // namespace np
