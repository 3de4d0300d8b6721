// core/warm.h: the warm key's material, the keeper's messages, why a spawn
// runs cold, the config key, and the keeper variant of both argv builders.
#include "core/warm.h"

#include <string>
#include <vector>

#include "core/bwrap_argv.h"
#include "core/config.h"
#include "core/config_json.h"
#include "core/container_argv.h"
#include "core/errors.h"
#include "core/plan.h"
#include "core/trust.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/argv_util.h"
#include "tests/core/docker_spawn.h"
#include "tests/support/temp_dir.h"

namespace np {
namespace {

using ::np::testing::Contains;
using ::np::testing::HasSequence;
using ::np::testing::IndexOf;
using ::testing::HasSubstr;
using ::testing::Not;

std::string Identity(int fd) { return "id-" + std::to_string(fd * 10); }

TEST(WarmKeyTest, DescriptorNumbersAndPerSpawnNamesDoNotChangeTheKey) {
  const std::vector<std::string> one = {"bwrap",
                                        "--bind-fd",
                                        "5",
                                        "/p",
                                        "--ro-bind",
                                        "/s/spawns/11-aa/passwd",
                                        "/etc/passwd",
                                        "--ro-bind",
                                        "/s/warm/rv-11-aa",
                                        "/run/np-exec/warm",
                                        "--",
                                        "/run/np-exec/np-exec",
                                        "keeper"};
  const std::vector<std::string> two = {"bwrap",
                                        "--bind-fd",
                                        "7",
                                        "/p",
                                        "--ro-bind",
                                        "/s/spawns/12-bb/passwd",
                                        "/etc/passwd",
                                        "--ro-bind",
                                        "/s/warm/rv-12-bb",
                                        "/run/np-exec/warm",
                                        "--",
                                        "/run/np-exec/np-exec",
                                        "keeper"};
  // Descriptor 5 and 7 point at the same folder.
  auto same = [](int) { return std::string("dev:ino"); };
  EXPECT_EQ(WarmKeyMaterial(one, same, "/s/spawns/11-aa", {"/s/warm/rv-11-aa"}, {"cfg"}),
            WarmKeyMaterial(two, same, "/s/spawns/12-bb", {"/s/warm/rv-12-bb"}, {"cfg"}));
  // Another folder behind the descriptor is another key.
  EXPECT_NE(WarmKeyMaterial(one, Identity, "/s/spawns/11-aa", {"/s/warm/rv-11-aa"}, {"cfg"}),
            WarmKeyMaterial(two, Identity, "/s/spawns/12-bb", {"/s/warm/rv-12-bb"}, {"cfg"}));
}

TEST(WarmKeyTest, ANameInsideAValueIsReplacedToo) {
  const std::vector<std::string> one = {
      "docker", "--name", "np-exec-11-aa", "--mount",
      "type=bind,source=/s/spawns/11-aa/passwd,target=/etc/passwd,readonly"};
  const std::vector<std::string> two = {
      "docker", "--name", "np-exec-12-bb", "--mount",
      "type=bind,source=/s/spawns/12-bb/passwd,target=/etc/passwd,readonly"};
  EXPECT_EQ(WarmKeyMaterial(one, Identity, "/s/spawns/11-aa", {"", "np-exec-11-aa"}, {}),
            WarmKeyMaterial(two, Identity, "/s/spawns/12-bb", {"", "np-exec-12-bb"}, {}));
}

TEST(WarmKeyTest, EveryOtherDifferenceIsAnotherKey) {
  const std::vector<std::string> argv = {"docker", "run", "--memory=1g", "img"};
  const std::string base = WarmKeyMaterial(argv, Identity, "", {}, {"config", "image-id"});
  EXPECT_NE(base, WarmKeyMaterial({"docker", "run", "--memory=2g", "img"}, Identity, "", {},
                                  {"config", "image-id"}));
  EXPECT_NE(base, WarmKeyMaterial(argv, Identity, "", {}, {"config2", "image-id"}));
  EXPECT_NE(base, WarmKeyMaterial(argv, Identity, "", {}, {"config", "image-id2"}));
  // Length-prefixed: moving a boundary between two inputs is another key.
  EXPECT_NE(WarmKeyMaterial({"ab", "c"}, Identity, "", {}, {}),
            WarmKeyMaterial({"a", "bc"}, Identity, "", {}, {}));
  EXPECT_EQ(WarmKey("x").size(), 64u);
  EXPECT_NE(WarmKey("x"), WarmKey("y"));
}

TEST(WarmKeyTest, ADescriptorNumberAfterTheOptionsIsTheProgramsOwn) {
  const std::vector<std::string> one = {"bwrap", "--", "prog", "--bind-fd", "5"};
  const std::vector<std::string> two = {"bwrap", "--", "prog", "--bind-fd", "6"};
  auto same = [](int) { return std::string("dev:ino"); };
  EXPECT_NE(WarmKeyMaterial(one, same, "", {}, {}), WarmKeyMaterial(two, same, "", {}, {}));
}

TEST(WarmRequestTest, RoundTripsAndRefusesWhatIsMalformed) {
  const WarmRequest request{{"node", "a b", "--x"}, "/p/src", {"A=1", "B="}};
  absl::StatusOr<WarmRequest> back = WarmRequestFromJson(WarmRequestToJson(request));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->argv, request.argv);
  EXPECT_EQ(back->cwd, request.cwd);
  EXPECT_EQ(back->env, request.env);
  for (const nlohmann::json& bad : std::vector<nlohmann::json>{
           nullptr,
           {{"argv", nlohmann::json::array()}, {"cwd", "/"}, {"env", nlohmann::json::array()}},
           {{"argv", {""}}, {"cwd", "/"}, {"env", nlohmann::json::array()}},
           {{"argv", {"x"}}, {"cwd", "relative"}, {"env", nlohmann::json::array()}},
           {{"argv", {"x"}}, {"cwd", "/"}, {"env", {"NOEQUALS"}}},
           {{"argv", {"x"}}, {"cwd", "/"}, {"env", {"=v"}}},
           {{"argv", {"x", 1}}, {"cwd", "/"}, {"env", nlohmann::json::array()}},
           {{"argv", {std::string("a\0b", 3)}}, {"cwd", "/"}, {"env", nlohmann::json::array()}},
           {{"argv", {"x"}}, {"env", nlohmann::json::array()}}}) {
    absl::StatusOr<WarmRequest> parsed = WarmRequestFromJson(bad);
    EXPECT_FALSE(parsed.ok()) << bad.dump();
    EXPECT_EQ(ErrorCode(parsed.status()), "warm-protocol") << bad.dump();
  }
}

TEST(WarmResultTest, RoundTripsAndStaysInRange) {
  absl::StatusOr<WarmResult> back = WarmResultFromJson(WarmResultToJson({143, 15}));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->exit_code, 143);
  EXPECT_EQ(back->signal, 15);
  EXPECT_FALSE(WarmResultFromJson({{"exit_code", 256}, {"signal", 0}}).ok());
  EXPECT_FALSE(WarmResultFromJson({{"exit_code", -1}, {"signal", 0}}).ok());
  EXPECT_FALSE(WarmResultFromJson({{"exit_code", 0}}).ok());
}

