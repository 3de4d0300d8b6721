#include "core/bwrap_argv.h"

#include <string>
#include <vector>

#include "core/errors.h"
#include "gtest/gtest.h"
#include "tests/core/argv_util.h"

namespace np {
namespace {

using ::np::testing::AnyContains;
using ::np::testing::Contains;
using ::np::testing::HasSequence;
using ::np::testing::IndexOf;
using ::np::testing::IndexOfSequence;

const std::vector<RootEntry> kMergedUsr = {
    {"/bin", "usr/bin"}, {"/lib", "usr/lib"}, {"/lib64", "usr/lib64"}, {"/sbin", "usr/sbin"}};

ContainerConfig BwrapConfig() {
  ContainerConfig config;
  config.runtime = Runtime::kBwrap;
  return config;
}

ContainerSpawn Spawn() {
  ContainerSpawn spawn;
  spawn.project_root = "/home/u/proj";
  spawn.cwd = "/home/u/proj/src";
  spawn.uid = 1000;
  spawn.gid = 1000;
  spawn.name = "np-exec-1";
  spawn.env_names = {"API_KEY", "SENTINEL_SECRET"};
  spawn.program = {"node", "agent.js"};
  return spawn;
}

std::vector<std::string> Build(const ContainerConfig& config, const ContainerSpawn& spawn,
                               const std::vector<ValidatedMount>& mounts = {},
                               const std::vector<RootEntry>& layout = kMergedUsr) {
  absl::StatusOr<std::vector<std::string>> argv = BuildBwrapArgv(config, mounts, spawn, layout);
  EXPECT_TRUE(argv.ok()) << argv.status();
  return argv.ok() ? *argv : std::vector<std::string>{};
}

// bwrap's own options: everything before "--".
std::vector<std::string> Options(const std::vector<std::string>& argv) {
  long at = IndexOf(argv, "--");
  EXPECT_GE(at, 0);
  return std::vector<std::string>(argv.begin(), argv.begin() + (at < 0 ? 0 : at));
}

// Issue 19 item 1: a prepared /etc is one read-only bind instead of one per
// file, unless a mount goes below /etc.
TEST(BwrapArgvTest, APreparedEtcIsOneReadOnlyBind) {
  ContainerSpawn spawn = Spawn();
  spawn.etc_view = "/home/u/.local/state/np-exec/etc-view/v-1";
  std::vector<std::string> argv = Build(BwrapConfig(), spawn);
  EXPECT_TRUE(HasSequence(argv, {"--ro-bind", spawn.etc_view, "/etc"}));
  EXPECT_FALSE(Contains(argv, "--ro-bind-try"));
  const std::vector<ValidatedMount> under_etc = {{"/opt/conf", "/etc/tool", false}};
  argv = Build(BwrapConfig(), spawn, under_etc);
  EXPECT_FALSE(Contains(argv, spawn.etc_view));
  for (const std::string& file : SandboxEtcFiles()) {
    EXPECT_TRUE(HasSequence(argv, {"--ro-bind-try", file, file})) << file;
  }
  // A copy where the program can write is never bound.
  ContainerSpawn inside = spawn;
  inside.etc_view = "/home/u/proj/.state/np-exec/etc-view/v-1";
  EXPECT_FALSE(Contains(Build(BwrapConfig(), inside), inside.etc_view));
  const std::vector<ValidatedMount> writable = {{"/home/u/.local", "/home/u/proj/local", true}};
  EXPECT_FALSE(Contains(Build(BwrapConfig(), spawn, writable), spawn.etc_view));
  spawn.etc_view = "relative/view";
  EXPECT_EQ(ErrorCode(BuildBwrapArgv(BwrapConfig(), {}, spawn, kMergedUsr).status()),
            "isolation-mount-bad-source");
}

// Issue 19 item 3: past bubblewrap's limit the program goes after np-exec's
// argv-entry, its own binary bound read-only before the root turns read-only.
TEST(BwrapArgvTest, AnArgvPastBubblewrapsLimitGoesThroughTheEntryPoint) {
  ContainerSpawn spawn = Spawn();
  spawn.self_binary = "/usr/local/bin/np-exec";
  std::vector<std::string> argv = Build(BwrapConfig(), spawn);
  EXPECT_EQ(ArgvHandoffStart(argv), std::string::npos);
  EXPECT_FALSE(Contains(argv, spawn.self_binary));
  spawn.program.assign(kBwrapMaxArgs, "x");
  spawn.program.front() = "echo";
  argv = Build(BwrapConfig(), spawn);
  const size_t start = ArgvHandoffStart(argv);
  ASSERT_NE(start, std::string::npos);
  EXPECT_EQ(std::vector<std::string>(argv.begin() + static_cast<long>(start), argv.end()),
            spawn.program);
  const long bind = IndexOfSequence(argv, {"--ro-bind", spawn.self_binary, "/run/np-exec/np-exec"});
  ASSERT_GE(bind, 0);
  EXPECT_LT(bind, IndexOf(argv, "--remount-ro"));
  // On network "allowlist" np-exec is bound once, and argv-entry execs the
  // egress entry point, which execs the program.
  ContainerConfig allowlist = BwrapConfig();
  allowlist.network = Network::kAllowlist;
  ContainerSpawn egress = spawn;
  egress.egress_socket = "/run/user/1000/np-exec-egress-x/egress.sock";
  argv = Build(allowlist, egress);
  const size_t egress_start = ArgvHandoffStart(argv);
  ASSERT_NE(egress_start, std::string::npos);
  long binds = 0;
  for (const std::string& arg : argv) binds += arg == spawn.self_binary ? 1 : 0;
  EXPECT_EQ(binds, 1);
  EXPECT_EQ(argv[egress_start], "/run/np-exec/np-exec");
  EXPECT_EQ(argv[egress_start + 1], "egress-entry");
  EXPECT_EQ(argv.back(), spawn.program.back());
  // Without np-exec's own path, a coded error, never bubblewrap's failure.
  spawn.self_binary.clear();
  EXPECT_EQ(ErrorCode(BuildBwrapArgv(BwrapConfig(), {}, spawn, kMergedUsr).status()),
            "isolation-bwrap-too-many-arguments");
  // Options alone past the limit: the same code.
  spawn.self_binary = "/usr/local/bin/np-exec";
  spawn.program = {"true"};
  std::vector<ValidatedMount> many;
  for (size_t i = 0; i < kBwrapMaxArgs / 3; ++i) {
    many.push_back({"/opt/d" + std::to_string(i), "/mnt/x" + std::to_string(i) + "/d", false});
  }
  EXPECT_EQ(ErrorCode(BuildBwrapArgv(BwrapConfig(), many, spawn, kMergedUsr).status()),
            "isolation-bwrap-too-many-arguments");
}

TEST(BwrapArgvTest, NamespacesAndHardeningArePresent) {
  for (Network network : {Network::kNone, Network::kHost}) {
    ContainerConfig config = BwrapConfig();
    config.network = network;
    std::vector<std::string> argv = Build(config, Spawn());
    ASSERT_FALSE(argv.empty());
    EXPECT_EQ(argv[0], "bwrap");
    std::vector<std::string> options = Options(argv);
    for (const char* flag : {"--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
                             "--die-with-parent", "--new-session"}) {
      EXPECT_TRUE(Contains(options, flag)) << flag;
    }
    EXPECT_TRUE(HasSequence(options, {"--cap-drop", "ALL"}));
    EXPECT_TRUE(HasSequence(options, {"--proc", "/proc"}));
    EXPECT_TRUE(HasSequence(options, {"--dev", "/dev"}));
    EXPECT_TRUE(HasSequence(options, {"--tmpfs", "/tmp"}));
    EXPECT_TRUE(HasSequence(options, {"--tmpfs", "/home/np-exec"}));
    EXPECT_TRUE(HasSequence(options, {"--ro-bind", "/usr", "/usr"}));
    EXPECT_EQ(Contains(options, "--unshare-net"), network != Network::kHost);
    EXPECT_FALSE(Contains(options, "--share-net"));
    EXPECT_FALSE(Contains(options, "--cap-add"));
    EXPECT_FALSE(Contains(options, "--unshare-all"));  // Would also need --share-net care.
  }
}

TEST(BwrapArgvTest, RootIsRemountedReadOnlyAfterEveryBind) {
  const std::vector<ValidatedMount> mounts = {{"/opt/ref", "/ref", false},
                                              {"/home/u/proj/out", "/out", true}};
  std::vector<std::string> argv = Build(BwrapConfig(), Spawn(), mounts);
  long remount = IndexOfSequence(argv, {"--remount-ro", "/"});
  ASSERT_GE(remount, 0);
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == "--bind" || argv[i] == "--ro-bind" || argv[i] == "--ro-bind-try" ||
        argv[i] == "--tmpfs" || argv[i] == "--symlink") {
      EXPECT_LT(static_cast<long>(i), remount) << argv[i];
    }
  }
}

