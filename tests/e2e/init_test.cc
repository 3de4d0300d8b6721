// `np-exec init` on docker, podman and bubblewrap: the config it writes for
// what this machine has runs an agent CLI on the first try, is trusted as
// written, and puts the audit log in .gitignore; it never replaces a config,
// never writes through a link, and writes nothing when the runtime asked for
// cannot be used.
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"

namespace np::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string AgentPrefix() {
  const char* dir = getenv("NP_RUNTIME_DIR");
  return std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp/np-exec-runtimes") +
         "/agent-prefix";
}

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

class InitTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { NP_REQUIRE_RUNTIME(runtime()); }
  const std::string& runtime() const { return GetParam(); }

  // The environment of a user whose PATH has the agent CLIs: on bubblewrap
  // the host's npm prefix (scripts/install-agent-clis.sh), on an engine the
  // images (scripts/build-agent-image.sh); both made by the test command.
  std::vector<std::string> AgentEnv() {
    std::vector<std::string> env = RuntimeEnv();
    SetEnv(env, "PATH", AgentPrefix() + "/bin:/usr/local/bin:/usr/bin:/bin");
    return env;
  }

  RunResult Init(const std::vector<std::string>& args, const std::vector<std::string>& env) {
    std::vector<std::string> argv = {NpExecBin(), "init"};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, Options(env, 120000, project_));
  }

  TempDir dir_;
  const std::string project_ = dir_.MakeDir("project");
};

// The config init writes for the agents this machine has runs them: claude,
// codex and gemini by name, each in its own image on docker and podman, from
// the host's prefix (mounted at its own path) on bubblewrap.
TEST_P(InitTest, TheConfigItWritesRunsTheAgentsAtOnce) {
  if (!Exists(AgentPrefix() + "/bin/claude")) {
    NP_NEEDS("the agent CLIs in " << AgentPrefix() << " (scripts/install-agent-clis.sh)");
  }
  const std::vector<std::string> env = AgentEnv();
  RunResult init = Init({"--runtime", runtime(), "--json"}, env);
  ASSERT_EQ(init.exit_code, 0) << init.out << init.err;
  const nlohmann::json out = nlohmann::json::parse(init.out);
  EXPECT_EQ(out["runtime"], runtime());
  EXPECT_THAT(out["agents"], ElementsAre("claude", "codex", "gemini")) << out.dump();
  EXPECT_EQ(out["gitignore"], "added");
  EXPECT_EQ(out["trust"]["trusted"], true);
  const nlohmann::json config =
      nlohmann::json::parse(ReadFile(project_ + "/.nubos-pilot/config.json"));
  EXPECT_EQ(config, out["config"]);
  const nlohmann::json& container = config["isolation"]["container"];
  EXPECT_EQ(container["runtime"], runtime());
  EXPECT_EQ(container["network"], "allowlist");
  EXPECT_THAT(container["allow_hosts"], ElementsAre("api.anthropic.com", "api.openai.com",
                                                    "generativelanguage.googleapis.com"));
  if (runtime() == "bwrap") {
    EXPECT_FALSE(container.contains("image"));
    // The prefix's bin and its lib/node_modules (where bin/claude links).
    ASSERT_TRUE(container["mounts"].is_array()) << config.dump();
    EXPECT_EQ(container["mounts"][0]["source"], AgentPrefix() + "/bin");
  } else {
    EXPECT_EQ(container["image"], "np-agent-claude:local");
    EXPECT_EQ(container["images"]["codex"], "np-agent-codex:local");
  }
  EXPECT_THAT(ReadFile(project_ + "/.gitignore"), HasSubstr("\n.nubos-pilot/audit/\n"));
  for (const std::string agent : {"claude", "codex"}) {
    RunResult version =
        RunProcess({NpExecBin(), "--", agent, "--version"}, Options(env, 180000, project_));
    EXPECT_EQ(version.exit_code, 0) << agent << ": " << version.out << version.err;
    EXPECT_THAT(version.out, ::testing::ContainsRegex("[0-9]+\\.[0-9]+\\.[0-9]+")) << agent;
  }
  // And the audit line says it ran contained, on this runtime.
  int bad = 0;
  const std::vector<nlohmann::json> audit = ReadAuditLog(project_, &bad);
  ASSERT_FALSE(audit.empty());
  bool ran = false;
  for (const nlohmann::json& line : audit) {
    if (line.value("decision", "") != "run") continue;
    ran = true;
    EXPECT_EQ(line.value("tier", ""), "container") << line.dump();
  }
  EXPECT_TRUE(ran);
}