TEST(WarmColdReasonTest, NamesWhyASpawnRunsCold) {
  EXPECT_EQ(WarmColdReason(true, false, false, true), "");
  EXPECT_EQ(WarmColdReason(true, false, false, false), kWarmColdPrinted);
  EXPECT_EQ(WarmColdReason(false, false, false, true), kWarmColdRemote);
  EXPECT_EQ(WarmColdReason(true, true, false, true), kWarmColdAllowlist);
  EXPECT_EQ(WarmColdReason(true, false, true, true), kWarmColdPersistentHome);
}

TEST(WarmColdReasonTest, AnImageRunsWarmOnlyWithItsVolumesToldAndNone) {
  EXPECT_EQ(WarmImageColdReason(std::nullopt), kWarmColdImageUnknown);
  EXPECT_EQ(WarmImageColdReason(std::vector<std::string>{"/data"}), kWarmColdImageVolumes);
  EXPECT_EQ(WarmImageColdReason(std::vector<std::string>{}), "");
}

// The plan: warm for an image whose volumes the engine told and that has
// none; cold, with the reason, when it has some or the engine did not tell.
class WarmPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    project_ = tmp_.MakeDir("home/user/proj");
    facts_ = np::testing::DockerSpawnFacts(project_, tmp_.Path("home/user"));
    facts_.warm_dir = tmp_.MakeDir("state/warm/rv-1");
    settings_.project_root = project_;
    settings_.config.tier = Tier::kContainer;
    settings_.config.container.runtime = Runtime::kDocker;
    settings_.config.container.image = "np-test:local";
    settings_.config.container.warm_idle_seconds = 300;
    settings_.resolved = {Tier::kContainer, TierSource::kConfig};
    probe_ = np::testing::DockerAvailable();
  }

  WarmPlan Plan() {
    absl::StatusOr<SpawnPlan> plan = PlanSpawn(settings_, &probe_, facts_, {"node"}, {});
    EXPECT_TRUE(plan.ok()) << plan.status();
    return plan.ok() ? plan->warm : WarmPlan();
  }

  np::testing::TempDir tmp_;
  std::string project_;
  SpawnFacts facts_;
  Settings settings_;
  ProbeResult probe_;
};

