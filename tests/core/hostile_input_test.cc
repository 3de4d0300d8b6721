// One hostile input, a NUL byte and an over-long path, fed to every core and
// shim entry point that takes a path or a name. Each must answer with its
// coded error; none may act on a truncated or shifted value. Codes only,
// never message text.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/bwrap_argv.h"
#include "core/config.h"
#include "core/config_file.h"
#include "core/container_argv.h"
#include "core/errors.h"
#include "core/git_layout.h"
#include "core/mounts.h"
#include "core/paths.h"
#include "core/plan.h"
#include "core/project_location.h"
#include "core/protected_paths.h"
#include "core/settings.h"
#include "core/tier.h"
#include "core/trust.h"
#include "gtest/gtest.h"
#include "shim/find_real_program.h"
#include "tests/support/temp_dir.h"

namespace np {
namespace {

using ::np::testing::MakeProject;
using ::np::testing::TempDir;

// "/<dir>/\0evil" and a path longer than PATH_MAX below a given directory.
std::string WithNul(const std::string& dir) { return dir + std::string("/\0evil", 6); }
std::string TooLong(const std::string& dir) {
  std::string path = dir;
  while (path.size() <= 4200) path += "/" + std::string(100, 'a');
  return path;
}

template <typename T>
absl::Status StatusOf(const absl::StatusOr<T>& result) {
  return result.status();
}

struct HostileCase {
  std::string name;
  std::function<absl::Status()> call;
  std::string code;
};

class HostileInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    project_ = tmp_.MakeDir("proj");
    MakeProject(project_);
    tmp_.MakeDir("proj/data");
    absl::StatusOr<MountPolicy> policy = MakeMountPolicy(project_, {});
    ASSERT_TRUE(policy.ok());
    policy_ = *policy;
  }

  ContainerSpawn Spawn(const std::string& project, const std::string& cwd) const {
    ContainerSpawn spawn;
    spawn.project_root = project;
    spawn.cwd = cwd;
    spawn.program = {"node"};
    return spawn;
  }

  void Run(const std::vector<HostileCase>& cases) {
    for (const HostileCase& c : cases) {
      absl::Status status = c.call();
      ASSERT_FALSE(status.ok()) << c.name;
      EXPECT_EQ(ErrorCode(status), c.code) << c.name << ": " << status;
    }
  }

  TempDir tmp_;
  std::string project_;
  MountPolicy policy_;
};

