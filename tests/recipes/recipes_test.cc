// The host recipes (docs/agent-images.md, "Host recipes"), each tried for real: a stand-in host
// (a script that behaves like nubos-pilot or the host CLI: it spawns what the
// host would spawn, the way the host spawns it) runs against the built
// np-exec, and the test checks that the spawn went through the tier (the
// audit log records it) and that output and exit status pass through.
//
// The stand-ins use the machine's real node (/usr/bin/node) where the host is
// node; the agent CLIs themselves (claude, codex, gemini) are fake scripts.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/launcher/fakes.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace np::testing {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::StartsWith;

constexpr char kNode[] = "/usr/bin/node";

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

// The stand-in for nubos-pilot's bin/np-tools/spawn-headless.cjs: argv
// `<bin> -p --output-format json` with <bin> from NUBOS_PILOT_CLAUDE_BIN
// (default claude), spawnSync without a shell, the prompt on stdin, stdout
// captured, a one-line JSON payload printed, 2 when the child failed.
constexpr char kSpawnHeadless[] = R"JS(
const { spawnSync } = require('child_process');
const fs = require('fs');
const bin = process.env.NUBOS_PILOT_CLAUDE_BIN || 'claude';
const agent = '# np-critic\nReview the plan.';
const prompt = agent + '\n\n---\n\n' + fs.readFileSync(process.argv[2], 'utf8');
const r = spawnSync(bin, ['-p', '--output-format', 'json'], {
  input: prompt, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024,
  timeout: 600000, killSignal: 'SIGKILL',
  env: Object.assign({}, process.env, { NUBOS_PILOT_HEADLESS: '1', NUBOS_PILOT_HOOK_DEPTH: '1' }),
});
if (r.error) {
  const code = r.error.code === 'ENOENT' ? 'spawn-headless-claude-not-found' : 'spawn-headless-failed';
  process.stderr.write(JSON.stringify({ code, message: String(r.error) }) + '\n');
  process.exit(1);
}
process.stdout.write(JSON.stringify({ exit_code: r.status, response: r.stdout, stderr: r.stderr }) + '\n');
process.exit(r.status === 0 ? 0 : 2);
)JS";

// A fake `claude` CLI: keeps its stdin, answers like `claude -p --output-format
// json`, exits `exit_code`.
std::string FakeClaude(const std::string& path, int exit_code) {
  WriteExecutable(path, "#!/bin/sh\ncat > '" + path + ".stdin'\n" +
                            "printf '{\"type\":\"result\",\"is_error\":false,\"result\":\"stand-in "
                            "answer\",\"args\":\"%s\"}\\n' \"$*\"\n" +
                            "echo claude-stderr >&2\nexit " + std::to_string(exit_code) + "\n");
  return path;
}

// A fake docker client for the container tier: records the argv of `run`
// (NUL-separated) and its stdin, answers with JSON from "inside", exits 0.
std::string FakeContainerDocker(const std::string& dir) {
  const std::string base = dir + "/docker";
  WriteExecutable(base,
                  "#!/bin/sh\n"
                  "case \"$1\" in\n"
                  "  run) : > '" +
                      base +
                      ".argv'\n"
                      "       for a in \"$@\"; do printf '%s\\0' \"$a\" >> '" +
                      base +
                      ".argv'; done\n"
                      "       cat > '" +
                      base +
                      ".stdin'\n"
                      "       echo '{\"type\":\"result\",\"result\":\"from-container\"}'\n"
                      "       exit 0;;\n"
                      "  version) echo 99.0-fake;;\n"
                      "esac\n"
                      "exit 0\n");
  return base;
}

// The recipe's world: a project with a stand-in host, a shim directory, the
// real programs in realbin/, node in nodebin/, np-exec in npbin/.
class RecipeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MakeToolsDir(tools(), {"sh", "env", "cat", "true", "echo", "printf", "head", "sed"});
    std::filesystem::create_directories(realbin());
    MakeToolsDir(nodebin(), {"node"});
    std::filesystem::create_directories(npbin());
    ASSERT_EQ(symlink(NpExecBin().c_str(), (npbin() + "/np-exec").c_str()), 0);
  }

  std::string project() const { return lab_.project(); }
  std::string shims() const { return lab_.tmp().Path("shims"); }
  std::string realbin() const { return lab_.tmp().Path("realbin"); }
  std::string nodebin() const { return lab_.tmp().Path("nodebin"); }
  std::string npbin() const { return lab_.tmp().Path("npbin"); }
  std::string tools() const { return lab_.tmp().Path("hosttools"); }

  // Every spawn recorded in the audit log.
  std::vector<nlohmann::json> Audit() const { return ReadJsonLines(lab_.audit_log()); }

  // The isolated environment with PATH = `path`.
  std::vector<std::string> Env(const std::string& path, const std::string& docker_host = "") {
    std::vector<std::string> env = lab_.Env(docker_host);
    SetEnv(env, "PATH", path);
    return env;
  }

  // `np-exec shims install DIR NAMES...`, as the recipe tells the user to.
  void InstallShims(const std::vector<std::string>& names) {
    std::vector<std::string> args = {"shims", "install", shims()};
    args.insert(args.end(), names.begin(), names.end());
    RunResult r = lab_.Run(args, Env(tools()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr(shims()));
  }

  RunResult RunHost(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                    const std::string& stdin_data = "") {
    RunOptions options;
    options.cwd = project();
    options.env = env;
    options.stdin_data = stdin_data;
    options.timeout_ms = 60000;
    return RunProcess(argv, options);
  }

  Lab lab_;
};

