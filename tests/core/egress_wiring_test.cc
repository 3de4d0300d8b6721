// network "allowlist" through config, description, argv builders and plan
// (issue 16 item 1): the sandbox keeps loopback only, the proxy socket and
// np-exec's binary are the only additions, and a printed plan that nothing
// would serve is refused rather than printed.
#include <string>
#include <vector>

#include "core/bwrap_argv.h"
#include "core/config.h"
#include "core/config_json.h"
#include "core/container_argv.h"
#include "core/egress_entry.h"
#include "core/errors.h"
#include "core/plan.h"
#include "gtest/gtest.h"
#include "tests/core/argv_util.h"
#include "tests/core/docker_spawn.h"
#include "tests/support/temp_dir.h"

namespace np {
namespace {

using nlohmann::json;
using ::np::testing::AnyContains;
using ::np::testing::Contains;
using ::np::testing::DockerAvailable;
using ::np::testing::DockerSpawnFacts;
using ::np::testing::HasSequence;
using ::np::testing::IndexOf;
using ::np::testing::IndexOfSequence;
using ::np::testing::TempDir;

json Container(const json& container) {
  return json{{"isolation", {{"tier", "container"}, {"container", container}}}};
}

TEST(EgressConfigTest, AllowlistWithHostsParses) {
  absl::StatusOr<ProjectConfig> config = ParseProjectConfig(Container(
      {{"network", "allowlist"}, {"allow_hosts", {"api.anthropic.com", "127.0.0.1:8080"}}}));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->container.network, Network::kAllowlist);
  EXPECT_EQ(AllowlistToStrings(config->container.allow_hosts),
            (std::vector<std::string>{"api.anthropic.com:443", "127.0.0.1:8080"}));
  EXPECT_EQ(NetworkName(Network::kAllowlist), "allowlist");
  const json echoed = ContainerConfigToJson(config->container);
  EXPECT_EQ(echoed["network"], "allowlist");
  EXPECT_EQ(echoed["allow_hosts"], json({"api.anthropic.com:443", "127.0.0.1:8080"}));
  // Other networks keep the shape they had.
  EXPECT_FALSE(ContainerConfigToJson(ContainerConfig{}).contains("allow_hosts"));
}

TEST(EgressConfigTest, MismatchesAndBadListsAreCoded) {
  struct Case {
    const char* name;
    json container;
    const char* code;
  };
  const std::vector<Case> cases = {
      {"HostsUnderNone",
       {{"network", "none"}, {"allow_hosts", {"a.example"}}},
       "isolation-allow-hosts-without-allowlist"},
      {"HostsUnderBridge",
       {{"network", "bridge"}, {"allow_hosts", {"a.example"}}},
       "isolation-allow-hosts-without-allowlist"},
      {"HostsUnderHost",
       {{"network", "host"}, {"allow_hosts", {"a.example"}}},
       "isolation-allow-hosts-without-allowlist"},
      // Without a network key the default, none, applies: still a mismatch.
      {"HostsWithoutNetwork",
       {{"allow_hosts", {"a.example"}}},
       "isolation-allow-hosts-without-allowlist"},
      {"AllowlistWithoutHosts", {{"network", "allowlist"}}, "isolation-invalid-allow-hosts"},
      {"EmptyList",
       {{"network", "allowlist"}, {"allow_hosts", json::array()}},
       "isolation-invalid-allow-hosts"},
      {"NotAnArray",
       {{"network", "allowlist"}, {"allow_hosts", "a.example"}},
       "isolation-invalid-allow-hosts"},
      {"Url",
       {{"network", "allowlist"}, {"allow_hosts", {"https://a.example"}}},
       "isolation-invalid-allow-hosts"},
      {"BadPort",
       {{"network", "allowlist"}, {"allow_hosts", {"a.example:0"}}},
       "isolation-allow-hosts-bad-port"},
      {"SuffixWildcard",
       {{"network", "allowlist"}, {"allow_hosts", {"*example.com"}}},
       "isolation-allow-hosts-bad-wildcard"},
      {"LooseIpv4",
       {{"network", "allowlist"}, {"allow_hosts", {"2130706433"}}},
       "isolation-allow-hosts-loose-ipv4"},
      {"UnknownNetwork", {{"network", "Allowlist"}}, "isolation-invalid-network"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ProjectConfig> config = ParseProjectConfig(Container(c.container));
    ASSERT_FALSE(config.ok()) << c.name;
    EXPECT_TRUE(HasErrorCode(config.status(), c.code)) << c.name << ": " << config.status();
  }
}

TEST(EgressConfigTest, DescriptionKeepsNetworkRestrictedAndNamesExfiltration) {
  ContainerConfig container;
  container.network = Network::kAllowlist;
  absl::StatusOr<Allowlist> list = ParseAllowHosts(json{"api.openai.com", "chatgpt.com"});
  ASSERT_TRUE(list.ok());
  container.allow_hosts = *list;
  const TierDescription d = DescribeConfiguredTier(Tier::kContainer, container);
  EXPECT_TRUE(d.network_restricted);
  EXPECT_NE(d.summary.find("api.openai.com:443, chatgpt.com:443"), std::string::npos) << d.summary;
  ASSERT_FALSE(d.does_not_protect_against.empty());
  EXPECT_NE(d.does_not_protect_against.front().find("exfiltration through an allowed host"),
            std::string::npos);
  EXPECT_NE(d.does_not_protect_against.front().find("domain fronting"), std::string::npos);
  // Off the container tier nothing changes.
  EXPECT_EQ(DescribeConfiguredTier(Tier::kDirect, container).summary,
            DescribeTier(Tier::kDirect, container.runtime).summary);
}

ContainerSpawn EgressSpawn() {
  ContainerSpawn spawn;
  spawn.project_root = "/home/u/proj";
  spawn.cwd = "/home/u/proj";
  spawn.uid = 1000;
  spawn.gid = 1000;
  spawn.name = "np-exec-1";
  spawn.env_names = {"ANTHROPIC_API_KEY"};
  spawn.program = {"claude", "-p", "hi"};
  spawn.egress_socket = "/run/user/1000/np-exec-egress-abc/egress.sock";
  spawn.self_binary = "/usr/local/bin/np-exec";
  return spawn;
}

ContainerConfig AllowlistConfig(Runtime runtime) {
  ContainerConfig config;
  config.runtime = runtime;
  config.network = Network::kAllowlist;
  config.allow_hosts = *ParseAllowHosts(json{"api.anthropic.com"});
  return config;
}

TEST(EgressArgvTest, EngineArgvKeepsNetworkNoneAndAddsSocketSelfEnvAndEntry) {
  for (Runtime runtime : {Runtime::kDocker, Runtime::kPodman}) {
    const ContainerConfig config = AllowlistConfig(runtime);
    absl::StatusOr<std::vector<std::string>> argv = BuildContainerArgv(config, {}, EgressSpawn());
    ASSERT_TRUE(argv.ok()) << argv.status();
    const std::string name(RuntimeName(runtime));
    EXPECT_TRUE(HasSequence(*argv, {"--network", "none"})) << name;
    EXPECT_FALSE(Contains(*argv, "allowlist")) << name;
    EXPECT_TRUE(HasSequence(
        *argv, {"--mount",
                "type=bind,source=/run/user/1000/np-exec-egress-abc/egress.sock,target=/run/"
                "np-exec/egress.sock"}))
        << name;
    EXPECT_TRUE(HasSequence(*argv, {"--mount",
                                    "type=bind,source=/usr/local/bin/np-exec,target=/run/np-exec/"
                                    "np-exec,readonly"}))
        << name;
    for (const std::string& assignment : EgressProxyEnvironment()) {
      EXPECT_TRUE(HasSequence(*argv, {"-e", assignment})) << name << " " << assignment;
    }
    // The caller's names stay names.
    EXPECT_TRUE(HasSequence(*argv, {"-e", "ANTHROPIC_API_KEY"})) << name;
    // After the image: the entry point, then the program unchanged.
    const long image = IndexOf(*argv, config.image);
    ASSERT_GE(image, 0);
    std::vector<std::string> after(argv->begin() + image + 1, argv->end());
    EXPECT_EQ(after, (std::vector<std::string>{"/run/np-exec/np-exec", "egress-entry", "--port",
                                               "3128", "--socket", "/run/np-exec/egress.sock", "--",
                                               "claude", "-p", "hi"}))
        << name;
  }
}

TEST(EgressArgvTest, ProxyEnvironmentPointsAtTheBridge) {
  EXPECT_EQ(EgressProxyEnvironment(),
            (std::vector<std::string>{"HTTPS_PROXY=http://127.0.0.1:3128",
                                      "HTTP_PROXY=http://127.0.0.1:3128",
                                      "https_proxy=http://127.0.0.1:3128",
                                      "http_proxy=http://127.0.0.1:3128", "NODE_USE_ENV_PROXY=1"}));
}

TEST(EgressArgvTest, BwrapArgvUnsharesNetAndAddsBindsEnvAndEntry) {
  const ContainerConfig config = AllowlistConfig(Runtime::kBwrap);
  absl::StatusOr<std::vector<std::string>> argv = BuildBwrapArgv(config, {}, EgressSpawn(), {});
  ASSERT_TRUE(argv.ok()) << argv.status();
  EXPECT_TRUE(Contains(*argv, "--unshare-net"));
  EXPECT_TRUE(HasSequence(*argv, {"--bind", "/run/user/1000/np-exec-egress-abc/egress.sock",
                                  "/run/np-exec/egress.sock"}));
  EXPECT_TRUE(HasSequence(*argv, {"--ro-bind", "/usr/local/bin/np-exec", "/run/np-exec/np-exec"}));
  EXPECT_TRUE(HasSequence(*argv, {"--setenv", "HTTPS_PROXY", "http://127.0.0.1:3128"}));
  EXPECT_TRUE(HasSequence(*argv, {"--setenv", "NODE_USE_ENV_PROXY", "1"}));
  // The binds come before the root is made read-only; the entry right after --.
  EXPECT_LT(IndexOfSequence(*argv, {"--ro-bind", "/usr/local/bin/np-exec"}),
            IndexOf(*argv, "--remount-ro"));
  const long dashes = IndexOf(*argv, "--");
  ASSERT_GE(dashes, 0);
  EXPECT_EQ((*argv)[dashes + 1], "/run/np-exec/np-exec");
  EXPECT_EQ(argv->back(), "hi");
}

TEST(EgressArgvTest, AllowlistWithoutSocketOrBinaryIsRefusedByEveryBuilder) {
  for (Runtime runtime : {Runtime::kDocker, Runtime::kPodman, Runtime::kBwrap}) {
    for (int missing = 0; missing < 2; ++missing) {
      ContainerSpawn spawn = EgressSpawn();
      (missing == 0 ? spawn.egress_socket : spawn.self_binary).clear();
      absl::StatusOr<std::vector<std::string>> argv =
          runtime == Runtime::kBwrap ? BuildBwrapArgv(AllowlistConfig(runtime), {}, spawn, {})
                                     : BuildContainerArgv(AllowlistConfig(runtime), {}, spawn);
      ASSERT_FALSE(argv.ok()) << RuntimeName(runtime);
      EXPECT_TRUE(HasErrorCode(argv.status(), "isolation-allowlist-needs-np-exec"));
    }
  }
  // A socket path with a newline cannot shift a --mount field.
  ContainerSpawn hostile = EgressSpawn();
  hostile.egress_socket = "/tmp/a\n,target=/etc";
  absl::StatusOr<std::vector<std::string>> argv =
      BuildContainerArgv(AllowlistConfig(Runtime::kDocker), {}, hostile);
  ASSERT_FALSE(argv.ok());
  EXPECT_TRUE(HasErrorCode(argv.status(), "isolation-mount-bad-source"));
}

TEST(EgressArgvTest, OtherNetworksGetNoneOfIt) {
  ContainerConfig config;
  absl::StatusOr<std::vector<std::string>> argv = BuildContainerArgv(config, {}, EgressSpawn());
  ASSERT_TRUE(argv.ok());
  EXPECT_FALSE(AnyContains(*argv, "egress"));
  EXPECT_FALSE(AnyContains(*argv, "PROXY"));
}

class EgressPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    project_ = tmp_.MakeDir("home/user/proj");
    facts_ = DockerSpawnFacts(project_, tmp_.Path("home/user"));
    settings_.project_root = project_;
    settings_.config.tier = Tier::kContainer;
    settings_.config.container = AllowlistConfig(Runtime::kDocker);
    settings_.resolved = {Tier::kContainer, TierSource::kConfig};
    probe_ = DockerAvailable();
  }

