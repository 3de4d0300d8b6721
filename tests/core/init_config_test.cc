#include "core/init_config.h"

#include "core/config.h"
#include "core/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace np {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

InitRuntimeState Up(Runtime runtime, std::vector<std::string> images = {}) {
  InitRuntimeState state;
  state.runtime = runtime;
  state.available = true;
  state.agent_images = std::move(images);
  return state;
}

InitRuntimeState Down(Runtime runtime, std::string why) {
  InitRuntimeState state;
  state.runtime = runtime;
  state.why_not = std::move(why);
  return state;
}

// The config init writes always parses as a project file.
ContainerConfig Parsed(const InitChoice& choice) {
  absl::StatusOr<ProjectConfig> parsed = ParseProjectConfig(choice.config);
  EXPECT_TRUE(parsed.ok()) << parsed.status() << " " << choice.config.dump();
  EXPECT_EQ(choice.config["isolation"]["tier"], "container");
  return parsed.ok() ? parsed->container : ContainerConfig{};
}

TEST(InitConfigTest, AnEngineWithAnAgentImageComesFirst) {
  absl::StatusOr<InitChoice> choice = ChooseInitConfig(
      {},
      {Down(Runtime::kDocker, "no daemon"), Up(Runtime::kPodman, {"codex"}), Up(Runtime::kBwrap)},
      {{"claude", {}}});
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->runtime, Runtime::kPodman);
  EXPECT_THAT(choice->agents, ElementsAre("codex"));
  EXPECT_TRUE(choice->todo.empty());
  const ContainerConfig config = Parsed(*choice);
  EXPECT_EQ(config.runtime, Runtime::kPodman);
  EXPECT_EQ(config.image, "np-agent-codex:local");
  EXPECT_EQ(config.network, Network::kAllowlist);
  EXPECT_THAT(config.env, ElementsAre("OPENAI_API_KEY"));
}

TEST(InitConfigTest, SeveralImagesGoPerProgram) {
  absl::StatusOr<InitChoice> choice =
      ChooseInitConfig({}, {Up(Runtime::kDocker, {"claude", "codex", "gemini"})}, {});
  ASSERT_TRUE(choice.ok()) << choice.status();
  const ContainerConfig config = Parsed(*choice);
  EXPECT_EQ(config.image, "np-agent-claude:local");
  EXPECT_EQ(ImageFor(config, "codex"), "np-agent-codex:local");
  EXPECT_EQ(ImageFor(config, "gemini"), "np-agent-gemini:local");
  EXPECT_THAT(
      choice->config["isolation"]["container"]["allow_hosts"],
      ElementsAre("api.anthropic.com", "api.openai.com", "generativelanguage.googleapis.com"));
  EXPECT_THAT(config.env, ElementsAre("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY",
                                      "GEMINI_CLI_TRUST_WORKSPACE"));
}

TEST(InitConfigTest, BubblewrapWhenNoEngineHoldsAnImage) {
  absl::StatusOr<InitChoice> choice =
      ChooseInitConfig({}, {Up(Runtime::kDocker), Up(Runtime::kPodman), Up(Runtime::kBwrap)},
                       {{"claude", {"/opt/agents/bin", "/opt/agents/lib/node_modules"}},
                        {"gemini", {"/opt/agents/bin"}}});
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->runtime, Runtime::kBwrap);
  EXPECT_THAT(choice->agents, ElementsAre("claude", "gemini"));
  const ContainerConfig config = Parsed(*choice);
  ASSERT_EQ(config.mounts.size(), 2u);
  EXPECT_EQ(config.mounts[0].source, "/opt/agents/bin");
  EXPECT_EQ(config.mounts[0].target, "/opt/agents/bin");
  EXPECT_EQ(config.mounts[1].source, "/opt/agents/lib/node_modules");
  EXPECT_EQ(config.network, Network::kAllowlist);
}

TEST(InitConfigTest, BubblewrapWithNoAgentHasNoNetwork) {
  absl::StatusOr<InitChoice> choice = ChooseInitConfig({}, {Up(Runtime::kBwrap)}, {});
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->config.dump(),
            R"({"isolation":{"container":{"runtime":"bwrap"},"tier":"container"}})");
  EXPECT_TRUE(choice->agents.empty());
}

TEST(InitConfigTest, AnEngineWithoutImagesSaysWhatToBuild) {
  absl::StatusOr<InitChoice> choice =
      ChooseInitConfig({}, {Up(Runtime::kDocker), Down(Runtime::kBwrap, "no user namespaces")}, {});
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->runtime, Runtime::kDocker);
  EXPECT_EQ(Parsed(*choice).image, "np-agent-claude:local");
  ASSERT_EQ(choice->todo.size(), 1u);
  EXPECT_THAT(choice->todo[0], HasSubstr("bash scripts/build-agent-image.sh claude docker"));
}