TEST_F(WarmPlanTest, AnImageWithVolumesOrUntoldRunsCold) {
  facts_.image_volumes = std::vector<std::string>{};
  WarmPlan warm = Plan();
  EXPECT_TRUE(warm.warm);
  EXPECT_EQ(warm.cold_reason, "");
  facts_.image_volumes = std::vector<std::string>{"/data"};
  warm = Plan();
  EXPECT_FALSE(warm.warm);
  EXPECT_EQ(warm.cold_reason, kWarmColdImageVolumes);
  facts_.image_volumes = std::nullopt;
  warm = Plan();
  EXPECT_FALSE(warm.warm);
  EXPECT_EQ(warm.cold_reason, kWarmColdImageUnknown);
}

absl::StatusOr<ProjectConfig> Parse(const std::string& container) {
  return ParseProjectConfig(nlohmann::json::parse(
      R"({"isolation": {"tier": "container", "container": )" + container + "}}"));
}

std::vector<std::string> Widening(const nlohmann::json& warm) {
  return WideningKeys({{"isolation", {{"tier", "container"}, {"container", {{"warm", warm}}}}}});
}

TEST(WarmConfigTest, TrueFalseOrAnIdleTime) {
  absl::StatusOr<ProjectConfig> on = Parse(R"({"warm": true})");
  ASSERT_TRUE(on.ok()) << on.status();
  EXPECT_EQ(on->container.warm_idle_seconds, kDefaultWarmIdleSeconds);
  absl::StatusOr<ProjectConfig> off = Parse(R"({"warm": false})");
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->container.warm_idle_seconds.has_value());
  absl::StatusOr<ProjectConfig> idle = Parse(R"({"warm": {"idle_seconds": 30}})");
  ASSERT_TRUE(idle.ok());
  EXPECT_EQ(idle->container.warm_idle_seconds, 30);
  EXPECT_EQ(ContainerConfigToJson(idle->container)["warm"]["idle_seconds"], 30);
  for (const char* bad :
       {R"({"warm": "yes"})", R"({"warm": 5})", R"({"warm": {}})",
        R"({"warm": {"idle_seconds": 0}})", R"({"warm": {"idle_seconds": 86401}})",
        R"({"warm": {"idle_seconds": 1.5}})", R"({"warm": {"idle_seconds": 5, "other": 1}})"}) {
    absl::StatusOr<ProjectConfig> parsed = Parse(bad);
    EXPECT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(ErrorCode(parsed.status()), "isolation-invalid-value") << bad;
  }
}