  TempDir tmp_;
  std::string project_;
  SpawnFacts facts_;
  Settings settings_;
  ProbeResult probe_;
};

TEST_F(EgressPlanTest, RunPlanCarriesTheSocket) {
  facts_.egress_socket = "/tmp/np-exec-egress-x/egress.sock";
  absl::StatusOr<SpawnPlan> plan = PlanSpawn(settings_, &probe_, facts_, {"node"}, {});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->egress_socket, facts_.egress_socket);
  EXPECT_TRUE(Contains(plan->argv, "egress-entry"));
}

// The runtime client keeps the caller's environment, less a credential's key:
// the proxy reads it, the client and whatever it hands on never get it.
TEST_F(EgressPlanTest, TheRuntimeClientNeverGetsACredentialsKey) {
  facts_.egress_socket = "/tmp/np-exec-egress-x/egress.sock";
  facts_.credential_ca = "/tmp/np-exec-egress-x/session-ca.pem";
  facts_.credential_bundle = "/tmp/np-exec-egress-x/ca-bundle.pem";
  settings_.config.container.credentials = {
      {"api.anthropic.com", 443, "ANTHROPIC_API_KEY", "x-api-key", "{}"}};
  absl::StatusOr<SpawnPlan> plan = PlanSpawn(settings_, &probe_, facts_, {"node"}, {});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->env.inherit);
  EXPECT_TRUE(Contains(plan->env.unset, "ANTHROPIC_API_KEY"));
  EXPECT_TRUE(Contains(plan->env.unset, "LD_PRELOAD"));
  EXPECT_FALSE(Contains(plan->env.forward, "ANTHROPIC_API_KEY"));
}

