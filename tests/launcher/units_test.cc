// Unit tests of launcher pieces that were tested only through the binary:
// the command line parser, the exit-status table, the environment recipe,
// the audit record schema, the engine API client (against the in-process
// fake engine) and the generic supervisor with a companion.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "core/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "launcher/audit_log.h"
#include "launcher/cli.h"
#include "launcher/environment.h"
#include "launcher/host.h"
#include "launcher/outcome.h"
#include "launcher/output.h"
#include "launcher/runtime/engine_api.h"
#include "launcher/runtime/podman_service.h"
#include "launcher/runtime/reaper.h"
#include "launcher/subprocess.h"
#include "launcher/supervise.h"
#include "tests/launcher/fakes.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace np {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

absl::StatusOr<CommandLine> Parse(std::vector<std::string> args) {
  static std::vector<std::string> storage;
  storage = std::move(args);
  static std::vector<char*> pointers;
  pointers.clear();
  for (std::string& arg : storage) pointers.push_back(arg.data());
  return ParseCommandLine(absl::MakeConstSpan(pointers));
}

// A name matches only the whole name before '='; a set but empty value still
// points into its entry (data() not null), an unset one does not.
TEST(GetEnvTest, WholeNamesOnlyAndSetEmptyIsSet) {
  std::vector<std::string> entries = {"PAT=short", "PATHS=longer", "PATH=/usr/bin",
                                      "EMPTY=",    "NOEQUALS",     "=odd"};
  std::vector<char*> envp;
  for (std::string& entry : entries) envp.push_back(entry.data());
  envp.push_back(nullptr);
  EXPECT_EQ(GetEnv(envp.data(), "PATH"), "/usr/bin");
  EXPECT_EQ(GetEnv(envp.data(), "PAT"), "short");
  EXPECT_EQ(GetEnv(envp.data(), "PATHS"), "longer");
  EXPECT_EQ(GetEnv(envp.data(), "EMPTY"), "");
  EXPECT_NE(GetEnv(envp.data(), "EMPTY").data(), nullptr);
  EXPECT_EQ(GetEnv(envp.data(), "PA").data(), nullptr);
  EXPECT_EQ(GetEnv(envp.data(), "NOEQUALS").data(), nullptr);
  EXPECT_EQ(GetEnv(envp.data(), "NOEQUALSX").data(), nullptr);
  EXPECT_EQ(GetEnv(envp.data(), "HOME").data(), nullptr);
  EXPECT_EQ(GetEnv(nullptr, "PATH").data(), nullptr);
  // The empty name is the entry that starts with '=', however it is spelled;
  // a name with a NUL byte names no entry.
  EXPECT_EQ(GetEnv(envp.data(), ""), "odd");
  EXPECT_EQ(GetEnv(envp.data(), absl::string_view()), "odd");
  EXPECT_EQ(GetEnv(envp.data(), absl::string_view("PAT\0HS", 6)).data(), nullptr);
}

TEST(ParseCommandLineTest, RunPathForms) {
  absl::StatusOr<CommandLine> cl = Parse({"np-exec", "--env", "A,B", "--", "node", "-e", "x"});
  ASSERT_TRUE(cl.ok()) << cl.status();
  EXPECT_EQ(cl->verb, Verb::kRun);
  EXPECT_TRUE(cl->explicit_program);
  EXPECT_THAT(cl->env_names, ElementsAre("A", "B"));
  EXPECT_THAT(cl->program, ElementsAre("node", "-e", "x"));

  cl = Parse({"np-exec", "tool.cjs", "--flag"});
  ASSERT_TRUE(cl.ok());
  EXPECT_TRUE(cl->script_mode);
  EXPECT_THAT(cl->program, ElementsAre("node", "tool.cjs", "--flag"));

  // Shim mode: every argument is the program's, options included.
  cl = Parse({"/shims/claude", "--env", "X", "-p"});
  ASSERT_TRUE(cl.ok());
  EXPECT_TRUE(cl->shim_mode);
  EXPECT_THAT(cl->program, ElementsAre("claude", "--env", "X", "-p"));
}