TEST(WarmConfigTest, OnlyFalseIsNotAWidening) {
  EXPECT_FALSE(Widening(true).empty());
  EXPECT_FALSE(Widening({{"idle_seconds", 5}}).empty());
  EXPECT_TRUE(Widening(false).empty());
  EXPECT_TRUE(Widening(nullptr).empty());
}

ContainerSpawn KeeperSpawn() {
  ContainerSpawn spawn;
  spawn.project_root = "/home/u/proj";
  spawn.cwd = "/home/u/proj/src";
  spawn.uid = 1000;
  spawn.gid = 1000;
  spawn.name = "np-exec-1-aa";
  spawn.owner = "1:2";
  spawn.env_names = {"API_KEY"};
  spawn.env_secrets = {};
  spawn.program = {"node", "agent.js"};
  spawn.self_binary = "/usr/bin/np-exec";
  spawn.warm_dir = "/s/warm/rv-1-aa";
  return spawn;
}

TEST(WarmArgvTest, BubblewrapRunsTheKeeperAsPidOneInTheProject) {
  ContainerConfig config;
  config.runtime = Runtime::kBwrap;
  absl::StatusOr<std::vector<std::string>> argv =
      BuildBwrapArgv(config, {}, KeeperSpawn(), {{"/bin", "usr/bin"}});
  ASSERT_TRUE(argv.ok()) << argv.status();
  EXPECT_TRUE(Contains(*argv, "--as-pid-1"));
  EXPECT_TRUE(Contains(*argv, "--die-with-parent"));
  EXPECT_TRUE(HasSequence(*argv, {"--ro-bind", "/s/warm/rv-1-aa", "/run/np-exec/warm"}));
  EXPECT_TRUE(HasSequence(*argv, {"--mqueue", "/dev/mqueue"}))
      << "the keeper finds the spawn's POSIX message queues there";
  EXPECT_TRUE(
      HasSequence(*argv, {"--chdir", "/home/u/proj", "--", "/run/np-exec/np-exec", "keeper"}));
  EXPECT_EQ(argv->back(), "keeper");
  EXPECT_FALSE(Contains(*argv, "agent.js")) << "the program goes to the keeper per spawn";
}

TEST(WarmArgvTest, AnEngineRunsTheKeeperWithoutInitTtyOwnerOrValues) {
  for (Runtime runtime : {Runtime::kDocker, Runtime::kPodman}) {
    ContainerConfig config;
    config.runtime = runtime;
    ContainerSpawn spawn = KeeperSpawn();
    spawn.stdin_tty = spawn.stdout_tty = true;
    spawn.init_path = "/usr/bin/tini";
    absl::StatusOr<std::vector<std::string>> argv = BuildContainerArgv(config, {}, spawn);
    ASSERT_TRUE(argv.ok()) << argv.status();
    EXPECT_FALSE(Contains(*argv, "--init"));
    EXPECT_FALSE(Contains(*argv, "-t"));
    EXPECT_FALSE(Contains(*argv, "--init-path=/usr/bin/tini"));
    EXPECT_FALSE(Contains(*argv, "API_KEY")) << "values go to the keeper, never to the engine";
    EXPECT_THAT(::testing::PrintToString(*argv), Not(HasSubstr(std::string(kOwnerLabel))));
    EXPECT_TRUE(HasSequence(*argv, {"--mount",
                                    "type=bind,source=/s/warm/rv-1-aa,target=/run/np-exec/"
                                    "warm,readonly"}));
    EXPECT_TRUE(HasSequence(*argv, {"--entrypoint", "/run/np-exec/np-exec", "-w", "/home/u/proj",
                                    config.image, "keeper"}));
    EXPECT_EQ(argv->back(), "keeper");
    EXPECT_FALSE(Contains(*argv, "agent.js"));
  }
}

}  // namespace
}  // namespace np