// (a) Claude Code through nubos-pilot: NUBOS_PILOT_CLAUDE_BIN names a claude
// shim; the real claude is later on PATH.
TEST_F(RecipeTest, HeadlessClaudeThroughShimRunsOnTheDirectTier) {
  lab_.Config(R"({"isolation": {"tier": "direct"}})");
  InstallShims({"claude"});
  const std::string claude = FakeClaude(realbin() + "/claude", 0);
  lab_.tmp().Write("proj/prompt.md", "Check slice S001.");
  lab_.tmp().Write("proj/spawn-headless.cjs", kSpawnHeadless);
  std::vector<std::string> env = Env(tools() + ":" + realbin());
  SetEnv(env, "NUBOS_PILOT_CLAUDE_BIN", shims() + "/claude");

  RunResult r = RunHost({kNode, "spawn-headless.cjs", "prompt.md"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json payload = ParseJson(r.out);
  ASSERT_TRUE(payload.is_object()) << r.out;
  EXPECT_EQ(payload["exit_code"], 0);
  nlohmann::json response = ParseJson(payload["response"].get<std::string>());
  EXPECT_EQ(response["result"], "stand-in answer");
  EXPECT_EQ(response["args"], "-p --output-format json");
  EXPECT_THAT(payload["stderr"].get<std::string>(), HasSubstr("claude-stderr"));
  EXPECT_THAT(ReadFile(claude + ".stdin"),
              AllOf(StartsWith("# np-critic"), EndsWith("---\n\nCheck slice S001.")));

  std::vector<nlohmann::json> audit = Audit();
  ASSERT_EQ(audit.size(), 1u);
  EXPECT_EQ(audit[0]["decision"], "run");
  EXPECT_EQ(audit[0]["tier"], "direct");
  EXPECT_EQ(audit[0]["effective_from"], "config");
  EXPECT_EQ(audit[0]["program"], "claude");
  EXPECT_EQ(audit[0]["path"], claude);
}

TEST_F(RecipeTest, HeadlessClaudeExitStatusPassesThroughTheShim) {
  InstallShims({"claude"});
  FakeClaude(realbin() + "/claude", 7);
  lab_.tmp().Write("proj/prompt.md", "x");
  lab_.tmp().Write("proj/spawn-headless.cjs", kSpawnHeadless);
  std::vector<std::string> env = Env(tools() + ":" + realbin());
  SetEnv(env, "NUBOS_PILOT_CLAUDE_BIN", shims() + "/claude");

  RunResult r = RunHost({kNode, "spawn-headless.cjs", "prompt.md"}, env);
  EXPECT_EQ(r.exit_code, 2) << r.err;  // spawn-headless: 2 when the child failed.
  EXPECT_EQ(ParseJson(r.out)["exit_code"], 7);
  ASSERT_EQ(Audit().size(), 1u);
  EXPECT_EQ(Audit()[0]["tier"], "direct");
}

TEST_F(RecipeTest, HeadlessClaudeOnTheContainerTierGoesThroughTheRuntime) {
  lab_.Config(R"({"isolation": {"tier": "container"}})");
  InstallShims({"claude"});
  const std::string claude = FakeClaude(realbin() + "/claude", 0);
  const std::string docker = FakeContainerDocker(lab_.fakes());
  FakeEngine engine(lab_.tmp().Path("engine.sock"));
  lab_.tmp().Write("proj/prompt.md", "Check slice S002.");
  lab_.tmp().Write("proj/spawn-headless.cjs", kSpawnHeadless);
  std::vector<std::string> env =
      Env(lab_.fakes() + ":" + tools() + ":" + realbin(), engine.docker_host());
  SetEnv(env, "NUBOS_PILOT_CLAUDE_BIN", shims() + "/claude");

  RunResult r = RunHost({kNode, "spawn-headless.cjs", "prompt.md"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json payload = ParseJson(r.out);
  ASSERT_TRUE(payload.is_object()) << r.out;
  EXPECT_EQ(ParseJson(payload["response"].get<std::string>())["result"], "from-container");
  EXPECT_FALSE(FileExists(claude + ".stdin")) << "the host's claude ran outside the container";
  EXPECT_THAT(ReadFile(docker + ".stdin"), EndsWith("Check slice S002."));

  std::vector<std::string> argv = ReadNulSeparated(docker + ".argv");
  ASSERT_FALSE(argv.empty());
  EXPECT_EQ(argv[0], "run");
  EXPECT_THAT(argv, Contains("--cap-drop"));
  EXPECT_THAT(argv, Contains("no-new-privileges"));
  // The image, np-exec's mount check (core/mount_pins.h), then the program.
  const auto image = std::find(argv.begin(), argv.end(), "node:22-bookworm-slim");
  ASSERT_LT(image + 2, argv.end());
  EXPECT_EQ(*(image + 1), "/run/np-exec/np-exec");
  EXPECT_EQ(*(image + 2), "mount-check");
  EXPECT_THAT(std::vector<std::string>(argv.end() - 5, argv.end()),
              ElementsAre("--", "claude", "-p", "--output-format", "json"));

  std::vector<nlohmann::json> audit = Audit();
  ASSERT_FALSE(audit.empty());
  EXPECT_EQ(audit[0]["decision"], "run");
  EXPECT_EQ(audit[0]["tier"], "container");
  EXPECT_EQ(audit[0]["runtime"], "docker");
  EXPECT_EQ(audit[0]["program"], "claude");
}

// (b) nubos-pilot workflows: `np-exec .nubos-pilot/bin/np-tools.cjs ...` in
// place of `node ...`.
constexpr char kNpTools[] = R"JS(#!/usr/bin/env node
console.log(JSON.stringify({ argv: process.argv.slice(2), depth: process.env.NP_EXEC_DEPTH || null }));
if (process.argv[2] === 'fail') process.exitCode = 4;
)JS";

TEST_F(RecipeTest, WorkflowRunsNpToolsThroughNpExecInPlaceOfNode) {
  lab_.Config(R"({"isolation": {"tier": "worktree"}})");
  lab_.tmp().Write("proj/.nubos-pilot/bin/np-tools.cjs", kNpTools, 0755);
  // The workflow's bash block, with `node` replaced by `np-exec`.
  lab_.tmp().Write("proj/workflow.sh",
                   "set -e\n"
                   "TIER=$(np-exec .nubos-pilot/bin/np-tools.cjs config-get isolation.tier --raw)\n"
                   "echo \"$TIER\"\n"
                   "np-exec .nubos-pilot/bin/np-tools.cjs fail || echo \"exit $?\"\n");
  std::vector<std::string> env = Env(npbin() + ":" + tools() + ":" + nodebin());

  RunResult r = RunHost({"/bin/sh", "workflow.sh"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  nlohmann::json first = ParseJson(lines[0]);
  EXPECT_EQ(first["argv"], nlohmann::json({"config-get", "isolation.tier", "--raw"}));
  EXPECT_EQ(first["depth"], "1");
  EXPECT_EQ(ParseJson(lines[1])["argv"], nlohmann::json({"fail"}));
  EXPECT_EQ(lines[2], "exit 4");

  std::vector<nlohmann::json> audit = Audit();
  ASSERT_EQ(audit.size(), 2u);
  for (const nlohmann::json& record : audit) {
    EXPECT_EQ(record["tier"], "worktree");
    EXPECT_EQ(record["program"], "node");
    EXPECT_EQ(record["path"], nodebin() + "/node");
  }
}

TEST_F(RecipeTest, NodeOneLinersGoThroughANodeShimOnPath) {
  InstallShims({"node"});
  // A workflow's inline JSON parse, exactly as workflows write it.
  lab_.tmp().Write("proj/workflow.sh",
                   "INIT='{\"phase\":7,\"slices\":[\"S001\",\"S002\"]}'\n"
                   "node -e 'const o = JSON.parse(process.argv[1]); "
                   "console.log(o.phase, o.slices.length)' \"$INIT\"\n"
                   "node -e 'process.exit(5)'; echo \"exit $?\"\n");
  std::vector<std::string> env = Env(shims() + ":" + tools() + ":" + nodebin());

  RunResult r = RunHost({"/bin/sh", "workflow.sh"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "7 2\nexit 5\n");
  std::vector<nlohmann::json> audit = Audit();
  ASSERT_EQ(audit.size(), 2u);
  for (const nlohmann::json& record : audit) {
    EXPECT_EQ(record["decision"], "run");
    EXPECT_EQ(record["tier"], "direct");
    EXPECT_EQ(record["program"], "node");
    // The real node, never the shim itself.
    EXPECT_EQ(record["path"], nodebin() + "/node");
  }
}

// (c) Codex and Gemini CLIs found through a PATH shim directory.
TEST_F(RecipeTest, CodexAndGeminiAreFoundThroughTheShimDirectory) {
  InstallShims({"codex", "gemini"});
  WriteExecutable(realbin() + "/codex", "#!/bin/sh\necho \"codex-stand-in $*\"\n");
  WriteExecutable(realbin() + "/gemini", "#!/bin/sh\necho \"gemini-stand-in $*\"\nexit 3\n");
  lab_.tmp().Write("proj/host.sh",
                   "codex exec --json 'fix the failing test'\n"
                   "gemini -p 'summarise' ; echo \"gemini exit $?\"\n");
  std::vector<std::string> env = Env(shims() + ":" + tools() + ":" + realbin());

  RunResult r = RunHost({"/bin/sh", "host.sh"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "codex-stand-in exec --json fix the failing test\n"
            "gemini-stand-in -p summarise\n"
            "gemini exit 3\n");
  std::vector<nlohmann::json> audit = Audit();
  ASSERT_EQ(audit.size(), 2u);
  EXPECT_EQ(audit[0]["program"], "codex");
  EXPECT_EQ(audit[0]["path"], realbin() + "/codex");
  EXPECT_EQ(audit[1]["program"], "gemini");
  EXPECT_EQ(audit[1]["path"], realbin() + "/gemini");
}

// (d) execute-phase Step 0a, with `np-exec status --json` in place of
// `node .nubos-pilot/bin/np-tools.cjs isolation status --json`.
constexpr char kStep0a[] =
    "ISOLATION=$(np-exec status --json)\n"
    "if [ $? -ne 0 ]; then\n"
    "  echo \"[np:execute-phase] the configured isolation tier is unavailable \xE2\x80\x94 "
    "refusing to execute.\" >&2\n"
    "  echo \"$ISOLATION\" >&2\n"
    "  exit 1\n"
    "fi\n"
    "echo \"executor spawns may start\"\n";

constexpr char kRefusal[] =
    "[np:execute-phase] the configured isolation tier is unavailable \xE2\x80\x94 refusing to "
    "execute.";

TEST_F(RecipeTest, StepZeroAProceedsOnDirect) {
  lab_.Config(R"({"isolation": {"tier": "direct"}})");
  lab_.tmp().Write("proj/step0a.sh", kStep0a);
  RunResult r = RunHost({"/bin/sh", "step0a.sh"}, Env(npbin() + ":" + tools()));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "executor spawns may start\n");
  EXPECT_THAT(r.err, Not(HasSubstr("refusing")));
}

TEST_F(RecipeTest, StepZeroARefusesOnAContainerTierWithoutARuntime) {
  lab_.Config(R"({"isolation": {"tier": "container"}})");
  lab_.tmp().Write("proj/step0a.sh", kStep0a);
  RunResult r = RunHost({"/bin/sh", "step0a.sh"}, Env(npbin() + ":" + tools()));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.out, IsEmpty());
  EXPECT_THAT(r.err, HasSubstr(kRefusal));
  // The JSON follows the line, as in the workflow.
  const std::string json = r.err.substr(r.err.find(kRefusal) + sizeof(kRefusal));
  nlohmann::json status = ParseJson(json);
  ASSERT_TRUE(status.is_object()) << json;
  EXPECT_EQ(status["tier"], "container");
  EXPECT_EQ(status["runtime"]["available"], false);
  EXPECT_EQ(status["runtime"]["reason"], "runtime-not-installed");
}

TEST_F(RecipeTest, StepZeroAProceedsOnAContainerTierWithAUsableRuntime) {
  lab_.Config(R"({"isolation": {"tier": "container"}})");
  lab_.FakeDocker();
  FakeEngine engine(lab_.tmp().Path("engine.sock"));
  lab_.tmp().Write("proj/step0a.sh", kStep0a);
  RunResult r = RunHost({"/bin/sh", "step0a.sh"},
                        Env(npbin() + ":" + lab_.fakes() + ":" + tools(), engine.docker_host()));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "executor spawns may start\n");
}

TEST_F(RecipeTest, StepZeroAGateCannotBeLoweredByTheProjectBelowTheOperatorFloor) {
  // The operator asked for containers; a project file saying direct does not
  // get the run through.
  lab_.Config(R"({"isolation": {"tier": "direct"}})");
  lab_.tmp().Write("proj/step0a.sh", kStep0a);
  std::vector<std::string> env = Env(npbin() + ":" + tools());
  SetEnv(env, "NP_EXEC_TIER", "container");
  RunResult r = RunHost({"/bin/sh", "step0a.sh"}, env);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr(kRefusal));
}

}  // namespace
}  // namespace np::testing
