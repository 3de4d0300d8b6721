#include "core/container_argv.h"

#include <string>
#include <vector>

#include "core/errors.h"
#include "gtest/gtest.h"
#include "tests/core/argv_util.h"

namespace np {
namespace {

using ::np::testing::AnyContains;
using ::np::testing::AnyStartsWith;
using ::np::testing::Contains;
using ::np::testing::HasSequence;
using ::np::testing::IndexOf;
using ::np::testing::IndexOfSequence;
using ::np::testing::ParseCsvRecord;

ContainerSpawn Spawn(const std::string& project = "/home/u/proj") {
  ContainerSpawn spawn;
  spawn.project_root = project;
  spawn.cwd = project + "/src";
  spawn.uid = 1000;
  spawn.gid = 1001;
  spawn.name = "np-exec-42";
  spawn.owner = "42:12345";
  spawn.env_names = {"API_KEY", "GITHUB_TOKEN"};
  spawn.program = {"node", "agent.js", "--read-only-flag-of-the-program"};
  return spawn;
}

ContainerConfig Config(Runtime runtime = Runtime::kDocker) {
  ContainerConfig config;
  config.runtime = runtime;
  return config;
}

std::vector<std::string> Build(const ContainerConfig& config, const ContainerSpawn& spawn,
                               const std::vector<ValidatedMount>& mounts = {}) {
  absl::StatusOr<std::vector<std::string>> argv = BuildContainerArgv(config, mounts, spawn);
  EXPECT_TRUE(argv.ok()) << argv.status();
  return argv.ok() ? *argv : std::vector<std::string>{};
}

// The arguments before the image: the runtime's own flags.
std::vector<std::string> RuntimeFlags(const std::vector<std::string>& argv,
                                      const std::string& image) {
  long at = IndexOf(argv, image);
  EXPECT_GE(at, 0);
  return std::vector<std::string>(argv.begin(), argv.begin() + (at < 0 ? 0 : at));
}

// Every configuration the argv builder accepts, for both image runtimes.
std::vector<ContainerConfig> AllConfigs() {
  std::vector<ContainerConfig> configs;
  for (Runtime runtime : {Runtime::kDocker, Runtime::kPodman}) {
    ContainerConfig base = Config(runtime);
    configs.push_back(base);
    for (Network network : {Network::kNone, Network::kBridge, Network::kHost}) {
      ContainerConfig c = base;
      c.network = network;
      configs.push_back(c);
    }
    ContainerConfig image_user = base;
    image_user.user.kind = UserSpec::Kind::kImage;
    configs.push_back(image_user);
    ContainerConfig explicit_user = base;
    explicit_user.user = {UserSpec::Kind::kExplicit, "node"};
    configs.push_back(explicit_user);
    ContainerConfig limits = base;
    limits.memory = "512m";
    limits.cpus = "1.5";
    configs.push_back(limits);
    ContainerConfig workdir = base;
    workdir.workdir = "/work";
    configs.push_back(workdir);
    ContainerConfig pull = base;
    pull.pull_missing = true;
    pull.image = "ghcr.io/x/y@sha256:abc";
    configs.push_back(pull);
  }
  return configs;
}

TEST(ContainerArgvTest, HardeningIsPresentForEveryConfig) {
  const std::vector<ValidatedMount> mounts = {{"/opt/ref", "/ref", false},
                                              {"/home/u/proj/out", "/out", true}};
  for (const ContainerConfig& config : AllConfigs()) {
    for (bool tty : {false, true}) {
      ContainerSpawn spawn = Spawn();
      spawn.stdin_tty = spawn.stdout_tty = tty;
      std::vector<std::string> argv = Build(config, spawn, mounts);
      ASSERT_FALSE(argv.empty());
      const std::string runtime(RuntimeName(config.runtime));
      EXPECT_EQ(argv[0], runtime);
      EXPECT_EQ(argv[1], "run");
      std::vector<std::string> flags = RuntimeFlags(argv, config.image);
      EXPECT_TRUE(Contains(flags, "--rm")) << runtime;
      EXPECT_TRUE(Contains(flags, "-i"));
      EXPECT_TRUE(Contains(flags, "--init"));
      EXPECT_TRUE(HasSequence(flags, {"--network", std::string(NetworkName(config.network))}));
      EXPECT_TRUE(HasSequence(flags, {"--cap-drop", "ALL"}));
      EXPECT_TRUE(HasSequence(flags, {"--security-opt", "no-new-privileges"}));
      EXPECT_TRUE(Contains(flags, "--read-only"));
      EXPECT_TRUE(HasSequence(flags, {"--tmpfs", "/tmp:rw,nosuid,nodev,size=256m"}));
      EXPECT_TRUE(HasSequence(flags, {"-e", "HOME=/home/np-exec"}));
      EXPECT_TRUE(AnyStartsWith(flags, "/home/np-exec:rw"));
      // Nothing weakens it.
      EXPECT_FALSE(AnyContains(flags, "--privileged"));
      EXPECT_FALSE(AnyContains(flags, "--cap-add"));
      EXPECT_FALSE(AnyContains(flags, "seccomp=unconfined"));
      // The image comes right before the program, which is passed intact.
      long image_at = IndexOf(argv, config.image);
      ASSERT_GE(image_at, 0);
      EXPECT_EQ(std::vector<std::string>(argv.begin() + image_at + 1, argv.end()), spawn.program);
    }
  }
}

TEST(ContainerArgvTest, NetworkDefaultsToNone) {
  std::vector<std::string> argv = Build(ContainerConfig{}, Spawn());
  EXPECT_TRUE(HasSequence(argv, {"--network", "none"}));
  EXPECT_EQ(argv[0], "docker");
}

TEST(ContainerArgvTest, EnvIsForwardedByNameOnly) {
  ContainerSpawn spawn = Spawn();
  spawn.env_names = {"API_KEY", "SECRET_TOKEN", "_X"};
  std::vector<std::string> argv = Build(Config(), spawn);
  for (const std::string& name : spawn.env_names) {
    EXPECT_TRUE(HasSequence(argv, {"-e", name})) << name;
    EXPECT_FALSE(AnyStartsWith(argv, name + "=")) << name;
  }
  // The only -e with a value is np-exec's own HOME.
  for (size_t i = 0; i + 1 < argv.size(); ++i) {
    if (argv[i] == "-e" || argv[i] == "--env") {
      const std::string& next = argv[i + 1];
      EXPECT_TRUE(next.find('=') == std::string::npos || next == "HOME=/home/np-exec") << next;
    }
  }
  EXPECT_FALSE(AnyStartsWith(argv, "--env="));
  EXPECT_FALSE(AnyStartsWith(argv, "--env-file"));
}

TEST(ContainerArgvTest, MalformedEnvNamesAreRefused) {
  for (const std::string& bad :
       {std::string("A=secret"), std::string("1A"), std::string(""), std::string("A B"),
        std::string("HOME"), std::string("-e"), std::string("A\nB")}) {
    ContainerSpawn spawn = Spawn();
    spawn.env_names = {"GOOD", bad};
    absl::StatusOr<std::vector<std::string>> argv = BuildContainerArgv(Config(), {}, spawn);
    ASSERT_FALSE(argv.ok()) << bad;
    EXPECT_EQ(ErrorCode(argv.status()), "isolation-bad-env-name") << bad;
  }
}

TEST(ContainerArgvTest, UserSetting) {
  ContainerConfig config = Config();
  std::vector<std::string> argv = Build(config, Spawn());
  EXPECT_TRUE(Contains(argv, "--user=1000:1001"));
  config.user.kind = UserSpec::Kind::kImage;
  argv = Build(config, Spawn());
  EXPECT_FALSE(AnyStartsWith(argv, "--user"));
  EXPECT_FALSE(Contains(argv, "-u"));
  config.user = {UserSpec::Kind::kExplicit, "node:node"};
  argv = Build(config, Spawn());
  EXPECT_TRUE(Contains(argv, "--user=node:node"));
  EXPECT_FALSE(Contains(argv, "--user=1000:1001"));
}

TEST(ContainerArgvTest, MemoryAndCpusArePassedWhenSet) {
  ContainerConfig config = Config();
  std::vector<std::string> argv = Build(config, Spawn());
  EXPECT_FALSE(AnyStartsWith(argv, "--memory"));
  EXPECT_FALSE(AnyStartsWith(argv, "--cpus"));
  config.memory = "512m";
  config.cpus = "1.5";
  argv = Build(config, Spawn());
  EXPECT_TRUE(Contains(argv, "--memory=512m"));
  EXPECT_TRUE(Contains(argv, "--cpus=1.5"));
}

TEST(ContainerArgvTest, ImageIsRequired) {
  for (const std::string& image :
       {std::string(""), std::string("-v"), std::string("--privileged")}) {
    ContainerConfig config = Config();
    config.image = image;
    absl::StatusOr<std::vector<std::string>> argv = BuildContainerArgv(config, {}, Spawn());
    ASSERT_FALSE(argv.ok()) << image;
    EXPECT_EQ(ErrorCode(argv.status()), "isolation-no-image") << image;
  }
}

TEST(ContainerArgvTest, ProgramIsRequired) {
  for (const std::vector<std::string>& program :
       {std::vector<std::string>{}, std::vector<std::string>{""}}) {
    ContainerSpawn spawn = Spawn();
    spawn.program = program;
    absl::StatusOr<std::vector<std::string>> argv = BuildContainerArgv(Config(), {}, spawn);
    ASSERT_FALSE(argv.ok());
    EXPECT_EQ(ErrorCode(argv.status()), "isolation-wrap-no-command");
  }
}

TEST(ContainerArgvTest, TtyOnlyWhenBothAreTerminals) {
  struct Case {
    bool in;
    bool out;
    bool tty;
  };
  for (const Case& c : {Case{false, false, false}, Case{true, false, false},
                        Case{false, true, false}, Case{true, true, true}}) {
    ContainerSpawn spawn = Spawn();
    spawn.stdin_tty = c.in;
    spawn.stdout_tty = c.out;
    std::vector<std::string> flags = RuntimeFlags(Build(Config(), spawn), Config().image);
    EXPECT_EQ(Contains(flags, "-t"), c.tty) << c.in << c.out;
    EXPECT_FALSE(Contains(flags, "-it"));
    EXPECT_TRUE(Contains(flags, "-i"));
  }
}

TEST(ContainerArgvTest, WorkingDirectoryMapping) {
  struct Case {
    std::string cwd;
    std::optional<std::string> workdir;
    std::string expected_target;
    std::string expected_cwd;
  };
  const std::vector<Case> cases = {
      {"/home/u/proj", std::nullopt, "/home/u/proj", "/home/u/proj"},
      {"/home/u/proj/src", std::nullopt, "/home/u/proj", "/home/u/proj/src"},
      {"/home/u/proj/a/b", std::nullopt, "/home/u/proj", "/home/u/proj/a/b"},
      {"/home/u/proj", "/work", "/work", "/work"},
      {"/home/u/proj/src/x", "/work", "/work", "/work/src/x"},
  };
  for (const Case& c : cases) {
    ContainerConfig config = Config();
    config.workdir = c.workdir;
    ContainerSpawn spawn = Spawn();
    spawn.cwd = c.cwd;
    EXPECT_EQ(ProjectTarget(config, spawn), c.expected_target);
    absl::StatusOr<std::string> mapped = MapWorkingDirectory(config, spawn);
    ASSERT_TRUE(mapped.ok()) << mapped.status();
    EXPECT_EQ(*mapped, c.expected_cwd);
    std::vector<std::string> argv = Build(config, spawn);
    EXPECT_TRUE(HasSequence(argv, {"-w", c.expected_cwd})) << c.cwd;
    EXPECT_TRUE(
        HasSequence(argv, {"--mount", "type=bind,source=/home/u/proj,target=" + c.expected_target}))
        << c.cwd;
  }
}

TEST(ContainerArgvTest, ProjectAtRootMapsCwd) {
  ContainerSpawn spawn = Spawn();
  spawn.project_root = "/";
  spawn.cwd = "/srv/app";
  ContainerConfig config = Config();
  config.workdir = "/work";
  absl::StatusOr<std::string> mapped = MapWorkingDirectory(config, spawn);
  ASSERT_TRUE(mapped.ok());
  EXPECT_EQ(*mapped, "/work/srv/app");
}

TEST(ContainerArgvTest, CwdOutsideProjectIsRefused) {
  for (const std::string& cwd :
       {std::string("/home/u"), std::string("/home/u/proj-other"), std::string("/tmp")}) {
    ContainerSpawn spawn = Spawn();
    spawn.cwd = cwd;
    absl::StatusOr<std::vector<std::string>> argv = BuildContainerArgv(Config(), {}, spawn);
    ASSERT_FALSE(argv.ok()) << cwd;
    EXPECT_EQ(ErrorCode(argv.status()), "isolation-cwd-outside-project") << cwd;
  }
}

TEST(ContainerArgvTest, ProjectMountIsWritableExtraMountsKeepTheirMode) {
  const std::vector<ValidatedMount> mounts = {{"/opt/ref", "/ref", false},
                                              {"/home/u/proj/out", "/out", true}};
  std::vector<std::string> argv = Build(Config(), Spawn(), mounts);
  EXPECT_TRUE(HasSequence(argv, {"--mount", "type=bind,source=/home/u/proj,target=/home/u/proj"}));
  EXPECT_TRUE(HasSequence(argv, {"--mount", "type=bind,source=/opt/ref,target=/ref,readonly"}));
  EXPECT_TRUE(HasSequence(argv, {"--mount", "type=bind,source=/home/u/proj/out,target=/out"}));
  // No other way of mounting anything.
  EXPECT_FALSE(Contains(argv, "-v"));
  EXPECT_FALSE(Contains(argv, "--volume"));
  EXPECT_FALSE(AnyStartsWith(argv, "--volumes-from"));
}

// The project path as docker's CSV parser reads the --mount value.
std::string DockerSource(const std::vector<std::string>& argv, std::string* target) {
  long at = IndexOf(argv, "--mount");
  if (at < 0) return "";
  std::vector<std::string> fields;
  if (!ParseCsvRecord(argv[static_cast<size_t>(at) + 1], &fields)) return "<malformed>";
  std::string source;
  for (const std::string& field : fields) {
    if (field.rfind("source=", 0) == 0) source = field.substr(7);
    if (field.rfind("target=", 0) == 0) *target = field.substr(7);
  }
  EXPECT_EQ(fields.size(), 3u) << argv[static_cast<size_t>(at) + 1];
  return source;
}

TEST(ContainerArgvTest, ProjectPathWithSpacesColonsCommasArrivesIntactForDocker) {
  for (const std::string& project :
       {std::string("/home/u/my project"), std::string("/home/u/a:b"), std::string("/home/u/a,b"),
        std::string("/home/u/a,readonly"), std::string("/home/u/x,target=/etc"),
        std::string("/home/u/q\"uote"), std::string("/home/u/all of: it, \"here\"")}) {
    ContainerSpawn spawn = Spawn(project);
    std::vector<std::string> argv = Build(Config(Runtime::kDocker), spawn);
    std::string target;
    EXPECT_EQ(DockerSource(argv, &target), project);
    EXPECT_EQ(target, project);
    EXPECT_TRUE(HasSequence(argv, {"-w", project + "/src"}));
  }
}

TEST(ContainerArgvTest, PodmanRefusesCommasButTakesSpacesAndColons) {
  for (const std::string& project :
       {std::string("/home/u/my project"), std::string("/home/u/a:b")}) {
    std::vector<std::string> argv = Build(Config(Runtime::kPodman), Spawn(project));
    EXPECT_TRUE(
        HasSequence(argv, {"--mount", "type=bind,source=" + project + ",target=" + project}));
  }
  for (const std::string& project : {std::string("/home/u/a,b"), std::string("/home/u/q\"uote")}) {
    absl::StatusOr<std::vector<std::string>> argv =
        BuildContainerArgv(Config(Runtime::kPodman), {}, Spawn(project));
    ASSERT_FALSE(argv.ok()) << project;
    EXPECT_EQ(ErrorCode(argv.status()), "isolation-project-path-unsupported") << project;
  }
}

TEST(ContainerArgvTest, NewlineInProjectPathIsRefusedForBoth) {
  for (Runtime runtime : {Runtime::kDocker, Runtime::kPodman}) {
    for (const std::string& project : {std::string("/home/u/a\nb"), std::string("/home/u/a\rb")}) {
      absl::StatusOr<std::vector<std::string>> argv =
          BuildContainerArgv(Config(runtime), {}, Spawn(project));
      ASSERT_FALSE(argv.ok());
      EXPECT_EQ(ErrorCode(argv.status()), "isolation-project-path-unsupported");
    }
  }
}

TEST(ContainerArgvTest, ExtraMountWithSeparatorsForPodmanIsRefused) {
  absl::StatusOr<std::vector<std::string>> argv =
      BuildContainerArgv(Config(Runtime::kPodman), {{"/opt/a,b", "/ref", false}}, Spawn());
  ASSERT_FALSE(argv.ok());
  EXPECT_EQ(ErrorCode(argv.status()), "isolation-mount-bad-source");
  std::vector<std::string> docker =
      Build(Config(Runtime::kDocker), Spawn(), {{"/opt/a,b", "/ref", false}});
  EXPECT_TRUE(Contains(docker, "type=bind,\"source=/opt/a,b\",target=/ref,readonly"));
}

TEST(ContainerArgvTest, FormatBindMount) {
  struct Case {
    Runtime runtime;
    std::string source;
    std::string target;
    bool writable;
    std::string value;  // "" when refused.
  };
  const std::vector<Case> cases = {
      {Runtime::kDocker, "/a", "/b", true, "type=bind,source=/a,target=/b"},
      {Runtime::kDocker, "/a", "/b", false, "type=bind,source=/a,target=/b,readonly"},
      {Runtime::kDocker, "/a b", "/b", false, "type=bind,source=/a b,target=/b,readonly"},
      {Runtime::kDocker, "/a,b", "/b", true, "type=bind,\"source=/a,b\",target=/b"},
      {Runtime::kDocker, "/a\"b", "/b", true, "type=bind,\"source=/a\"\"b\",target=/b"},
      {Runtime::kDocker, "/a:b", "/b", true, "type=bind,source=/a:b,target=/b"},
      {Runtime::kPodman, "/a:b", "/b", true, "type=bind,source=/a:b,target=/b"},
      {Runtime::kDocker, "/a\nb", "/b", true, ""},
      {Runtime::kDocker, "/a", "/b\n", true, ""},
      {Runtime::kDocker, std::string("/a\0b", 4), "/b", true, ""},
      {Runtime::kPodman, "/a,b", "/b", true, ""},
      {Runtime::kPodman, "/a", "/b,c", true, ""},
      {Runtime::kPodman, "/a\"", "/b", true, ""},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::string> value =
        FormatBindMount(c.runtime, c.source, c.target, c.writable, "my-code");
    if (c.value.empty()) {
      ASSERT_FALSE(value.ok()) << c.source << " " << c.target;
      EXPECT_EQ(ErrorCode(value.status()), "my-code");
    } else {
      ASSERT_TRUE(value.ok()) << c.source;
      EXPECT_EQ(*value, c.value);
      if (c.runtime == Runtime::kDocker) {
        std::vector<std::string> fields;
        ASSERT_TRUE(ParseCsvRecord(*value, &fields));
        EXPECT_EQ(fields[1], "source=" + c.source);
        EXPECT_EQ(fields[2], "target=" + c.target);
      }
    }
  }
}

TEST(ContainerArgvTest, OwnerLabelOnlyWhenOwnerGiven) {
  ContainerSpawn spawn = Spawn();
  std::vector<std::string> argv = Build(Config(), spawn);
  EXPECT_TRUE(HasSequence(argv, {"--label", "dev.nubos.np-exec.owner=42:12345"}));
  EXPECT_TRUE(HasSequence(argv, {"--label", "dev.nubos.np-exec=1"}));
  EXPECT_TRUE(HasSequence(argv, {"--name", "np-exec-42"}));
  spawn.owner.clear();
  argv = Build(Config(), spawn);
  EXPECT_FALSE(AnyStartsWith(argv, "dev.nubos.np-exec.owner"));
  EXPECT_TRUE(HasSequence(argv, {"--label", "dev.nubos.np-exec=1"}));
}

TEST(ContainerArgvTest, PullPolicy) {
  ContainerConfig config = Config();
  EXPECT_TRUE(Contains(Build(config, Spawn()), "--pull=never"));
  config.pull_missing = true;
  std::vector<std::string> argv = Build(config, Spawn());
  EXPECT_TRUE(Contains(argv, "--pull=missing"));
  EXPECT_FALSE(Contains(argv, "--pull=never"));
}

TEST(ContainerArgvTest, ProgramArgumentsAreNotRuntimeFlags) {
  ContainerSpawn spawn = Spawn();
  spawn.program = {"node", "--privileged", "-v", "/:/host"};
  std::vector<std::string> argv = Build(Config(), spawn);
  long image_at = IndexOf(argv, Config().image);
  EXPECT_EQ(IndexOfSequence(argv, {"node", "--privileged", "-v", "/:/host"}), image_at + 1);
  EXPECT_EQ(static_cast<size_t>(image_at) + 5, argv.size());
}

}  // namespace
}  // namespace np

