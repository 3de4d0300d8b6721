// The verbs of the built np-exec: status, describe, probe, wrap, doctor,
// shims, --help, --version, and their error codes and exit statuses.
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/launcher/fakes.h"

namespace np::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kContainer[] = R"({"isolation":{"tier":"container"}})";

// ---------------------------------------------------------------- status

TEST(StatusVerbTest, DefaultIsDirectFromDefault) {
  Lab lab;
  RunResult r = lab.Run({"status", "--json"}, lab.Env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json out = ParseJson(r.out);
  EXPECT_EQ(out["tier"], "direct");
  EXPECT_EQ(out["effective_from"], "default");
  EXPECT_EQ(out["description"]["isolates_rights"], false);
  EXPECT_TRUE(out.contains("runtime"));
  EXPECT_TRUE(out.contains("advisory"));
  EXPECT_TRUE(out.contains("container"));
  EXPECT_EQ(out["container"]["image"], "node:22-bookworm-slim");
}

TEST(StatusVerbTest, ProjectConfigIsConfig) {
  Lab lab;
  lab.Config(R"({"isolation":{"tier":"worktree"}})");
  RunResult r = lab.Run({"status", "--json"}, lab.Env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ParseJson(r.out)["tier"], "worktree");
  EXPECT_EQ(ParseJson(r.out)["effective_from"], "config");
}

TEST(StatusVerbTest, OperatorFileIsOperator) {
  Lab lab;
  lab.Config(R"({"isolation":{"tier":"direct"}})");
  lab.tmp().Write("scratch/xdg/nubos-pilot/config.json", R"({"isolation":{"tier":"worktree"}})");
  RunResult r = lab.Run({"status", "--json"}, lab.Env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ParseJson(r.out)["tier"], "worktree");
  EXPECT_EQ(ParseJson(r.out)["effective_from"], "operator");
}

TEST(StatusVerbTest, EnvVariableIsEnv) {
  Lab lab;
  std::vector<std::string> env = lab.Env();
  SetEnv(env, "NP_EXEC_TIER", "worktree");
  RunResult r = lab.Run({"status", "--json"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ParseJson(r.out)["tier"], "worktree");
  EXPECT_EQ(ParseJson(r.out)["effective_from"], "env");
}

TEST(StatusVerbTest, WorktreeIsolationRaisesTheFloor) {
  Lab lab;
  lab.Config(R"({"workflow":{"worktree_isolation":true}})");
  RunResult r = lab.Run({"status", "--json"}, lab.Env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ParseJson(r.out)["tier"], "worktree");
  EXPECT_EQ(ParseJson(r.out)["effective_from"], "worktree_isolation");
}

TEST(StatusVerbTest, ProjectCannotLowerTheOperatorFloor) {
  Lab lab;
  lab.Config(R"({"isolation":{"tier":"direct"}})");
  std::vector<std::string> env = lab.Env();
  SetEnv(env, "NP_EXEC_TIER", "container");
  RunResult r = lab.Run({"status", "--json"}, env);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(ParseJson(r.out)["tier"], "container");
  EXPECT_EQ(ErrorCodeOf(r.err), "isolation-container-unavailable");
}

TEST(StatusVerbTest, TextNamesTierAndSource) {
  Lab lab;
  lab.Config(R"({"isolation":{"tier":"worktree"}})");
  RunResult r = lab.Run({"status"}, lab.Env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("effective tier: worktree (from config)"));
  EXPECT_THAT(r.out, HasSubstr("does not protect against"));
}

TEST(StatusVerbTest, TextNamesEverySource) {
  Lab lab;
  EXPECT_THAT(lab.Run({"status"}, lab.Env()).out,
              HasSubstr("effective tier: direct (from default)"));
  std::vector<std::string> env = lab.Env();
  SetEnv(env, "NP_EXEC_TIER", "worktree");
  EXPECT_THAT(lab.Run({"status"}, env).out, HasSubstr("effective tier: worktree (from env)"));
  lab.tmp().Write("scratch/xdg/nubos-pilot/config.json", R"({"isolation":{"tier":"worktree"}})");
  EXPECT_THAT(lab.Run({"status"}, lab.Env()).out,
              HasSubstr("effective tier: worktree (from operator)"));
  lab.tmp().Write("scratch/xdg/nubos-pilot/config.json", "{}");
  lab.Config(R"({"workflow":{"worktree_isolation":true}})");
  EXPECT_THAT(lab.Run({"status"}, lab.Env()).out,
              HasSubstr("effective tier: worktree (from worktree_isolation)"));
}

// Everything a spawn needs: a missing image with pull "never" fails every
// spawn, so it fails status too (issue 17 item 5), through the engine socket
// and through the client alike; other tiers never ask for the image.
TEST(StatusVerbTest, AMissingImageExitsOne) {
  Lab lab;
  lab.Config(kContainer);
  lab.FakeDocker();
  FakeEngine engine(lab.tmp().Path("engine.sock"));
  engine.set_image_present(false);
  RunResult r = lab.Run({"status"}, lab.Env(engine.docker_host()));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(TextErrorCodeOf(r.err), "isolation-image-missing") << r.err;
  EXPECT_THAT(r.out, HasSubstr("(missing)"));
  RunResult json_run = lab.Run({"status", "--json"}, lab.Env(engine.docker_host()));
  EXPECT_EQ(json_run.exit_code, 1);
  EXPECT_EQ(ParseJson(json_run.out)["image"]["present"], false);
  EXPECT_EQ(LastEnvelope(json_run.err)["code"], "isolation-image-missing");
  engine.set_image_present(true);
  RunResult present = lab.Run({"status", "--json"}, lab.Env(engine.docker_host()));
  EXPECT_EQ(present.exit_code, 0) << present.err;
  EXPECT_EQ(ParseJson(present.out)["image"]["present"], true);

  engine.set_image_present(false);
  lab.Config(R"({"isolation":{"tier":"direct"}})");
  EXPECT_EQ(lab.Run({"status"}, lab.Env(engine.docker_host())).exit_code, 0);
}

TEST(StatusVerbTest, ContainerWithoutRuntimeExitsOne) {
  Lab lab;
  lab.Config(kContainer);
  RunResult r = lab.Run({"status", "--json"}, lab.Env());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(ErrorCodeOf(r.err), "isolation-container-unavailable");
  json out = ParseJson(r.out);
  EXPECT_EQ(out["tier"], "container");
  EXPECT_EQ(out["runtime"]["available"], false);
  EXPECT_EQ(out["runtime"]["reason"], "runtime-not-installed");
}

TEST(StatusVerbTest, ContainerWithRuntimeExitsZero) {
  Lab lab;
  lab.Config(kContainer);
  lab.FakeDocker();
  FakeEngine engine(lab.tmp().Path("engine.sock"));
  RunResult r = lab.Run({"status", "--json"}, lab.Env(engine.docker_host()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json out = ParseJson(r.out);
  EXPECT_EQ(out["tier"], "container");
  EXPECT_EQ(out["runtime"]["available"], true);
  EXPECT_EQ(out["runtime"]["version"], "99.0-fake");
  EXPECT_EQ(out["runtime"]["bin"], lab.fakes() + "/docker");
}

TEST(StatusVerbTest, OpenedNetworkIsReportedAsUnrestricted) {
  Lab lab;
  lab.FakeDocker();
  FakeEngine engine(lab.tmp().Path("engine.sock"));
  lab.Config(R"({"isolation":{"tier":"container"}})");
  json closed = ParseJson(lab.Run({"status", "--json"}, lab.Env(engine.docker_host())).out);
  EXPECT_EQ(closed["description"]["network_restricted"], true) << closed.dump();
  lab.Config(R"({"isolation":{"tier":"container","container":{"network":"bridge"}}})");
  RunResult r = lab.Run({"status", "--json"}, lab.Env(engine.docker_host()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json open = ParseJson(r.out);
  EXPECT_EQ(open["description"]["network_restricted"], false) << open.dump();
  EXPECT_THAT(open["description"]["does_not_protect_against"][0].get<std::string>(),
              HasSubstr("bridge"));
}

TEST(StatusVerbTest, AdvisoryOnDirectOnceTheProjectHasPlans) {
  Lab lab;
  EXPECT_TRUE(ParseJson(lab.Run({"status", "--json"}, lab.Env()).out)["advisory"].is_null());
  lab.tmp().MakeDir("proj/.nubos-pilot/milestones");
  RunResult r = lab.Run({"status", "--json"}, lab.Env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(ParseJson(r.out)["advisory"].is_string());
  EXPECT_THAT(lab.Run({"status"}, lab.Env()).out, HasSubstr("advisory: "));
}

// ---------------------------------------------------------------- describe

TEST(DescribeVerbTest, EachTierAsJson) {
  Lab lab;
  struct Want {
    const char* tier;
    bool versions, rights, network;
  };
  for (const Want& want :
       {Want{"direct", false, false, false}, Want{"worktree", true, false, false},
        Want{"container", true, true, true}}) {
    RunResult r = lab.Run({"describe", want.tier, "--json"}, lab.Env());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    json out = ParseJson(r.out);
    EXPECT_EQ(out["tier"], want.tier);
    EXPECT_EQ(out["isolates_versions"], want.versions) << want.tier;
    EXPECT_EQ(out["isolates_rights"], want.rights) << want.tier;
    EXPECT_EQ(out["network_restricted"], want.network) << want.tier;
    EXPECT_TRUE(out["summary"].is_string());
    EXPECT_TRUE(out["use_when"].is_string());
    ASSERT_TRUE(out["does_not_protect_against"].is_array());
    EXPECT_FALSE(out["does_not_protect_against"].empty()) << want.tier;
  }
}

TEST(DescribeVerbTest, EachTierAsText) {
  Lab lab;
  for (const char* tier : {"direct", "worktree", "container"}) {
    RunResult r = lab.Run({"describe", tier}, lab.Env());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr(std::string("tier: ") + tier));
    EXPECT_THAT(r.out, HasSubstr("isolates rights"));
    EXPECT_THAT(r.out, HasSubstr("does not protect against"));
  }
}

TEST(DescribeVerbTest, WithoutTierIsMissingTier) {
  Lab lab;
  RunResult r = lab.Run({"describe"}, lab.Env());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(ErrorCodeOf(r.err), "isolation-missing-tier");
  EXPECT_TRUE(r.out.empty());
}

TEST(DescribeVerbTest, UnknownTierIsCoded) {
  Lab lab;
  RunResult r = lab.Run({"describe", "none"}, lab.Env());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(ErrorCodeOf(r.err), "isolation-unknown-tier");
}

// ---------------------------------------------------------------- probe

TEST(ProbeVerbTest, AvailableThroughTheEngineSocket) {
  Lab lab;
  lab.FakeDocker();
  FakeEngine engine(lab.tmp().Path("engine.sock"));
  RunResult r = lab.Run({"probe", "--json"}, lab.Env(engine.docker_host()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json out = ParseJson(r.out);
  EXPECT_EQ(out["available"], true);
  EXPECT_EQ(out["bin"], lab.fakes() + "/docker");
  EXPECT_EQ(out["version"], "99.0-fake");
  // The socket answered; the client was never needed.
  EXPECT_FALSE(lab.Invoked());
  EXPECT_THAT(engine.requests(), ::testing::Contains("GET /version"));
}

TEST(ProbeVerbTest, AvailableAsText) {
  Lab lab;
  lab.FakeDocker();
  FakeEngine engine(lab.tmp().Path("engine.sock"));
  RunResult r = lab.Run({"probe"}, lab.Env(engine.docker_host()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("docker: available, engine 99.0-fake"));
}

TEST(ProbeVerbTest, NonLocalEndpointFallsBackToTheClient) {
  Lab lab;
  lab.FakeDocker();
  RunResult r = lab.Run({"probe", "--json"}, lab.Env("tcp://127.0.0.1:9"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ParseJson(r.out)["version"], "99.0-fake");
  EXPECT_EQ(ReadNulSeparated(lab.fakes() + "/docker.argv"),
            (std::vector<std::string>{"version", "--format", "{{.Server.Version}}"}));
}

TEST(ProbeVerbTest, PodmanThroughItsSocketAndRemotely) {
  Lab lab;
  WriteFakeRuntime(lab.fakes(), "podman");
  FakeEngine engine(lab.tmp().Path("podman.sock"));
  std::vector<std::string> env = lab.Env();
  SetEnv(env, "CONTAINER_HOST", engine.docker_host());
  RunResult local = lab.Run({"probe", "--runtime", "podman", "--json"}, env);
  ASSERT_EQ(local.exit_code, 0) << local.err;
  EXPECT_EQ(ParseJson(local.out)["version"], "99.0-fake");
  EXPECT_FALSE(lab.Invoked("podman"));
  SetEnv(env, "CONTAINER_HOST", "tcp://127.0.0.1:9");
  RunResult remote = lab.Run({"probe", "--runtime", "podman", "--json"}, env);
  ASSERT_EQ(remote.exit_code, 0) << remote.err;
  EXPECT_EQ(ParseJson(remote.out)["bin"], lab.fakes() + "/podman");
  EXPECT_EQ(ReadNulSeparated(lab.fakes() + "/podman.argv"),
            (std::vector<std::string>{"version", "--format", "{{.Server.Version}}"}));
}

TEST(ProbeVerbTest, NoBinaryIsRuntimeNotInstalled) {
  Lab lab;
  FakeEngine engine(lab.tmp().Path("engine.sock"));  // Even with an engine up.
  RunResult r = lab.Run({"probe", "--json"}, lab.Env(engine.docker_host()));
  EXPECT_EQ(r.exit_code, 1);
  json out = ParseJson(r.out);
  EXPECT_EQ(out["available"], false);
  EXPECT_EQ(out["reason"], "runtime-not-installed");
  EXPECT_THAT(out["detail"].get<std::string>(), HasSubstr("no docker binary on PATH"));
}

TEST(ProbeVerbTest, MissingSocketIsDaemonUnreachable) {
  Lab lab;
  lab.FakeDocker();
  RunResult r = lab.Run({"probe", "--json"}, lab.Env("unix://" + lab.tmp().Path("gone.sock")));
  EXPECT_EQ(r.exit_code, 1);
  json out = ParseJson(r.out);
  EXPECT_EQ(out["reason"], "daemon-unreachable");
  EXPECT_THAT(out["detail"].get<std::string>(), HasSubstr("no such socket"));
}

TEST(ProbeVerbTest, RefusedSocketIsDaemonUnreachable) {
  Lab lab;
  lab.FakeDocker();
  MakeRefusingSocket(lab.tmp().Path("dead.sock"));
  RunResult r = lab.Run({"probe", "--json"}, lab.Env("unix://" + lab.tmp().Path("dead.sock")));
  EXPECT_EQ(r.exit_code, 1);
  json out = ParseJson(r.out);
  EXPECT_EQ(out["reason"], "daemon-unreachable");
  EXPECT_THAT(out["detail"].get<std::string>(), HasSubstr("connection refused"));
}

TEST(ProbeVerbTest, SilentSocketTimesOut) {
  Lab lab;
  lab.FakeDocker();
  SilentSocket silent(lab.tmp().Path("silent.sock"));
  std::vector<std::string> env = lab.Env("unix://" + lab.tmp().Path("silent.sock"));
  env.push_back("NP_EXEC_ENGINE_TIMEOUT_MS=150");  // Injected: no wait on the real 2 s.
  RunResult r = lab.Run({"probe", "--json"}, env);
  EXPECT_EQ(r.exit_code, 1);
  json out = ParseJson(r.out);
  EXPECT_EQ(out["reason"], "daemon-unreachable");
  EXPECT_THAT(out["detail"].get<std::string>(), HasSubstr("did not answer in time"));
}

TEST(ProbeVerbTest, UnavailableAsText) {
  Lab lab;
  RunResult r = lab.Run({"probe"}, lab.Env());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("docker: unavailable: runtime-not-installed"));
}

// ---------------------------------------------------------------- wrap

TEST(WrapVerbTest, DirectDoesNotWrap) {
  Lab lab;
  RunResult r = lab.Run({"wrap", "--", "node", "x.cjs", "a b"}, lab.Env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json out = ParseJson(r.out);
  EXPECT_EQ(out["tier"], "direct");
  EXPECT_EQ(out["wrapped"], false);
  EXPECT_EQ(out["bin"], "node");
  EXPECT_EQ(out["args"], json({"x.cjs", "a b"}));
  EXPECT_THAT(out["note"].get<std::string>(), HasSubstr("host's own rights"));
}

TEST(WrapVerbTest, ContainerPrintsTheHardenedArgv) {
  Lab lab;
  lab.Config(kContainer);
  lab.FakeDocker();
  FakeEngine engine(lab.tmp().Path("engine.sock"));
  std::vector<std::string> env = lab.Env(engine.docker_host());
  SetEnv(env, "API_KEY", "value-never-printed");
  RunResult r = lab.Run({"wrap", "--env", "API_KEY", "--", "node", "x.cjs"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("value-never-printed")));
  json out = ParseJson(r.out);
  EXPECT_EQ(out["tier"], "container");
  EXPECT_EQ(out["wrapped"], true);
  // A printed plan runs np-exec's sandbox-exec in front of the runtime.
  EXPECT_EQ(out["bin"], NpExecBin());
  EXPECT_EQ(out["workdir"], lab.project());
  EXPECT_EQ(out["project_mount"], lab.project());
  std::vector<std::string> printed = out["args"].get<std::vector<std::string>>();
  ASSERT_GE(printed.size(), 8u);
  EXPECT_EQ(printed.front(), "sandbox-exec");
  auto dashes = std::find(printed.begin(), printed.end(), "--");
  ASSERT_NE(dashes, printed.end());
  ASSERT_NE(dashes + 1, printed.end());
  EXPECT_EQ(*(dashes + 1), lab.fakes() + "/docker");
  std::vector<std::string> args(dashes + 2, printed.end());
  ASSERT_FALSE(args.empty());
  EXPECT_EQ(args.front(), "run");
  for (const char* flag : {"--rm", "--init", "--read-only", "--cap-drop", "ALL",
                           "no-new-privileges", "none", "API_KEY", "node:22-bookworm-slim"}) {
    EXPECT_THAT(args, ::testing::Contains(flag)) << flag;
  }
  std::vector<std::string> tail(args.end() - 2, args.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"node", "x.cjs"}));
  EXPECT_FALSE(lab.Invoked()) << "wrap runs nothing";
}

TEST(WrapVerbTest, NothingAfterDashDashIsNoCommand) {
  Lab lab;
  RunResult r = lab.Run({"wrap", "--"}, lab.Env());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(ErrorCodeOf(r.err), "isolation-wrap-no-command");
  RunResult bare = lab.Run({"wrap"}, lab.Env());
  EXPECT_EQ(bare.exit_code, 1);
  EXPECT_EQ(ErrorCodeOf(bare.err), "isolation-wrap-no-command");
}

TEST(WrapVerbTest, ContainerWithoutRuntimeIsUnavailable) {
  Lab lab;
  lab.Config(kContainer);
  RunResult r = lab.Run({"wrap", "--", "node"}, lab.Env());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(ErrorCodeOf(r.err), "isolation-container-unavailable");
  EXPECT_TRUE(r.out.empty()) << "no plan is printed for a tier that cannot be delivered";
}

// ---------------------------------------------------------------- misc

TEST(VerbsTest, UnknownVerbListsTheVerbs) {
  Lab lab;
  std::vector<std::string> env = lab.Env();
  SetEnv(env, "NP_EXEC_ERROR_FORMAT", "json");
  RunResult r = lab.Run({"statsu"}, env);
  EXPECT_EQ(r.exit_code, 1);
  json envelope = LastEnvelope(r.err);
  EXPECT_EQ(envelope["code"], "isolation-unknown-verb");
  for (const char* verb : {"status", "describe", "probe", "wrap", "doctor", "shims", "which"}) {
    EXPECT_THAT(envelope["details"]["verbs"], ::testing::Contains(verb));
  }
}

TEST(VerbsTest, HelpSaysNeverSilentlyDowngraded) {
  Lab lab;
  RunResult r = lab.Run({"--help"}, lab.Env());
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("never silently downgraded"));
  EXPECT_THAT(r.out, HasSubstr("np-exec status"));
}

TEST(VerbsTest, Version) {
  Lab lab;
  RunResult r = lab.Run({"--version"}, lab.Env());
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, ::testing::MatchesRegex("np-exec [0-9]+\\.[0-9]+\\.[0-9]+\n"));
}

// Errors are in the format asked for, whatever stderr is (here a pipe):
// plain text by default, the reference's envelope with
// NP_EXEC_ERROR_FORMAT=json or for a verb run with --json.
TEST(VerbsTest, ErrorIsOnePlainLineByDefault) {
  Lab lab;
  for (const std::vector<std::string>& args : {std::vector<std::string>{"describe"},
                                               {"--", "no-such-program-np"},
                                               {"status", "--bogus"}}) {
    RunResult r = lab.Run(args, lab.Env());
    EXPECT_THAT(r.err, ::testing::StartsWith("np-exec: error: ")) << r.err;
    EXPECT_NE(TextErrorCodeOf(r.err), "") << r.err;
    EXPECT_TRUE(LastEnvelope(r.err).is_null()) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
  }
  EXPECT_EQ(TextErrorCodeOf(lab.Run({"describe"}, lab.Env()).err), "isolation-missing-tier");
  // Any value but "json" is the default.
  std::vector<std::string> env = lab.Env();
  SetEnv(env, "NP_EXEC_ERROR_FORMAT", "text");
  EXPECT_EQ(TextErrorCodeOf(lab.Run({"describe"}, env).err), "isolation-missing-tier");
}

void ExpectEnvelope(const RunResult& r, const std::string& code) {
  json envelope = LastEnvelope(r.err);
  ASSERT_TRUE(envelope.is_object()) << r.err;
  // The reference's shape exactly: code, message, details and nothing else.
  EXPECT_EQ(envelope.size(), 3u) << envelope.dump();
  EXPECT_EQ(envelope["code"], code);
  EXPECT_TRUE(envelope["message"].is_string());
  EXPECT_TRUE(envelope.contains("details"));
  EXPECT_EQ(TextErrorCodeOf(r.err), "");
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
}

TEST(VerbsTest, ErrorIsTheEnvelopeWithErrorFormatJson) {
  Lab lab;
  std::vector<std::string> env = lab.Env();
  SetEnv(env, "NP_EXEC_ERROR_FORMAT", "json");
  ExpectEnvelope(lab.Run({"describe"}, env), "isolation-missing-tier");
  // The run path too, which has no --json of its own.
  RunResult run = lab.Run({"--", "no-such-program-np"}, env);
  EXPECT_EQ(run.exit_code, 127);
  ExpectEnvelope(run, "program-not-found");
}

TEST(VerbsTest, ErrorIsTheEnvelopeForAVerbRunWithJson) {
  Lab lab;
  ExpectEnvelope(lab.Run({"describe", "--json"}, lab.Env()), "isolation-missing-tier");
  // Also when the verb's own options do not parse.
  ExpectEnvelope(lab.Run({"status", "--json", "--bogus"}, lab.Env()), "usage");
  // A program's own --json is the program's: the run path's error stays text.
  RunResult run = lab.Run({"--", "no-such-program-np", "--json"}, lab.Env());
  EXPECT_EQ(TextErrorCodeOf(run.err), "program-not-found") << run.err;
  lab.Config(R"({"isolation":{"tier":"container"}})");
  RunResult status = lab.Run({"status", "--json"}, lab.Env());
  EXPECT_EQ(status.exit_code, 1);
  ExpectEnvelope(status, "isolation-container-unavailable");
}

// With stderr on a terminal the error is one human line, not JSON.
TEST(VerbsTest, ErrorIsOneReadableLineOnATerminal) {
  Lab lab;
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  ASSERT_GE(master, 0);
  ASSERT_EQ(grantpt(master), 0);
  ASSERT_EQ(unlockpt(master), 0);
  const std::string slave_name = ptsname(master);
  std::vector<std::string> env = lab.Env();
  std::string bin = NpExecBin();
  std::string verb = "describe";
  // Built before fork: the child makes async-signal-safe calls only.
  std::vector<char*> argv = {bin.data(), verb.data(), nullptr};
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const std::string project = lab.project();
  pid_t pid = fork();
  if (pid == 0) {
    int slave = open(slave_name.c_str(), O_RDWR | O_NOCTTY);
    int null_fd = open("/dev/null", O_RDWR);
    dup2(null_fd, 0);
    dup2(null_fd, 1);
    dup2(slave, 2);
    if (chdir(project.c_str()) != 0) _exit(121);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  ASSERT_EQ(WaitProcess(pid, 20000), 1);
  std::string text;
  char buffer[4096];
  pollfd fd = {master, POLLIN, 0};
  while (poll(&fd, 1, 200) > 0) {
    ssize_t n = read(master, buffer, sizeof(buffer));
    if (n <= 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  close(master);
  EXPECT_THAT(text, ::testing::StartsWith("np-exec: error: "));
  EXPECT_THAT(text, HasSubstr("(isolation-missing-tier)"));
  EXPECT_THAT(text, Not(HasSubstr("{\"code\"")));
}

// A verb's own usage errors exit 1 like the verb (design.md 5: verbs exit 0
// or 1); only the run path's usage errors are 125. Nothing runs either way.
struct VerbUsageCase {
  std::vector<std::string> args;
  std::string code;
};

class VerbUsageErrorTest : public ::testing::TestWithParam<VerbUsageCase> {};

TEST_P(VerbUsageErrorTest, ExitsOneWithItsCode) {
  Lab lab;
  lab.FakeDocker();
  RunResult r = lab.Run(GetParam().args, lab.Env());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(ErrorCodeOf(r.err), GetParam().code) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(lab.Invoked("docker"));
  EXPECT_FALSE(FileExists(lab.sentinel()));
}

INSTANTIATE_TEST_SUITE_P(
    Verbs, VerbUsageErrorTest,
    ::testing::Values(
        VerbUsageCase{{"status", "--bogus"}, "usage"}, VerbUsageCase{{"status", "extra"}, "usage"},
        VerbUsageCase{{"describe", "direct", "container"}, "usage"},
        VerbUsageCase{{"describe", "--runtime"}, "usage"},
        VerbUsageCase{{"probe", "--nope"}, "usage"},
        VerbUsageCase{{"doctor", "--preload"}, "usage"}, VerbUsageCase{{"shims"}, "usage"},
        VerbUsageCase{{"shims", "remove", "dir"}, "usage"},
        VerbUsageCase{{"wrap", "--env", "A=x", "--", "sentinel"}, "isolation-bad-env-name"},
        // No "--": the reference's no-command, whatever precedes it.
        VerbUsageCase{{"wrap", "--workdir"}, "isolation-wrap-no-command"},
        VerbUsageCase{{"wrap", "node"}, "isolation-wrap-no-command"},
        VerbUsageCase{{"wrap", "--env", "A", "node", "x.cjs"}, "isolation-wrap-no-command"},
        // An option np-exec does not know, before "--", stays usage.
        VerbUsageCase{{"wrap", "--bogus", "--", "sentinel"}, "usage"},
        VerbUsageCase{{"describe", ""}, "isolation-missing-tier"}),
    // Named after the arguments: a stable ctest name, never the case's bytes.
    [](const ::testing::TestParamInfo<VerbUsageCase>& param_info) {
      std::string name = std::to_string(param_info.index);
      for (const std::string& arg : param_info.param.args) {
        for (char c : arg) {
          if (std::isalnum(static_cast<unsigned char>(c))) name.push_back(c);
        }
        name.push_back('_');
      }
      name.pop_back();
      return name;
    });

// The run path's own usage errors stay 125.
TEST(VerbsTest, RunPathUsageErrorsStay125) {
  Lab lab;
  EXPECT_EQ(lab.Run({"--env", "A=x", "--", lab.sentinel_program()}, lab.Env()).exit_code, 125);
  EXPECT_EQ(lab.Run({"--bogus", lab.sentinel_program()}, lab.Env()).exit_code, 125);
  EXPECT_FALSE(FileExists(lab.sentinel()));
}

// ---------------------------------------------------------------- shims

TEST(ShimsVerbTest, InstallCreatesSymlinksToNpExec) {
  Lab lab;
  const std::string dir = lab.tmp().Path("shims");
  RunResult r = lab.Run({"shims", "install", dir, "node", "claude"}, lab.Env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("export PATH=\"" + dir + ":$PATH\""));
  struct stat self, st;
  ASSERT_EQ(stat(NpExecBin().c_str(), &self), 0);
  for (const char* name : {"node", "claude"}) {
    const std::string link = dir + "/" + name;
    struct stat lst;
    ASSERT_EQ(lstat(link.c_str(), &lst), 0) << link;
    EXPECT_TRUE(S_ISLNK(lst.st_mode));
    ASSERT_EQ(stat(link.c_str(), &st), 0);
    EXPECT_EQ(st.st_ino, self.st_ino);
    EXPECT_EQ(st.st_dev, self.st_dev);
  }
  // Installing again is a no-op, not an error.
  EXPECT_EQ(lab.Run({"shims", "install", dir, "node"}, lab.Env()).exit_code, 0);
}

TEST(ShimsVerbTest, DefaultNameIsNode) {
  Lab lab;
  const std::string dir = lab.tmp().Path("shims");
  RunResult r = lab.Run({"shims", "install", dir, "--json"}, lab.Env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ParseJson(r.out)["shims"], json({"node"}));
  EXPECT_TRUE(FileExists(dir + "/node"));
}

TEST(ShimsVerbTest, RefusesToClobberAForeignFile) {
  Lab lab;
  const std::string foreign = lab.tmp().Write("shims/node", "#!/bin/sh\necho mine\n", 0755);
  RunResult r = lab.Run({"shims", "install", lab.tmp().Path("shims")}, lab.Env());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(ErrorCodeOf(r.err), "shim-exists");
  EXPECT_EQ(ReadFile(foreign), "#!/bin/sh\necho mine\n");
  struct stat lst;
  ASSERT_EQ(lstat(foreign.c_str(), &lst), 0);
  EXPECT_TRUE(S_ISREG(lst.st_mode));
}

// shims remove takes np-exec's shims only: a file, a link to another
// program, a copy of np-exec and the name np-exec are refused with a code,
// and when one name is refused nothing is removed.
TEST(ShimsVerbTest, RemoveTakesOnlyNpExecShims) {
  Lab lab;
  const std::string dir = lab.tmp().Path("shims");
  ASSERT_EQ(lab.Run({"shims", "install", dir, "node", "claude"}, lab.Env()).exit_code, 0);
  lab.tmp().Write("shims/notes", "mine\n");
  ASSERT_EQ(symlink("/usr/bin/env", (dir + "/env").c_str()), 0);
  std::filesystem::copy_file(NpExecBin(), dir + "/copy");
  struct Refusal {
    std::vector<std::string> names;
    std::string code;
  };
  for (const Refusal& c : std::vector<Refusal>{{{"node", "notes"}, "shim-not-a-shim"},
                                               {{"env"}, "shim-not-a-shim"},
                                               {{"copy"}, "shim-not-a-shim"},
                                               {{"node", "absent"}, "shim-not-found"},
                                               {{"np-exec"}, "shim-bad-name"},
                                               {{"../shims/node"}, "shim-bad-name"}}) {
    std::vector<std::string> args = {"shims", "remove", dir};
    args.insert(args.end(), c.names.begin(), c.names.end());
    RunResult r = lab.Run(args, lab.Env());
    EXPECT_EQ(r.exit_code, 1) << c.code;
    EXPECT_EQ(TextErrorCodeOf(r.err), c.code) << r.err;
    EXPECT_TRUE(r.out.empty());
  }
  for (const char* name : {"node", "claude", "notes", "env", "copy"}) {
    struct stat st;
    EXPECT_EQ(lstat((dir + "/" + name).c_str(), &st), 0) << name << " was removed";
  }
  RunResult removed = lab.Run({"shims", "remove", dir, "node", "claude", "--json"}, lab.Env());
  ASSERT_EQ(removed.exit_code, 0) << removed.err;
  EXPECT_EQ(ParseJson(removed.out), json({{"dir", dir}, {"removed", {"node", "claude"}}}));
  EXPECT_FALSE(FileExists(dir + "/node"));
  EXPECT_TRUE(FileExists(dir + "/notes"));
  EXPECT_TRUE(FileExists(dir + "/copy"));
}

TEST(ShimsVerbTest, ListNamesWhatEachShimReaches) {
  Lab lab;
  const std::string dir = lab.tmp().Path("shims");
  ASSERT_EQ(lab.Run({"shims", "install", dir, "sh", "np-nothing"}, lab.Env()).exit_code, 0);
  lab.tmp().Write("shims/notes", "mine\n");
  std::vector<std::string> env = lab.Env();
  SetEnv(env, "PATH", dir + ":" + lab.FakePath());
  RunResult r = lab.Run({"shims", "list", dir, "--json"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = ParseJson(r.out);
  ASSERT_EQ(out["dirs"].size(), 1u) << r.out;
  const json& shims = out["dirs"][0]["shims"];
  ASSERT_EQ(shims.size(), 2u) << r.out << " (notes is not a shim)";
  EXPECT_EQ(shims[0]["name"], "np-nothing");
  EXPECT_EQ(shims[0]["error"], "shim-no-program");
  EXPECT_EQ(shims[1]["name"], "sh");
  EXPECT_EQ(shims[1]["program"], lab.tools() + "/sh");
  EXPECT_EQ(lab.Run({"shims", "list"}, env).out,
            dir + ":\n  np-nothing -> nothing real behind it on PATH (shim-no-program)\n  sh -> " +
                lab.tools() + "/sh\n");
  // Without DIR: the PATH entries holding shims; none here.
  RunResult none = lab.Run({"shims", "list"}, lab.Env());
  EXPECT_EQ(none.out, "no directory on PATH holds an np-exec shim\n");
  RunResult missing = lab.Run({"shims", "list", lab.tmp().Path("absent")}, lab.Env());
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(TextErrorCodeOf(missing.err), "shim-dir-unreadable");
}

TEST(WhichVerbTest, NamesTheShimTheProgramAndTheTier) {
  Lab lab;
  const std::string dir = lab.tmp().Path("shims");
  ASSERT_EQ(lab.Run({"shims", "install", dir, "sh"}, lab.Env()).exit_code, 0);
  std::vector<std::string> env = lab.Env();
  SetEnv(env, "PATH", dir + ":" + lab.FakePath());
  lab.Config(R"({"isolation":{"tier":"worktree"}})");
  RunResult r = lab.Run({"which", "sh", "--json"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = ParseJson(r.out);
  EXPECT_EQ(out["shim"], json({{"path", dir + "/sh"}, {"path_entry", dir}}));
  EXPECT_EQ(out["program"], lab.tools() + "/sh");
  EXPECT_EQ(out["program_path_entry"], lab.tools());
  EXPECT_EQ(out["tier"], "worktree");
  EXPECT_EQ(out["effective_from"], "config");
  EXPECT_EQ(out["runtime"], nullptr);
  EXPECT_EQ(out["image"], nullptr);
  // A name PATH finds as a real program first: not a shim.
  RunResult real = lab.Run({"which", "cat"}, env);
  EXPECT_EQ(real.exit_code, 0) << real.err;
  EXPECT_THAT(real.out, HasSubstr("cat: not an np-exec shim; PATH finds " + lab.tools() + "/cat"));
  RunResult absent = lab.Run({"which", "np-no-such-name"}, env);
  EXPECT_EQ(absent.exit_code, 1);
  EXPECT_EQ(TextErrorCodeOf(absent.err), "program-not-found");
  EXPECT_THAT(absent.out, HasSubstr("np-no-such-name: not on PATH"));
}

// ---------------------------------------------------------------- doctor

TEST(DoctorVerbTest, JsonOnDirect) {
  Lab lab;
  const std::string shims = lab.tmp().Path("shims");
  ASSERT_EQ(lab.Run({"shims", "install", shims}, lab.Env()).exit_code, 0);
  std::vector<std::string> env = lab.Env();
  SetEnv(env, "PATH", shims + ":" + lab.FakePath());
  RunResult r = lab.Run({"doctor", "--json"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json out = ParseJson(r.out);
  EXPECT_EQ(out["tier"], "direct");
  EXPECT_EQ(out["effective_from"], "default");
  EXPECT_FALSE(out["does_not_protect_against"].empty());
  EXPECT_EQ(out["runtime"]["available"], false);
  EXPECT_EQ(out["image"]["pinning"], "tag");
  ASSERT_EQ(out["shims_on_path"].size(), 1u) << out.dump();
  EXPECT_EQ(out["shims_on_path"][0]["dir"], shims);
  EXPECT_EQ(out["shims_on_path"][0]["names"], json({"node"}));
  EXPECT_EQ(out["ok"], true);
}

TEST(DoctorVerbTest, ContainerWithImagePresent) {
  Lab lab;
  lab.Config(kContainer);
  lab.FakeDocker();
  FakeEngine engine(lab.tmp().Path("engine.sock"));
  RunResult r = lab.Run({"doctor", "--json"}, lab.Env(engine.docker_host()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json out = ParseJson(r.out);
  EXPECT_EQ(out["tier"], "container");
  EXPECT_EQ(out["runtime"]["version"], "99.0-fake");
  EXPECT_EQ(out["image"]["present"], true);
  EXPECT_EQ(out["deliverable"], true);
}

TEST(DoctorVerbTest, ContainerWithImageMissingAndMovingTag) {
  Lab lab;
  lab.Config(R"({"isolation":{"tier":"container","container":{"image":"node:latest"}}})");
  lab.FakeDocker();
  FakeEngine engine(lab.tmp().Path("engine.sock"));
  engine.set_image_present(false);
  RunResult r = lab.Run({"doctor", "--json"}, lab.Env(engine.docker_host()));
  EXPECT_EQ(r.exit_code, 1);
  json out = ParseJson(r.out);
  EXPECT_EQ(out["image"]["present"], false);
  EXPECT_EQ(out["image"]["pinning"], "moving");
  EXPECT_FALSE(out["problems"].empty());
  EXPECT_FALSE(out["warnings"].empty());
}

TEST(DoctorVerbTest, TextOnContainerWithoutRuntime) {
  Lab lab;
  lab.Config(kContainer);
  RunResult r = lab.Run({"doctor"}, lab.Env());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("tier: container (from config)"));
  EXPECT_THAT(r.out, HasSubstr("does not protect against"));
  EXPECT_THAT(r.out, HasSubstr("runtime-not-installed"));
  EXPECT_THAT(r.out, HasSubstr("the configured tier cannot be delivered"));
}

}  // namespace
}  // namespace np::testing