TEST(ParseCommandLineTest, VerbsAndTheirOptions) {
  absl::StatusOr<CommandLine> cl = Parse({"np-exec", "doctor", "--json", "--deep"});
  ASSERT_TRUE(cl.ok());
  EXPECT_EQ(cl->verb, Verb::kDoctor);
  EXPECT_TRUE(cl->json);
  EXPECT_TRUE(cl->deep);

  cl = Parse({"np-exec", "wrap", "--workdir", "/work", "--env", "K", "--", "node"});
  ASSERT_TRUE(cl.ok());
  EXPECT_EQ(cl->verb, Verb::kWrap);
  EXPECT_EQ(cl->workdir, "/work");
  EXPECT_THAT(cl->env_names, ElementsAre("K"));

  cl = Parse({"np-exec", "describe", "container", "--runtime", "bwrap"});
  ASSERT_TRUE(cl.ok());
  EXPECT_EQ(cl->tier, "container");
  EXPECT_EQ(cl->runtime, "bwrap");

  cl = Parse({"np-exec", "sandbox-exec", "--env", "A", "--", "/usr/bin/bwrap", "--x"});
  ASSERT_TRUE(cl.ok());
  EXPECT_EQ(cl->verb, Verb::kSandboxExec);
  EXPECT_THAT(cl->program, ElementsAre("/usr/bin/bwrap", "--x"));

  cl = Parse({"np-exec", "status", "--help"});
  ASSERT_TRUE(cl.ok());
  EXPECT_EQ(cl->verb, Verb::kHelp);
  EXPECT_EQ(cl->help_topic, "status");
}

TEST(ParseCommandLineTest, ErrorsAreCoded) {
  struct Case {
    std::vector<std::string> args;
    std::string code;
  };
  for (const Case& c : std::vector<Case>{
           {{"np-exec"}, "usage"},
           {{"np-exec", "--bogus", "x"}, "usage"},
           {{"np-exec", "--env", "A=b", "--", "x"}, "isolation-bad-env-name"},
           {{"np-exec", "status", "extra"}, "usage"},
           {{"np-exec", "describe"}, "isolation-missing-tier"},
           {{"np-exec", "wrap", "--workdir"}, "isolation-wrap-no-command"},
           {{"np-exec", "wrap", "--"}, "isolation-wrap-no-command"},
           {{"np-exec", "sandbox-exec", "--bogus"}, "usage"},
           {{"np-exec", "sandbox-exec", "--env"}, "usage"},
           {{"np-exec", "egress-entry", "--port", "0", "--socket", "/s", "--", "x"}, "usage"},
           {{"np-exec", "egress-entry", "--socket", "/s", "--", "x"}, "usage"},
           {{"np-exec", "wrap", "--bogus", "--", "x"}, "usage"},
           {{"np-exec", "wrap", "--env", "1X", "--", "x"}, "isolation-bad-env-name"},
           {{"np-exec", "--env"}, "usage"},
           {{"np-exec", "--env", "A"}, "usage"},
           {{"np-exec", "shims"}, "usage"},
           {{"np-exec", "shims", "install"}, "usage"},
           {{"np-exec", "shims", "list", "/a", "/b"}, "usage"},
           {{"np-exec", "shims", "remove", "/a"}, "usage"},
           {{"np-exec", "shims", "list", "--preload"}, "usage"},
           {{"np-exec", "shims", "prune", "/a"}, "usage"},
           {{"np-exec", "which"}, "usage"},
           {{"np-exec", "which", "a", "b"}, "usage"},
           {{"np-exec", "which", "--deep", "a"}, "usage"},
       }) {
    absl::StatusOr<CommandLine> cl = Parse(c.args);
    ASSERT_FALSE(cl.ok()) << ::testing::PrintToString(c.args);
    EXPECT_EQ(ErrorCode(cl.status()), c.code) << ::testing::PrintToString(c.args);
  }
}