TEST_F(EgressPlanTest, PrintedPlanIsRefusedNeverWithoutNetworkOrWithAllOfIt) {
  facts_.print_only = true;
  facts_.egress_socket = "/tmp/np-exec-egress-x/egress.sock";
  absl::StatusOr<SpawnPlan> plan = PlanSpawn(settings_, &probe_, facts_, {"node"}, {});
  ASSERT_FALSE(plan.ok());
  EXPECT_TRUE(HasErrorCode(plan.status(), "isolation-allowlist-needs-np-exec"));
  facts_.print_only = false;
  facts_.egress_socket.clear();
  plan = PlanSpawn(settings_, &probe_, facts_, {"node"}, {});
  ASSERT_FALSE(plan.ok());
  EXPECT_TRUE(HasErrorCode(plan.status(), "isolation-allowlist-needs-np-exec"));
}

TEST_F(EgressPlanTest, SelfBinaryWhereTheProgramCanWriteIsRefused) {
  facts_.egress_socket = "/tmp/np-exec-egress-x/egress.sock";
  facts_.self_path = project_ + "/build/np-exec";
  absl::StatusOr<SpawnPlan> plan = PlanSpawn(settings_, &probe_, facts_, {"node"}, {});
  ASSERT_FALSE(plan.ok());
  EXPECT_TRUE(HasErrorCode(plan.status(), "isolation-mount-bad-source")) << plan.status();
}

}  // namespace
}  // namespace np