TEST_F(HostileInputTest, NulByteAndOverlongPathAtEveryEntryPoint) {
  const std::string nul = WithNul(project_);
  const std::string lng = TooLong(project_);
  const std::string nul_name = std::string("container\0", 10);
  const std::string long_name = std::string(5000, 'A');
  ContainerConfig docker;
  ContainerConfig podman;
  podman.runtime = Runtime::kPodman;
  ContainerConfig bwrap;
  bwrap.runtime = Runtime::kBwrap;
  const MountPolicy& policy = policy_;
  auto spawn = [this](const std::string& p, const std::string& c) { return Spawn(p, c); };
  const std::vector<RootEntry> layout = {{"/bin", "usr/bin"}};

  std::vector<HostileCase> cases;
  for (const auto& [kind, bad] : std::map<std::string, std::string>{{"Nul", nul}, {"Long", lng}}) {
    const std::string b = bad;  // Captured by value below.
    cases.push_back({kind + "CheckAbsolutePath", [b] { return CheckAbsolutePath(b, "c"); }, "c"});
    cases.push_back({kind + "LocateProjectFrom", [b] { return StatusOf(LocateProjectFrom(b)); },
                     "invalid-path"});
    cases.push_back(
        {kind + "ResolveRealPath", [b] { return StatusOf(ResolveRealPath(b, "c")); }, "c"});
    cases.push_back({kind + "MakeMountPolicy", [b] { return StatusOf(MakeMountPolicy(b, {})); },
                     "invalid-path"});
    cases.push_back({kind + "MakeMountPolicyExtraForbidden",
                     [this, b] { return StatusOf(MakeMountPolicy(project_, {b})); },
                     "invalid-path"});
    cases.push_back({kind + "ValidateProjectMountHome",
                     [b, &policy] { return ValidateProjectMount(policy, b); }, "invalid-path"});
    cases.push_back({kind + "ValidateMountSource",
                     [b, &policy] {
                       return StatusOf(ValidateMount(MountSpec{b, "/x", false}, policy));
                     },
                     "isolation-mount-bad-source"});
    cases.push_back(
        {kind + "ValidateMountTarget",
         [this, b, &policy] {
           return StatusOf(ValidateMount(MountSpec{project_ + "/data", b, false}, policy));
         },
         "isolation-mount-bad-target"});
    cases.push_back({kind + "ValidateMounts",
                     [b, &policy] {
                       return StatusOf(ValidateMounts({MountSpec{b, "/x", true}}, policy, {}));
                     },
                     "isolation-mount-bad-source"});
    for (Runtime runtime : {Runtime::kDocker, Runtime::kPodman}) {
      const std::string r(RuntimeName(runtime));
      cases.push_back(
          {kind + "FormatBindMountSource" + r,
           [b, runtime] { return StatusOf(FormatBindMount(runtime, b, "/x", true, "c")); }, "c"});
      cases.push_back(
          {kind + "FormatBindMountTarget" + r,
           [b, runtime] { return StatusOf(FormatBindMount(runtime, "/x", b, true, "c")); }, "c"});
    }
    cases.push_back({kind + "MapWorkingDirectoryCwd",
                     [this, b, &docker, spawn] {
                       return StatusOf(MapWorkingDirectory(docker, spawn(project_, b)));
                     },
                     "invalid-path"});
    cases.push_back(
        {kind + "MapWorkingDirectoryProject",
         [b, &docker, spawn] { return StatusOf(MapWorkingDirectory(docker, spawn(b, b))); },
         "invalid-path"});
    for (const ContainerConfig* config : {&docker, &podman}) {
      const std::string r(RuntimeName(config->runtime));
      cases.push_back(
          {kind + "BuildContainerArgvProject" + r,
           [b, config, spawn] { return StatusOf(BuildContainerArgv(*config, {}, spawn(b, b))); },
           "invalid-path"});
      cases.push_back({kind + "BuildContainerArgvCwd" + r,
                       [this, b, config, spawn] {
                         return StatusOf(BuildContainerArgv(*config, {}, spawn(project_, b)));
                       },
                       "invalid-path"});
      cases.push_back({kind + "BuildContainerArgvMount" + r,
                       [this, b, config, spawn] {
                         return StatusOf(BuildContainerArgv(*config, {{b, "/x", false}},
                                                            spawn(project_, project_)));
                       },
                       "isolation-mount-bad-source"});
    }
    cases.push_back({kind + "BuildBwrapArgvProject",
                     [b, &bwrap, spawn, &layout] {
                       return StatusOf(BuildBwrapArgv(bwrap, {}, spawn(b, b), layout));
                     },
                     "invalid-path"});
    cases.push_back({kind + "BuildBwrapArgvCwd",
                     [this, b, &bwrap, spawn, &layout] {
                       return StatusOf(BuildBwrapArgv(bwrap, {}, spawn(project_, b), layout));
                     },
                     "invalid-path"});
    cases.push_back({kind + "LoadSettingsCwd",
                     [b] {
                       return StatusOf(LoadSettings({b, "", "", true}));
                     },
                     "invalid-path"});
    cases.push_back({kind + "PlanSpawnCwd",
                     [this, b] {
                       Settings settings;
                       settings.project_root = project_;
                       settings.resolved = {Tier::kContainer, TierSource::kConfig};
                       ProbeResult probe;
                       probe.available = true;
                       probe.bin = "/usr/bin/docker";
                       SpawnFacts facts;
                       facts.cwd = b;
                       return StatusOf(PlanSpawn(settings, &probe, facts, {"node"}, {}));
                     },
                     "invalid-path"});
    cases.push_back({kind + "FindRealProgramName",
                     [b] {
                       return StatusOf(FindRealProgram(b, "/usr/bin", "/", FileId{1, 1},
                                                       [](const std::string&, NoteCheck) {
                                                         return FileFacts{true, true, true, {2, 2}};
                                                       }));
                     },
                     "invalid-program"});
    cases.push_back({kind + "FindRealProgramCwd",
                     [b] {
                       return StatusOf(FindRealProgram("./node", "/usr/bin", b, FileId{1, 1},
                                                       [](const std::string&, NoteCheck) {
                                                         return FileFacts{true, true, true, {2, 2}};
                                                       }));
                     },
                     "invalid-program"});
  }

  // Reading a config file: a NUL is refused before open; an over-long path
  // cannot be opened.
  cases.push_back(
      {"NulReadConfigFile", [nul] { return StatusOf(ReadConfigFile(nul)); }, "invalid-path"});
  cases.push_back(
      {"LongReadConfigFile", [lng] { return StatusOf(ReadConfigFile(lng)); }, "config-unreadable"});
  cases.push_back({"NulOperatorConfig",
                   [this, nul] {
                     return StatusOf(LoadSettings({project_, nul, "", false}));
                   },
                   "invalid-path"});
  cases.push_back({"LongOperatorConfig",
                   [this, lng] {
                     return StatusOf(LoadSettings({project_, lng, "", false}));
                   },
                   "config-unreadable"});

  // Names.
  for (const auto& [kind, bad] :
       std::map<std::string, std::string>{{"Nul", nul_name}, {"Long", long_name}}) {
    const std::string b = bad;
    cases.push_back(
        {kind + "ParseTier", [b] { return StatusOf(ParseTier(b)); }, "isolation-unknown-tier"});
    cases.push_back({kind + "ParseRuntime", [b] { return StatusOf(ParseRuntime(b)); },
                     "isolation-invalid-runtime"});
    cases.push_back({kind + "ParseEnvTier", [b] { return StatusOf(ParseEnvTier(b)); },
                     "isolation-invalid-tier"});
    cases.push_back({kind + "LoadSettingsEnvTier",
                     [this, b] {
                       return StatusOf(LoadSettings({project_, "", b, false}));
                     },
                     "isolation-invalid-tier"});
    cases.push_back(
        {kind + "ValidateEnvName", [b] { return ValidateEnvName(b); }, "isolation-bad-env-name"});
    cases.push_back({kind + "ParseEnvList", [b] { return StatusOf(ParseEnvList("A," + b)); },
                     "isolation-bad-env-name"});
    cases.push_back({kind + "BuildContainerArgvEnv",
                     [this, b, &docker] {
                       ContainerSpawn s = Spawn(project_, project_);
                       s.env_names = {b};
                       return StatusOf(BuildContainerArgv(docker, {}, s));
                     },
                     "isolation-bad-env-name"});
    cases.push_back({kind + "BuildBwrapArgvEnv",
                     [this, b, &bwrap, &layout] {
                       ContainerSpawn s = Spawn(project_, project_);
                       s.env_names = {b};
                       return StatusOf(BuildBwrapArgv(bwrap, {}, s, layout));
                     },
                     "isolation-bad-env-name"});
    cases.push_back({kind + "PlanSpawnEnv",
                     [this, b] {
                       Settings settings;
                       settings.project_root = project_;
                       SpawnFacts facts;
                       facts.cwd = project_;
                       return StatusOf(PlanSpawn(settings, nullptr, facts, {"node"}, {b}));
                     },
                     "isolation-bad-env-name"});
    // Issue 14: the protected paths, git's layout and the trust record.
    cases.push_back(
        {kind + "ReadGitLayout", [b] { return StatusOf(ReadGitLayout(b, true)); }, "invalid-path"});
    cases.push_back({kind + "ProtectedBindsForSpawn",
                     [b] { return StatusOf(ProtectedBindsForSpawn(b, {}, {})); }, "invalid-path"});
    cases.push_back({kind + "ParseProtect",
                     [b] { return StatusOf(ParseProtect(nlohmann::json::array({b}))); },
                     "isolation-protect-bad-path"});
    cases.push_back({kind + "ProtectedBindInArgv",
                     [this, b, &podman] {
                       ContainerSpawn s = Spawn(project_, project_);
                       s.protected_binds = {{b, false, false, false, ""}};
                       return StatusOf(BuildContainerArgv(podman, {}, s));
                     },
                     "isolation-protected-path-unsafe"});
    cases.push_back({kind + "TrustRecordKey",
                     [b] {
                       TrustRecord record;
                       record.key = "k";
                       return StatusOf(TrustRecordFromJson(TrustRecordToJson(record), b));
                     },
                     "state-store-invalid"});
  }
  Run(cases);
}