// The loop the run path, wrap, sandbox-exec and egress-entry share: options
// up to "--" (or, on the run path, the first word), the program's own
// arguments untouched after it, both option spellings.
TEST(ParseCommandLineTest, ProgramVerbsShareOneOptionSyntax) {
  absl::StatusOr<CommandLine> cl =
      Parse({"np-exec", "--env=A", "--env", "B", "node", "--env", "C", "--"});
  ASSERT_TRUE(cl.ok()) << cl.status();
  EXPECT_FALSE(cl->explicit_program);
  EXPECT_THAT(cl->env_names, ElementsAre("A", "B"));
  EXPECT_THAT(cl->program, ElementsAre("node", "--env", "C", "--"));

  cl = Parse({"np-exec", "wrap", "--json", "--workdir=/w", "--", "node", "--json"});
  ASSERT_TRUE(cl.ok()) << cl.status();
  EXPECT_TRUE(cl->json);
  EXPECT_EQ(cl->workdir, "/w");
  EXPECT_THAT(cl->program, ElementsAre("node", "--json"));

  cl = Parse({"np-exec", "sandbox-exec", "--runtime", "bwrap", "--project=/p", "--env", "A,B", "--",
              "/usr/bin/bwrap", "--env", "X"});
  ASSERT_TRUE(cl.ok()) << cl.status();
  EXPECT_EQ(cl->runtime, "bwrap");
  EXPECT_EQ(cl->sandbox_project, "/p");
  EXPECT_THAT(cl->env_names, ElementsAre("A", "B"));
  EXPECT_THAT(cl->program, ElementsAre("/usr/bin/bwrap", "--env", "X"));

  cl = Parse({"np-exec", "egress-entry", "--port=3128", "--socket", "/s", "--", "node", "-p"});
  ASSERT_TRUE(cl.ok()) << cl.status();
  EXPECT_EQ(cl->verb, Verb::kEgressEntry);
  EXPECT_EQ(cl->egress_port, 3128);
  EXPECT_EQ(cl->egress_socket, "/s");
  EXPECT_THAT(cl->program, ElementsAre("node", "-p"));
}

TEST(ParseCommandLineTest, ShimsAndWhich) {
  absl::StatusOr<CommandLine> cl = Parse({"np-exec", "shims", "install", "/d", "--preload"});
  ASSERT_TRUE(cl.ok()) << cl.status();
  EXPECT_EQ(cl->shims_action, "install");
  EXPECT_EQ(cl->shims_dir, "/d");
  EXPECT_THAT(cl->shim_names, ElementsAre("node"));
  EXPECT_TRUE(cl->preload);

  cl = Parse({"np-exec", "shims", "list"});
  ASSERT_TRUE(cl.ok()) << cl.status();
  EXPECT_EQ(cl->shims_action, "list");
  EXPECT_EQ(cl->shims_dir, "");

  cl = Parse({"np-exec", "shims", "list", "/d", "--json"});
  ASSERT_TRUE(cl.ok()) << cl.status();
  EXPECT_EQ(cl->shims_dir, "/d");
  EXPECT_TRUE(cl->json);

  cl = Parse({"np-exec", "shims", "remove", "/d", "claude", "gemini"});
  ASSERT_TRUE(cl.ok()) << cl.status();
  EXPECT_EQ(cl->shims_action, "remove");
  EXPECT_THAT(cl->shim_names, ElementsAre("claude", "gemini"));

  cl = Parse({"np-exec", "which", "claude", "--json"});
  ASSERT_TRUE(cl.ok()) << cl.status();
  EXPECT_EQ(cl->verb, Verb::kWhich);
  EXPECT_EQ(cl->which_name, "claude");
  EXPECT_TRUE(cl->json);
}

// --json asks for JSON errors only among a verb's own arguments.
TEST(ParseCommandLineTest, AsksForJsonOnlyForAVerbsOwnArguments) {
  auto asks = [](std::vector<std::string> args) {
    std::vector<char*> pointers;
    for (std::string& arg : args) pointers.push_back(arg.data());
    return AsksForJson(absl::MakeConstSpan(pointers));
  };
  EXPECT_TRUE(asks({"np-exec", "status", "--json", "--bogus"}));
  EXPECT_TRUE(asks({"np-exec", "wrap", "--json", "--bogus", "--", "x"}));
  EXPECT_FALSE(asks({"np-exec", "wrap", "--bogus", "--", "x", "--json"}));
  EXPECT_FALSE(asks({"np-exec", "status", "--bogus"}));
  EXPECT_FALSE(asks({"np-exec", "--", "tool", "--json"}));
  EXPECT_FALSE(asks({"np-exec", "tool", "--json"}));
  EXPECT_FALSE(asks({"/shims/claude", "status", "--json"}));
}