namespace np {
namespace {

// Issue 17: a persistent home is bound read-write in place of the tmpfs,
// and the caller's account view read-only over /etc/passwd and /etc/group.
TEST(ContainerArgvTest, PersistentHomeAndAccountViewAreBinds) {
  for (Runtime runtime : {Runtime::kDocker, Runtime::kPodman}) {
    ContainerSpawn spawn = Spawn();
    std::vector<std::string> plain = Build(Config(runtime), spawn);
    EXPECT_TRUE(AnyStartsWith(plain, "/home/np-exec:rw,"));
    EXPECT_FALSE(AnyContains(plain, "target=/etc/passwd"));
    spawn.home_source = "/state/np-exec/homes/abc";
    spawn.passwd_file = "/run/user/1000/np-exec-account-x/passwd";
    spawn.group_file = "/run/user/1000/np-exec-account-x/group";
    std::vector<std::string> argv = Build(Config(runtime), spawn);
    EXPECT_FALSE(AnyStartsWith(argv, "/home/np-exec:rw,"));
    EXPECT_TRUE(HasSequence(
        argv, {"--mount", "type=bind,source=/state/np-exec/homes/abc,target=/home/np-exec"}));
    EXPECT_TRUE(HasSequence(argv, {"--mount",
                                   "type=bind,source=/run/user/1000/np-exec-account-x/passwd,"
                                   "target=/etc/passwd,readonly"}));
    EXPECT_TRUE(HasSequence(argv, {"--mount",
                                   "type=bind,source=/run/user/1000/np-exec-account-x/group,"
                                   "target=/etc/group,readonly"}));
    EXPECT_TRUE(Contains(argv, "HOME=/home/np-exec"));
  }
  ContainerSpawn relative = Spawn();
  relative.home_source = "state/homes/abc";
  absl::StatusOr<std::vector<std::string>> argv = BuildContainerArgv(Config(), {}, relative);
  ASSERT_FALSE(argv.ok());
  EXPECT_EQ(ErrorCode(argv.status()), "isolation-mount-bad-source");
}

}  // namespace
}  // namespace np