// What the host finds must exist inside too: the path as the sandbox sees it
// and the host's real path of the file both lie in what the sandbox shows.
TEST(BwrapArgvTest, VisibleInSandboxOnlyForWhatTheSandboxShows) {
  const std::vector<RootEntry> merged = {{"/bin", "usr/bin"}, {"/lib", "usr/lib"}};
  const std::vector<RootEntry> split = {{"/bin", ""}};
  const std::vector<ValidatedMount> mounts = {{"/data/tools", "/opt/tools", false}};
  const std::string project = "/home/u/proj";
  struct Row {
    const char* path;
    const char* real;
    const std::vector<RootEntry>* layout;
    bool visible;
  };
  const Row rows[] = {
      {"/usr/bin/node", "/usr/bin/node", &merged, true},
      {"/bin/sh", "/usr/bin/dash", &merged, true},
      {"/usr/bin/awk", "/usr/bin/mawk", &merged, true},  // Through /etc/alternatives.
      {"/bin/true", "/bin/true", &split, true},          // A bound root directory.
      {"/bin/true", "/bin/true", &merged, false},        // Not bound when a link.
      {"/home/u/proj/run.sh", "/home/u/proj/run.sh", &merged, true},
      {"/home/u/proj/link", "/tmp/elsewhere", &merged, false},  // Dangles inside.
      {"/home/u/projects/x", "/home/u/projects/x", &merged, false},
      {"/opt/tools/lint", "/data/tools/lint", &merged, true},
      {"/opt/other/lint", "/opt/other/lint", &merged, false},
      {"/tmp/x", "/tmp/x", &merged, false},            // /tmp is an empty tmpfs.
      {"/root/bin/x", "/root/bin/x", &merged, false},  // So is HOME.
      {"/usr/local/bin/tool", "/opt/tool/bin/tool", &merged, false},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(VisibleInSandbox(row.path, row.real, project, mounts, *row.layout), row.visible)
        << row.path << " -> " << row.real;
  }
}