TEST(FormatErrorTest, TextByDefaultTheEnvelopeWhenAsked) {
  const absl::Status error = MakeError(absl::StatusCode::kNotFound, "program-not-found",
                                       "program \"x\" not found", {{"program", "x"}});
  EXPECT_EQ(FormatError(error, ErrorFormat::kText),
            "np-exec: error: program \"x\" not found (program-not-found)\n");
  const std::string json = FormatError(error, ErrorFormat::kJson);
  ASSERT_EQ(json.back(), '\n');
  EXPECT_EQ(std::count(json.begin(), json.end(), '\n'), 1);
  const nlohmann::json envelope = nlohmann::json::parse(json);
  // The reference's envelope, exactly: these three keys and no others.
  EXPECT_EQ(envelope, nlohmann::json({{"code", "program-not-found"},
                                      {"message", "program \"x\" not found"},
                                      {"details", {{"program", "x"}}}}));
  // An error without details carries null, as the reference's does.
  EXPECT_EQ(
      nlohmann::json::parse(FormatError(MakeError(absl::StatusCode::kInvalidArgument, "usage", "u"),
                                        ErrorFormat::kJson))["details"],
      nullptr);
}

// A hostile path in a message cannot start a line of its own, or send a
// terminal escape, in the text form.
TEST(FormatErrorTest, TextEscapesControlCharacters) {
  const absl::Status error = MakeError(absl::StatusCode::kNotFound, "program-not-found",
                                       "no /tmp/a\nnp-exec: error: forged (ok)\r\x1b[2J\t\x7f end");
  const std::string text = FormatError(error, ErrorFormat::kText);
  EXPECT_EQ(text,
            "np-exec: error: no /tmp/a\\nnp-exec: error: forged (ok)\\x0d\\x1b[2J\\x09\\x7f end "
            "(program-not-found)\n");
  // UTF-8 passes as it is.
  EXPECT_EQ(
      FormatError(MakeError(absl::StatusCode::kNotFound, "c", "caf\xC3\xA9"), ErrorFormat::kText),
      "np-exec: error: caf\xC3\xA9 (c)\n");
}

TEST(ExitStatusTest, OneTableForTheRunPathVerbsExitOne) {
  auto error = [](const char* code) {
    return MakeError(absl::StatusCode::kFailedPrecondition, code, "x");
  };
  EXPECT_EQ(ExitStatusFor(error("program-not-found"), CommandKind::kRun), 127);
  EXPECT_EQ(ExitStatusFor(error("shim-no-program"), CommandKind::kRun), 127);
  EXPECT_EQ(ExitStatusFor(error("program-not-executable"), CommandKind::kRun), 126);
  EXPECT_EQ(ExitStatusFor(error("isolation-container-unavailable"), CommandKind::kRun), 69);
  EXPECT_EQ(ExitStatusFor(error("isolation-probe-required"), CommandKind::kRun), 69);
  EXPECT_EQ(ExitStatusFor(error("isolation-unknown-verb"), CommandKind::kRun), 1);
  EXPECT_EQ(ExitStatusFor(error("config-invalid-json"), CommandKind::kRun), 125);
  EXPECT_EQ(ExitStatusFor(absl::InternalError("uncoded"), CommandKind::kRun), 125);
  for (const char* code : {"program-not-found", "isolation-container-unavailable", "usage"}) {
    EXPECT_EQ(ExitStatusFor(error(code), CommandKind::kVerb), 1) << code;
  }
  EXPECT_EQ(ExitStatusFor(absl::OkStatus(), CommandKind::kRun), 0);
}

// An environment array over strings the test owns.
struct Env {
  explicit Env(std::vector<std::string> vars) : storage(std::move(vars)) {
    for (std::string& var : storage) pointers.push_back(var.data());
    pointers.push_back(nullptr);
  }
  std::vector<std::string> storage;
  std::vector<char*> pointers;
};