namespace np {
namespace {

TEST(NodeProxyWarningTest, OnlyANodeThatAcceptsTheOptionGetsIt) {
  for (const char* yes : {"v22.23.5\n", "v20.11.0", "v21.3.0", "v24.1.0\n", "v100.0.0"}) {
    EXPECT_TRUE(NodeAcceptsDisableWarning(yes)) << yes;
  }
  // Debian bookworm's node 18 would refuse to start with it in NODE_OPTIONS.
  for (const char* no : {"v18.19.0\n", "v20.10.9", "v21.2.0", "", "22.1.0", "vx.y", "v22"}) {
    EXPECT_FALSE(NodeAcceptsDisableWarning(no)) << no;
  }
}

TEST(NodeProxyWarningTest, AddedOnceToTheOptionsThereAre) {
  EXPECT_EQ(WithNodeProxyWarningSilenced(""), "--disable-warning=UNDICI-EHPA");
  EXPECT_EQ(WithNodeProxyWarningSilenced("--max-old-space-size=4096 "),
            "--max-old-space-size=4096 --disable-warning=UNDICI-EHPA");
  EXPECT_EQ(WithNodeProxyWarningSilenced("--disable-warning=UNDICI-EHPA"),
            "--disable-warning=UNDICI-EHPA");
}

}  // namespace
}  // namespace np