TEST(BwrapArgvTest, NeverTheWholeEtc) {
  std::vector<std::string> argv = Build(BwrapConfig(), Spawn());
  for (size_t i = 0; i + 1 < argv.size(); ++i) {
    if (argv[i] == "--bind" || argv[i] == "--ro-bind" || argv[i] == "--ro-bind-try" ||
        argv[i] == "--dev-bind") {
      EXPECT_NE(argv[i + 1], "/etc");
      EXPECT_NE(argv[i + 1], "/etc/");
      EXPECT_NE(argv[i + 1], "/");
      EXPECT_NE(argv[i + 1], "/home");
    }
  }
  for (const std::string& file : SandboxEtcFiles()) {
    EXPECT_EQ(file.rfind("/etc/", 0), 0u) << file;
    EXPECT_NE(file, "/etc/shadow");
    EXPECT_NE(file, "/etc/sudoers");
    EXPECT_TRUE(HasSequence(argv, {"--ro-bind-try", file, file})) << file;
  }
}

TEST(BwrapArgvTest, NoEnvironmentValuesOrNamesInArgv) {
  std::vector<std::string> argv = Build(BwrapConfig(), Spawn());
  EXPECT_FALSE(AnyContains(argv, "SENTINEL_SECRET"));
  EXPECT_FALSE(AnyContains(argv, "API_KEY"));
  EXPECT_FALSE(Contains(argv, "--setenv"));
  EXPECT_FALSE(Contains(argv, "--clearenv"));
  for (const std::string& arg : Options(argv)) {
    EXPECT_EQ(arg.find('='), std::string::npos) << arg;
  }
}