TEST(EnvironmentTest, EditEnvironmentSetsReplacesAndUnsets) {
  Env env({"PATH=/bin", "LD_PRELOAD=/x.so", "KEEP=1", "NP_EXEC_DEPTH=3"});
  EXPECT_THAT(EditEnvironment(env.pointers.data(), {"NP_EXEC_DEPTH=4", "NEW=v"}, {"LD_PRELOAD"}),
              ElementsAre("PATH=/bin", "KEEP=1", "NP_EXEC_DEPTH=4", "NEW=v"));
}

TEST(EnvironmentTest, SandboxRecipeTakesOnlyWhatItNames) {
  Env env({"PATH=/host", "HOME=/root", "TERM=xterm", "API_KEY=k", "SECRET_TOKEN=s",
           "LD_PRELOAD=/x.so"});
  const std::vector<std::string> built = BuildEnvironment(
      SandboxEnvPlan({"API_KEY", "LD_PRELOAD", "UNSET_NAME"}), env.pointers.data());
  EXPECT_THAT(built, UnorderedElementsAre("PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/np-exec",
                                          "TERM=xterm", "API_KEY=k"));
}

TEST(EnvironmentTest, InheritingRecipeKeepsTheCallersMinusUnset) {
  Env env({"A=1", "LD_PRELOAD=/x.so"});
  EnvPlan plan;
  plan.inherit = true;
  plan.unset = kInterposerVars;
  plan.set = {"B=2"};
  EXPECT_THAT(BuildEnvironment(plan, env.pointers.data()), ElementsAre("A=1", "B=2"));
}