TEST(InitConfigTest, TheRuntimeAskedForIsUsedOrRefused) {
  absl::StatusOr<InitChoice> bwrap = ChooseInitConfig(
      {Runtime::kBwrap, {}}, {Up(Runtime::kDocker, {"claude"}), Up(Runtime::kBwrap)}, {});
  ASSERT_TRUE(bwrap.ok()) << bwrap.status();
  EXPECT_EQ(bwrap->runtime, Runtime::kBwrap);
  absl::StatusOr<InitChoice> podman = ChooseInitConfig(
      {Runtime::kPodman, {}},
      {Up(Runtime::kDocker), Down(Runtime::kPodman, "newuidmap failed (install uidmap)")}, {});
  ASSERT_FALSE(podman.ok());
  EXPECT_EQ(ErrorCode(podman.status()), "init-runtime-unavailable");
  EXPECT_THAT(podman.status().message(), HasSubstr("install uidmap"));
}

TEST(InitConfigTest, AgentsAskedForPickTheEngineThatHoldsThem) {
  absl::StatusOr<InitChoice> choice = ChooseInitConfig(
      {std::nullopt, {"gemini"}},
      {Up(Runtime::kDocker, {"claude"}), Up(Runtime::kPodman, {"gemini"}), Up(Runtime::kBwrap)},
      {});
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->runtime, Runtime::kPodman);
  EXPECT_EQ(Parsed(*choice).image, "np-agent-gemini:local");
  // On bubblewrap an agent the host lacks is a step left to do.
  absl::StatusOr<InitChoice> bwrap =
      ChooseInitConfig({Runtime::kBwrap, {"codex"}}, {Up(Runtime::kBwrap)}, {{"claude", {}}});
  ASSERT_TRUE(bwrap.ok()) << bwrap.status();
  EXPECT_THAT(bwrap->agents, ElementsAre("codex"));
  ASSERT_EQ(bwrap->todo.size(), 1u);
  EXPECT_THAT(bwrap->todo[0], HasSubstr("install codex on this host"));
}

TEST(InitConfigTest, NothingUsableNamesEachCause) {
  absl::StatusOr<InitChoice> choice =
      ChooseInitConfig({},
                       {Down(Runtime::kDocker, "permission denied (join the docker group)"),
                        Down(Runtime::kBwrap, "not installed (apt install bubblewrap)")},
                       {});
  ASSERT_FALSE(choice.ok());
  EXPECT_EQ(ErrorCode(choice.status()), "init-no-runtime");
  EXPECT_THAT(choice.status().message(),
              HasSubstr("docker: permission denied (join the docker group)"));
  EXPECT_THAT(choice.status().message(),
              HasSubstr("bubblewrap: not installed (apt install bubblewrap)"));
}

TEST(InitConfigTest, AnUnknownAgentIsRefused) {
  absl::StatusOr<InitChoice> choice =
      ChooseInitConfig({std::nullopt, {"cursor"}}, {Up(Runtime::kBwrap)}, {});
  ASSERT_FALSE(choice.ok());
  EXPECT_EQ(ErrorCode(choice.status()), "init-unknown-agent");
  EXPECT_THAT(choice.status().message(), HasSubstr("claude, codex, gemini"));
}

TEST(InitConfigTest, GitignoreCoverage) {
  EXPECT_FALSE(GitignoreCoversAudit(""));
  EXPECT_FALSE(GitignoreCoversAudit("node_modules/\n"));
  EXPECT_TRUE(GitignoreCoversAudit(".nubos-pilot/audit/\n"));
  EXPECT_TRUE(GitignoreCoversAudit("/.nubos-pilot/audit\r\n"));
  EXPECT_TRUE(GitignoreCoversAudit("x\n.nubos-pilot/"));
  EXPECT_FALSE(GitignoreCoversAudit(".nubos-pilot/\n!.nubos-pilot/audit/\n"));
  EXPECT_FALSE(GitignoreCoversAudit("# .nubos-pilot/audit/\n"));
  EXPECT_EQ(GitignoreAuditAddition("a"),
            "\n# np-exec's audit log (np-exec init)\n.nubos-pilot/audit/\n");
  EXPECT_EQ(GitignoreAuditAddition(""),
            "# np-exec's audit log (np-exec init)\n.nubos-pilot/audit/\n");
  EXPECT_TRUE(GitignoreCoversAudit(absl::StrCat("a", GitignoreAuditAddition("a"))));
}

}  // namespace
}  // namespace np