TEST(BwrapArgvTest, BaseEnvironmentCarriesNoForwardedVariable) {
  EXPECT_EQ(BwrapBaseEnvironment(""),
            (std::vector<std::string>{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/np-exec"}));
  EXPECT_EQ(BwrapBaseEnvironment("xterm-256color"),
            (std::vector<std::string>{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/np-exec",
                                      "TERM=xterm-256color"}));
}

TEST(BwrapArgvTest, SettingsBubblewrapCannotDeliverAreRefused) {
  std::vector<ContainerConfig> configs;
  ContainerConfig memory = BwrapConfig();
  memory.memory = "512m";
  configs.push_back(memory);
  ContainerConfig cpus = BwrapConfig();
  cpus.cpus = "1";
  configs.push_back(cpus);
  ContainerConfig bridge = BwrapConfig();
  bridge.network = Network::kBridge;
  configs.push_back(bridge);
  ContainerConfig image_user = BwrapConfig();
  image_user.user.kind = UserSpec::Kind::kImage;
  configs.push_back(image_user);
  ContainerConfig explicit_user = BwrapConfig();
  explicit_user.user = {UserSpec::Kind::kExplicit, "root"};
  configs.push_back(explicit_user);
  for (size_t i = 0; i < configs.size(); ++i) {
    absl::StatusOr<std::vector<std::string>> argv =
        BuildBwrapArgv(configs[i], {}, Spawn(), kMergedUsr);
    ASSERT_FALSE(argv.ok()) << i;
    EXPECT_EQ(ErrorCode(argv.status()), "isolation-bwrap-unsupported") << i;
  }
}

TEST(BwrapArgvTest, ProjectAndMountsAndWorkdir) {
  const std::vector<ValidatedMount> mounts = {{"/opt/ref", "/ref", false},
                                              {"/home/u/proj/out", "/out", true}};
  std::vector<std::string> argv = Build(BwrapConfig(), Spawn(), mounts);
  EXPECT_TRUE(HasSequence(argv, {"--bind", "/home/u/proj", "/home/u/proj"}));
  EXPECT_TRUE(HasSequence(argv, {"--ro-bind", "/opt/ref", "/ref"}));
  EXPECT_TRUE(HasSequence(argv, {"--bind", "/home/u/proj/out", "/out"}));
  EXPECT_TRUE(HasSequence(argv, {"--chdir", "/home/u/proj/src", "--", "node", "agent.js"}));
  ContainerConfig workdir = BwrapConfig();
  workdir.workdir = "/work";
  argv = Build(workdir, Spawn());
  EXPECT_TRUE(HasSequence(argv, {"--bind", "/home/u/proj", "/work"}));
  EXPECT_TRUE(HasSequence(argv, {"--chdir", "/work/src"}));
}

TEST(BwrapArgvTest, RootLayout) {
  const std::vector<RootEntry> split = {{"/bin", ""}, {"/lib64", ""}, {"/sbin", "usr/sbin"}};
  std::vector<std::string> argv = Build(BwrapConfig(), Spawn(), {}, split);
  EXPECT_TRUE(HasSequence(argv, {"--ro-bind", "/bin", "/bin"}));
  EXPECT_TRUE(HasSequence(argv, {"--ro-bind", "/lib64", "/lib64"}));
  EXPECT_TRUE(HasSequence(argv, {"--symlink", "usr/sbin", "/sbin"}));
  for (const RootEntry& entry : ReadHostRootLayout()) {
    bool known = false;
    for (const char* path : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) {
      known = known || entry.path == path;
    }
    EXPECT_TRUE(known) << entry.path;
  }
}

TEST(BwrapArgvTest, ErrorsAreCoded) {
  struct Case {
    std::string name;
    ContainerSpawn spawn;
    std::vector<ValidatedMount> mounts;
    std::string code;
  };
  std::vector<Case> cases;
  ContainerSpawn no_program = Spawn();
  no_program.program.clear();
  cases.push_back({"NoProgram", no_program, {}, "isolation-wrap-no-command"});
  ContainerSpawn outside = Spawn();
  outside.cwd = "/home/u/proj-other";
  cases.push_back({"CwdOutside", outside, {}, "isolation-cwd-outside-project"});
  ContainerSpawn bad_env = Spawn();
  bad_env.env_names = {"A=secret"};
  cases.push_back({"BadEnv", bad_env, {}, "isolation-bad-env-name"});
  ContainerSpawn nul_project = Spawn();
  nul_project.project_root = std::string("/home/u/proj\0x", 14);
  nul_project.cwd = nul_project.project_root;
  cases.push_back({"NulProject", nul_project, {}, "invalid-path"});
  cases.push_back({"NulMountSource",
                   Spawn(),
                   {{std::string("/opt\0/x", 7), "/x", false}},
                   "isolation-mount-bad-source"});
  cases.push_back(
      {"RelativeMountTarget", Spawn(), {{"/opt", "x", false}}, "isolation-mount-bad-target"});
  for (const Case& c : cases) {
    absl::StatusOr<std::vector<std::string>> argv =
        BuildBwrapArgv(BwrapConfig(), c.mounts, c.spawn, kMergedUsr);
    ASSERT_FALSE(argv.ok()) << c.name;
    EXPECT_EQ(ErrorCode(argv.status()), c.code) << c.name;
  }
}

}  // namespace
}  // namespace np

namespace np {
namespace {

TEST(BwrapArgvTest, PersistentHomeAndAccountViewReplaceTmpfsAndHostFiles) {
  ContainerSpawn spawn = Spawn();
  std::vector<std::string> plain = Build(BwrapConfig(), spawn);
  EXPECT_TRUE(HasSequence(plain, {"--tmpfs", "/home/np-exec"}));
  EXPECT_TRUE(HasSequence(plain, {"--ro-bind-try", "/etc/passwd", "/etc/passwd"}));
  spawn.home_source = "/state/np-exec/homes/abc";
  spawn.passwd_file = "/tmp/np-exec-account-x/passwd";
  spawn.group_file = "/tmp/np-exec-account-x/group";
  std::vector<std::string> argv = Build(BwrapConfig(), spawn);
  EXPECT_FALSE(HasSequence(argv, {"--tmpfs", "/home/np-exec"}));
  EXPECT_TRUE(HasSequence(argv, {"--bind", "/state/np-exec/homes/abc", "/home/np-exec"}));
  EXPECT_TRUE(HasSequence(argv, {"--ro-bind", "/tmp/np-exec-account-x/passwd", "/etc/passwd"}));
  EXPECT_TRUE(HasSequence(argv, {"--ro-bind", "/tmp/np-exec-account-x/group", "/etc/group"}));
  EXPECT_FALSE(HasSequence(argv, {"--ro-bind-try", "/etc/passwd", "/etc/passwd"}));
  // Still before the root is made read-only.
  EXPECT_LT(IndexOf(argv, "/home/np-exec"), IndexOf(argv, "--remount-ro"));
}

}  // namespace
}  // namespace np