// One spawn's lines go to the log of the `.nubos-pilot` directory it judged,
// opened once: renamed and replaced meanwhile, the exit line still lands
// beside the run line, never in the replacement; a log that is a link is
// never written.
TEST(ProjectAuditLogTest, OneSpawnsLinesGoToTheDirectoryItJudged) {
  np::testing::TempDir tmp;
  const std::string project = tmp.MakeDir("proj");
  tmp.MakeDir("proj/.nubos-pilot");
  absl::StatusOr<ProjectLocation> located = LocateProjectFrom(project);
  ASSERT_TRUE(located.ok()) << located.status();
  const int state = open((project + "/.nubos-pilot").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(state, 0);
  ProjectAuditLog log(*located, std::make_shared<const OpenFd>(state));
  ASSERT_TRUE(log.Append({{"event", "run"}}).ok());
  ASSERT_EQ(rename((project + "/.nubos-pilot").c_str(), (project + "/.moved").c_str()), 0);
  tmp.MakeDir("proj/.nubos-pilot/audit");
  ASSERT_TRUE(log.Append({{"event", "exit"}}).ok());
  const std::string lines = np::testing::ReadFile(project + "/.moved/audit/np-exec.jsonl");
  EXPECT_NE(lines.find("\"run\""), std::string::npos) << lines;
  EXPECT_NE(lines.find("\"exit\""), std::string::npos) << lines;
  EXPECT_FALSE(np::testing::FileExists(project + "/.nubos-pilot/audit/np-exec.jsonl"));

  const std::string linked = tmp.MakeDir("linked");
  tmp.MakeDir("linked/.nubos-pilot/audit");
  tmp.Write("elsewhere.jsonl", "");
  ASSERT_EQ(symlink(tmp.Path("elsewhere.jsonl").c_str(),
                    (linked + "/.nubos-pilot/audit/np-exec.jsonl").c_str()),
            0);
  absl::StatusOr<ProjectLocation> other = LocateProjectFrom(linked);
  ASSERT_TRUE(other.ok()) << other.status();
  ProjectAuditLog refused(*other, nullptr);
  EXPECT_EQ(ErrorCode(refused.Append({{"event", "run"}})), "audit-log-unwritable");
  EXPECT_EQ(np::testing::ReadFile(tmp.Path("elsewhere.jsonl")), "");
}

TEST(AuditSchemaTest, RunExitAndRefusalRecords) {
  HostFacts host;
  host.pid = 42;
  host.cwd = "/p/src";
  Settings settings;
  settings.project_root = "/p";
  settings.resolved = {Tier::kContainer, TierSource::kConfig};
  settings.config.container.runtime = Runtime::kDocker;
  SpawnPlan plan;
  plan.wrapped = true;
  plan.project_real = "/p";
  plan.project_mount = "/work";
  plan.container_name = "np-exec-42-x";
  plan.env_names = {"API_KEY"};
  plan.mounts = {{"/data", "/data", false}};
  const std::vector<std::string> program = {"node", "secret-arg"};

  nlohmann::json run = RunRecord(host, settings, plan, program);
  EXPECT_EQ(run["decision"], "run");
  EXPECT_EQ(run["tier"], "container");
  EXPECT_EQ(run["effective_from"], "config");
  EXPECT_EQ(run["runtime"], "docker");
  EXPECT_EQ(run["image"], "node:22-bookworm-slim");
  EXPECT_EQ(run["pid"], 42);
  EXPECT_EQ(run["program"], "node");
  EXPECT_EQ(run["container"], "np-exec-42-x");
  EXPECT_EQ(run["env"], nlohmann::json({"API_KEY"}));
  EXPECT_EQ(run["mounts"][0]["source"], "/p");
  EXPECT_EQ(run["mounts"][0]["target"], "/work");
  EXPECT_EQ(run["mounts"][1]["mode"], "ro");
  EXPECT_EQ(run["argv_digest"], ArgvDigest(program));
  // Arguments themselves are never stored.
  EXPECT_EQ(run.dump().find("secret-arg"), std::string::npos);

  nlohmann::json exit = ExitRecord(run, 7, 12);
  EXPECT_FALSE(exit.contains("decision"));
  EXPECT_EQ(exit["event"], "exit");
  EXPECT_EQ(exit["exit_status"], 7);
  EXPECT_EQ(exit["duration_ms"], 12);

  nlohmann::json refused = RefusalRecord(SpawnRecord(host, program),
                                         MakeError(absl::StatusCode::kNotFound, "x-code", "m"));
  EXPECT_EQ(refused["decision"], "refused");
  EXPECT_EQ(refused["code"], "x-code");
  EXPECT_FALSE(refused.contains("tier"));
}

// np-exec's own podman service outlives the spawn: it gets what chooses
// podman's configuration and storage, never the caller's other values.
TEST(PodmanServiceTest, TheServiceGetsOnlyPodmansOwnVariables) {
  testing::TempDir tmp;
  const std::string project = tmp.MakeDir("project");
  ASSERT_EQ(mkdir((project + "/.nubos-pilot").c_str(), 0755), 0);
  const std::string planted = tmp.MakeDir("project/bin");
  std::vector<std::string> caller = {
      "PATH=" + planted + ":/usr/bin",           "HOME=/home/a",
      "CONTAINERS_CONF=/etc/np/containers.conf", "CONTAINERS_STORAGE_CONF=/etc/np/storage.conf",
      "XDG_RUNTIME_DIR=/run/user/1000",          "ANTHROPIC_API_KEY=sk-secret",
      "CONTAINER_HOST=unix:///elsewhere.sock",   "LD_PRELOAD=/tmp/x.so"};
  std::vector<char*> envp;
  for (std::string& entry : caller) envp.push_back(entry.data());
  envp.push_back(nullptr);
  HostFacts host;
  host.envp = envp.data();
  host.cwd = project;
  // A PATH folder in the project (where a sandbox writes) is not the service's.
  EXPECT_THAT(
      PodmanServiceEnvironment(host),
      ::testing::ElementsAre("PATH=/usr/bin", "HOME=/home/a", "XDG_RUNTIME_DIR=/run/user/1000",
                             "CONTAINERS_CONF=/etc/np/containers.conf",
                             "CONTAINERS_STORAGE_CONF=/etc/np/storage.conf"));
}

TEST(EngineApiTest, TalksToTheFakeEngine) {
  testing::TempDir tmp;
  testing::FakeEngine engine(tmp.Path("engine.sock"));
  absl::StatusOr<HttpResponse> version = EngineRequest(engine.socket_path(), "GET", "/version");
  ASSERT_TRUE(version.ok()) << version.status();
  EXPECT_EQ(version->status, 200);
  EXPECT_EQ(nlohmann::json::parse(version->body)["Version"], "99.0-fake");
  engine.set_image_present(false);
  absl::StatusOr<HttpResponse> image =
      EngineRequest(engine.socket_path(), "GET", "/images/" + UrlEncode("a b:1") + "/json");
  ASSERT_TRUE(image.ok());
  EXPECT_EQ(image->status, 404);
  EXPECT_THAT(engine.requests(), ElementsAre("GET /version", "GET /images/a%20b:1/json"));
}

TEST(EngineApiTest, UnreachableReasonsAreCoded) {
  testing::TempDir tmp;
  absl::StatusOr<HttpResponse> missing = EngineRequest(tmp.Path("none.sock"), "GET", "/_ping");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(ErrorCode(missing.status()), "engine-unreachable");
  EXPECT_EQ(ErrorDetails(missing.status())["reason"], "socket-missing");
  testing::MakeRefusingSocket(tmp.Path("refusing.sock"));
  absl::StatusOr<HttpResponse> refused = EngineRequest(tmp.Path("refusing.sock"), "GET", "/_ping");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(ErrorDetails(refused.status())["reason"], "connection-refused");
  testing::SilentSocket silent(tmp.Path("silent.sock"));
  // An injected timeout: the test does not wait on the real two seconds.
  absl::StatusOr<HttpResponse> timed_out =
      EngineRequest(tmp.Path("silent.sock"), "GET", "/_ping", /*timeout_ms=*/100);
  ASSERT_FALSE(timed_out.ok());
  EXPECT_EQ(ErrorDetails(timed_out.status())["reason"], "timed-out");
}

// An image's copy-out keeps up to its own cap, and says when there was more
// (the rest is read and dropped: the command still exits by itself).
TEST(RunAndCaptureTest, KeepsAtMostMaxOutAndSaysSo) {
  char* envp[] = {nullptr};
  absl::StatusOr<CaptureResult> big =
      RunAndCapture({"/bin/sh", "-c", "head -c 300000 /dev/zero"}, envp, 10000, 200000);
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_EQ(big->exit_code, 0);
  EXPECT_EQ(big->out.size(), 200000u);
  EXPECT_TRUE(big->truncated);
  absl::StatusOr<CaptureResult> fits =
      RunAndCapture({"/bin/sh", "-c", "head -c 70000 /dev/zero"}, envp, 10000, 70000);
  ASSERT_TRUE(fits.ok());
  EXPECT_EQ(fits->out.size(), 70000u);
  EXPECT_FALSE(fits->truncated);
  // The default cap.
  absl::StatusOr<CaptureResult> small =
      RunAndCapture({"/bin/sh", "-c", "head -c 70000 /dev/zero"}, envp, 10000);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->out.size(), kDefaultCaptureBytes);
  EXPECT_TRUE(small->truncated);
}