// The same hostile values inside a config file: every string-valued key.
TEST_F(HostileInputTest, NulInEveryConfigString) {
  using nlohmann::json;
  const std::string nul("a\0b", 3);
  const std::string nul_path("/a\0b", 4);
  struct Case {
    json container;
    std::string code;
  };
  const std::vector<Case> cases = {
      {{{"runtime", "docker" + nul}}, "isolation-invalid-runtime"},
      {{{"image", "node" + nul}}, "isolation-invalid-image"},
      {{{"network", "none" + nul}}, "isolation-invalid-network"},
      {{{"user", "node" + nul}}, "isolation-invalid-value"},
      {{{"memory", "1g" + nul}}, "isolation-invalid-value"},
      {{{"cpus", "1" + nul}}, "isolation-invalid-value"},
      {{{"env", {"A" + nul}}}, "isolation-bad-env-name"},
      {{{"workdir", nul_path}}, "isolation-invalid-value"},
      {{{"workdir", TooLong("/w")}}, "isolation-invalid-value"},
      {{{"pull", "never" + nul}}, "isolation-invalid-value"},
      {{{"mounts", {{{"source", "/s"}, {"target", "/t"}, {"mode", "ro" + nul}}}}},
       "isolation-mount-bad-mode"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ProjectConfig> config =
        ParseProjectConfig(json{{"isolation", {{"container", c.container}}}});
    ASSERT_FALSE(config.ok()) << c.container.dump(-1, ' ', false, json::error_handler_t::replace);
    EXPECT_EQ(ErrorCode(config.status()), c.code);
  }
  absl::StatusOr<ProjectConfig> tier =
      ParseProjectConfig(json{{"isolation", {{"tier", "container" + nul}}}});
  ASSERT_FALSE(tier.ok());
  EXPECT_EQ(ErrorCode(tier.status()), "isolation-invalid-tier");
  // Mount paths parse as strings and are refused when validated.
  absl::StatusOr<ProjectConfig> mount = ParseProjectConfig(json{
      {"isolation", {{"container", {{"mounts", {{{"source", nul_path}, {"target", "/t"}}}}}}}}});
  ASSERT_TRUE(mount.ok());
  EXPECT_EQ(ErrorCode(ValidateMount(mount->container.mounts[0], policy_).status()),
            "isolation-mount-bad-source");
  // A NUL inside config text is not JSON.
  EXPECT_EQ(ErrorCode(ParseConfigText(std::string("{}\0", 3), "config.json").status()),
            "config-invalid-json");
  EXPECT_EQ(ErrorCode(ParseConfigText(std::string("{\"a\":\"\0\"}", 8), "config.json").status()),
            "config-invalid-json");
}

}  // namespace
}  // namespace np