// A second init leaves the first config byte for byte, and .gitignore too.
TEST_P(InitTest, NeverReplacesAConfig) {
  const std::string before = "{\"isolation\":{\"tier\":\"worktree\"}}\n";
  dir_.Write("project/.nubos-pilot/config.json", before);
  RunResult init = Init({"--runtime", runtime()}, RuntimeEnv());
  EXPECT_EQ(init.exit_code, 1) << init.out << init.err;
  EXPECT_THAT(init.err, HasSubstr("(init-config-exists)"));
  EXPECT_EQ(ReadFile(project_ + "/.nubos-pilot/config.json"), before);
  EXPECT_FALSE(Exists(project_ + "/.gitignore"));
  EXPECT_EQ(init.out, "");
}

// A repository's .gitignore or .nubos-pilot that is a link is never written
// through: the file it points at stays as it was and no config is written.
TEST_P(InitTest, WritesNothingThroughALink) {
  const std::string outside = dir_.MakeDir("outside");
  dir_.Write("outside/victim", "keep\n");
  ASSERT_EQ(symlink((outside + "/victim").c_str(), (project_ + "/.gitignore").c_str()), 0);
  RunResult init = Init({"--runtime", runtime()}, RuntimeEnv());
  EXPECT_EQ(init.exit_code, 1) << init.out << init.err;
  EXPECT_THAT(init.err, HasSubstr("(init-unsafe-path)"));
  EXPECT_EQ(ReadFile(outside + "/victim"), "keep\n");
  EXPECT_FALSE(Exists(project_ + "/.nubos-pilot/config.json"));

  EXPECT_FALSE(Exists(project_ + "/.nubos-pilot"));
  ASSERT_EQ(unlink((project_ + "/.gitignore").c_str()), 0);
  ASSERT_EQ(symlink(outside.c_str(), (project_ + "/.nubos-pilot").c_str()), 0);
  init = Init({"--runtime", runtime()}, RuntimeEnv());
  EXPECT_EQ(init.exit_code, 1) << init.out << init.err;
  EXPECT_THAT(init.err, HasSubstr("(init-unsafe-path)"));
  EXPECT_FALSE(Exists(outside + "/config.json"));
}

// An existing .gitignore keeps its lines; the audit line is added once.
TEST_P(InitTest, AddsTheAuditLogToAnExistingGitignoreOnce) {
  dir_.Write("project/.gitignore", "node_modules/");
  RunResult init = Init({"--runtime", runtime()}, RuntimeEnv());
  ASSERT_EQ(init.exit_code, 0) << init.out << init.err;
  EXPECT_THAT(init.out, HasSubstr("added .nubos-pilot/audit/ to .gitignore"));
  EXPECT_THAT(init.out, HasSubstr("next:\n"));
  EXPECT_EQ(ReadFile(project_ + "/.gitignore"),
            "node_modules/\n# np-exec's audit log (np-exec init)\n.nubos-pilot/audit/\n");
  // The spawn runs on the runtime it wrote, trusted.
  RunResult run = RunProcess({NpExecBin(), "--", "sh", "-c", "echo inside"},
                             Options(RuntimeEnv(), 120000, project_));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "inside\n");
  RunResult show = RunProcess({NpExecBin(), "trust", "--show", "--json"},
                              Options(RuntimeEnv(), 60000, project_));
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_EQ(nlohmann::json::parse(show.out)["state"], "trusted") << show.out;
}

// A runtime asked for that cannot be used is refused with its cause, and
// nothing is written.
TEST(InitRefusalTest, AnUnusableRuntimeWritesNothing) {
  TempDir dir;
  const std::string project = dir.MakeDir("project");
  std::vector<std::string> env = BaseEnv();
  SetEnv(env, "DOCKER_HOST", "unix://" + dir.Path("no-such.sock"));
  RunResult init =
      RunProcess({NpExecBin(), "init", "--runtime", "docker"}, Options(env, 60000, project));
  EXPECT_EQ(init.exit_code, 1) << init.out << init.err;
  EXPECT_THAT(init.err, HasSubstr("(init-runtime-unavailable)"));
  EXPECT_THAT(init.err, HasSubstr("nothing was written"));
  EXPECT_FALSE(Exists(project + "/.nubos-pilot"));
  EXPECT_FALSE(Exists(project + "/.gitignore"));
  RunResult agent =
      RunProcess({NpExecBin(), "init", "--agent", "cursor"}, Options(env, 60000, project));
  EXPECT_EQ(agent.exit_code, 1);
  EXPECT_THAT(agent.err, HasSubstr("(init-unknown-agent)"));
}

INSTANTIATE_TEST_SUITE_P(Runtimes, InitTest, ::testing::Values("docker", "podman", "bwrap"),
                         RuntimeName);

}  // namespace
}  // namespace np::testing