TEST(SuperviseTest, CompanionLivesExactlyAsLongAsTheChild) {
  testing::TempDir tmp;
  const std::string marker = tmp.Path("companion");
  std::vector<std::string> events;
  SuperviseRequest request;
  request.bin = "/bin/sh";
  request.argv = {"sh", "-c", "test -f " + marker + " && exit 7"};
  Companion companion;
  companion.start = [&] {
    std::ofstream(marker) << "up";
    events.push_back("start");
    return absl::OkStatus();
  };
  companion.stop = [&] {
    events.push_back("stop");
    unlink(marker.c_str());
  };
  request.companions = {companion};
  SuperviseResult result = Supervise(request);
  EXPECT_EQ(result.start_errno, 0);
  EXPECT_EQ(result.exit_code, 7);  // The child saw the companion running.
  EXPECT_THAT(events, ElementsAre("start", "stop"));
  EXPECT_NE(access(marker.c_str(), F_OK), 0);
}

TEST(SuperviseTest, ACompanionThatCannotStartRunsNothing) {
  testing::TempDir tmp;
  const std::string ran = tmp.Path("ran");
  SuperviseRequest request;
  request.bin = "/bin/sh";
  request.argv = {"sh", "-c", "touch " + ran};
  int stopped = 0;
  Companion up{[] { return absl::OkStatus(); }, [&] { ++stopped; }};
  Companion down{[] { return absl::UnavailableError("no"); }, [&] { stopped += 100; }};
  request.companions = {up, down};
  SuperviseResult result = Supervise(request);
  EXPECT_NE(result.start_errno, 0);
  EXPECT_EQ(stopped, 1);  // The one that started is stopped; the failed one never ran.
  EXPECT_NE(access(ran.c_str(), F_OK), 0);
}

TEST(SuperviseTest, GraceIsInjectedAndCleanupRunsAfterIt) {
  SuperviseRequest request;
  request.bin = "/bin/sh";
  // Ignores TERM: only the grace period's end (then SIGKILL) stops it.
  // (exec: no orphaned sleep keeps the test's output open for 30 s.)
  request.argv = {"sh", "-c", "trap '' TERM; kill -TERM $PPID; exec sleep 30"};
  request.grace_ms = 200;
  int cleaned = 0;
  request.cleanup = [&] { ++cleaned; };
  SuperviseResult result = Supervise(request);
  EXPECT_EQ(result.exit_code, 128 + SIGKILL);
  EXPECT_GE(cleaned, 1);
  EXPECT_LT(result.duration_ms, 20000);
}

// A forced removal kills first (podman's removal would otherwise give a
// TERM-ignoring program its stop timeout again) and returns only once the
// engine no longer has the container (its client's --rm may be removing it).
TEST(ReaperTest, ForcedRemovalKillsThenRemovesThenSeesItGone) {
  testing::TempDir tmp;
  testing::FakeEngine engine(tmp.Path("engine.sock"));
  ForceRemoveContainer("/nonexistent/docker", {}, engine.socket_path(), "np-exec-1-abc");
  EXPECT_THAT(engine.requests(), ElementsAre("POST /containers/np-exec-1-abc/kill?signal=KILL",
                                             "DELETE /containers/np-exec-1-abc?force=1&v=1",
                                             "GET /containers/np-exec-1-abc/json"));
}

// A companion's thread never takes the supervising thread's signals. The
// egress proxy's accept thread, started with them unblocked, once took the
// SIGCHLD of a client that ended while its container was being removed
// (SIGCHLD is ignored by default, so it was gone), and np-exec waited for
// that client forever. Here the child ignores TERM and is killed during the
// cleanup, while a companion's thread sits in poll; Supervise runs in a
// forked process so that a hang fails the test instead of blocking it.
TEST(SuperviseTest, ACompanionThreadNeverTakesTheChildsEnd) {
  testing::TempDir tmp;
  const std::string pid_file = tmp.Path("child.pid");
  const pid_t supervisor = fork();
  ASSERT_GE(supervisor, 0);
  if (supervisor == 0) {
    SuperviseRequest request;
    request.bin = "/bin/sh";
    request.argv = {"sh", "-c",
                    "trap '' TERM; echo $$ > " + pid_file + "; kill -TERM $PPID; exec sleep 30"};
    request.grace_ms = 200;
    // The child ends while this thread is busy here, not waiting.
    request.cleanup = [&] {
      std::ifstream in(pid_file);
      pid_t child = 0;
      if (in >> child && child > 0) kill(child, SIGKILL);
      usleep(1000 * 1000);
    };
    std::atomic<bool> stop{false};
    std::thread thread;
    Companion companion;
    companion.start = [&] {
      thread = std::thread([&] {
        while (!stop.load()) poll(nullptr, 0, 20);
      });
      return absl::OkStatus();
    };
    companion.stop = [&] {
      stop.store(true);
      thread.join();
    };
    request.companions = {companion};
    SuperviseResult result = Supervise(request);
    _exit(result.exit_code == 128 + SIGKILL ? 0 : 1);
  }
  const int status = testing::WaitProcess(supervisor, 20000);
  if (status == -1) {
    kill(supervisor, SIGKILL);
    testing::WaitProcess(supervisor, 5000);
  }
  EXPECT_EQ(status, 0) << "-1: Supervise never returned; 1: the child's status was not 137";
}

}  // namespace
}  // namespace np
