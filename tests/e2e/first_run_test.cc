// A real agent on its first run (issue 27), on docker, podman and bubblewrap:
// host tools written in node keep working or get np-exec's own message when a
// node shim is first on PATH; what np-exec says on stderr is a cause and a
// fix (never node's own "Cannot find module", never "Start the runtime" to a
// user outside the docker group); an unforwarded credential is named; node
// starts without the proxy warning.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/egress_entry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"
#include "tests/egress/loopback.h"

namespace np::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class FirstRunTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    NP_REQUIRE_RUNTIME(runtime());
    project_ = dir_.MakeDir("project");
    MakeProject(project_, ContainerConfig(runtime(), "np-node:local"));
  }
  const std::string& runtime() const { return GetParam(); }

  // PATH with a `node` shim first, as `np-exec shims install DIR node` makes it.
  std::vector<std::string> NodeShimEnv() {
    const std::string shims = dir_.Path("shims");
    RunResult installed =
        RunProcess({NpExecBin(), "shims", "install", shims, "node"}, Options(RuntimeEnv()));
    EXPECT_EQ(installed.exit_code, 0) << installed.err;
    std::vector<std::string> env = RuntimeEnv();
    SetEnv(env, "PATH", shims + ":/usr/local/bin:/usr/bin:/bin");
    return env;
  }

  TempDir dir_;
  std::string project_;
};

// The host's npm (`#!/usr/bin/env node`, so the node shim runs it): on
// bubblewrap, which shows the host's /usr, it runs in the sandbox; on docker
// and podman the image's node cannot see /usr/bin/npm, and np-exec says so
// with its own code before anything runs.
TEST_P(FirstRunTest, HostNpmThroughTheNodeShimRunsOrGetsNpExecsOwnMessage) {
  if (access("/usr/bin/npm", X_OK) != 0) NP_NEEDS("the host's npm at /usr/bin/npm");
  RunResult r = RunProcess({"/usr/bin/npm", "--version"}, Options(NodeShimEnv(), 120000, project_));
  EXPECT_THAT(r.err, Not(HasSubstr("Cannot find module")));
  int bad = 0;
  std::vector<nlohmann::json> audit = ReadAuditLog(project_, &bad);
  ASSERT_FALSE(audit.empty());
  if (runtime() == "bwrap") {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, ::testing::MatchesRegex("[0-9]+\\.[0-9]+\\.[0-9]+\n"));
    EXPECT_EQ(audit.back().value("event", ""), "exit") << audit.back().dump();
    return;
  }
  EXPECT_EQ(r.exit_code, 127) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("(script-not-in-image)"));
  EXPECT_THAT(r.err, HasSubstr("/usr/bin/npm"));
  EXPECT_THAT(r.err, HasSubstr("np-exec shims remove DIR node"));
  EXPECT_EQ(r.out, "");
  // Nothing ran: the spawn's only line is its refusal.
  EXPECT_EQ(audit.back().value("decision", ""), "refused") << audit.back().dump();
  for (const nlohmann::json& line : audit) EXPECT_NE(line.value("decision", ""), "run");
}

// An agent's credential set in the caller's shell but not forwarded is named
// on stderr with the key to add it to; the operator file forwards it for
// every project, and then the program sees it and nothing is said.
TEST_P(FirstRunTest, AnUnforwardedCredentialIsNamedAndTheOperatorFileForwardsIt) {
  dir_.Write("project/claude", "#!/bin/sh\necho \"key=${ANTHROPIC_API_KEY-unset}\"\n");
  ASSERT_EQ(chmod((project_ + "/claude").c_str(), 0755), 0);
  const std::string config_home = dir_.MakeDir("config");
  std::vector<std::string> env =
      RuntimeEnv({"ANTHROPIC_API_KEY=sk-test-credential", "XDG_CONFIG_HOME=" + config_home});
  RunResult dropped =
      RunProcess({NpExecBin(), "--", project_ + "/claude"}, Options(env, 120000, project_));
  ASSERT_EQ(dropped.exit_code, 0) << dropped.err;
  EXPECT_EQ(dropped.out, "key=unset\n");
  EXPECT_THAT(dropped.err,
              HasSubstr("np-exec: ANTHROPIC_API_KEY is set here but not passed into the sandbox"));
  EXPECT_THAT(dropped.err, HasSubstr("add to isolation.container.env: \"env\": "
                                     "[\"ANTHROPIC_API_KEY\"]"));
  EXPECT_THAT(dropped.err, Not(HasSubstr("sk-test-credential")));

  dir_.Write("config/nubos-pilot/config.json",
             R"({"isolation": {"container": {"env": ["ANTHROPIC_API_KEY"]}}})");
  RunResult forwarded =
      RunProcess({NpExecBin(), "--", project_ + "/claude"}, Options(env, 120000, project_));
  ASSERT_EQ(forwarded.exit_code, 0) << forwarded.err;
  EXPECT_EQ(forwarded.out, "key=sk-test-credential\n");
  EXPECT_THAT(forwarded.err, Not(HasSubstr("not passed into the sandbox")));
}

// Whether the host's node takes --disable-warning in NODE_OPTIONS, judged as
// np-exec's entry point judges the sandbox's node.
bool HostNodeAcceptsDisableWarning() {
  RunResult v = RunProcess({"/usr/bin/env", "node", "--version"}, Options(RuntimeEnv(), 30000));
  return v.exit_code == 0 && NodeAcceptsDisableWarning(v.out);
}

// On network "allowlist" node starts without undici's "EnvHttpProxyAgent is
// experimental" warning, and still routes fetch through np-exec's proxy
// (node 22 in the agent image); a node too old for --disable-warning in
// NODE_OPTIONS (Debian's 18 in np-node) is left alone and still starts.
// bubblewrap runs the host's node (20 here, which has no env proxy to warn
// about): it starts quietly too.
TEST_P(FirstRunTest, NodeStartsWithoutTheProxyWarningAndStillUsesTheProxy) {
  LoopbackHttpServer server;
  const std::string image = runtime() == "bwrap" ? "" : "np-agent-claude:local";
  if (!image.empty() && RunRuntime(runtime(), {"image", "inspect", image}).exit_code != 0) {
    NP_NEEDS(image + " in " + runtime() + " (bash scripts/build-agent-image.sh claude)");
  }
  MakeProject(project_,
              ContainerConfig(runtime(), image,
                              {{"network", "allowlist"},
                               {"allow_hosts", {absl::StrCat("127.0.0.1:", server.port())}}}));
  const std::string script =
      absl::StrCat("node -e 1 && node -e \"fetch('http://127.0.0.1:", server.port(),
                   "/through-proxy').then(r => r.text()).then(t => console.log(t.trim()), "
                   "e => console.log('fetch failed'))\"; echo \"options=$NODE_OPTIONS\"");
  RunResult r =
      RunProcess({NpExecBin(), "--", "sh", "-c", script}, Options(RuntimeEnv(), 120000, project_));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("UNDICI-EHPA")));
  EXPECT_THAT(r.err, Not(HasSubstr("experimental")));
  if (image.empty() && !HostNodeAcceptsDisableWarning()) {
    // bubblewrap runs the host's node; Debian 12's own (18) refuses the
    // option in NODE_OPTIONS, so it is not given, and it still starts.
    EXPECT_THAT(r.out, HasSubstr("options=\n"));
    return;
  }
  EXPECT_THAT(r.out, HasSubstr("options=--disable-warning=UNDICI-EHPA"));
  if (!image.empty()) {
    EXPECT_THAT(r.out, HasSubstr("upstream saw GET /through-proxy HTTP/1.1"));
    // node 18 refuses --disable-warning in NODE_OPTIONS: not given it.
    MakeProject(project_,
                ContainerConfig(runtime(), "np-node:local",
                                {{"network", "allowlist"}, {"allow_hosts", {"127.0.0.1:9"}}}));
    RunResult old = RunProcess({NpExecBin(), "--", "sh", "-c",
                                "node -e 'console.log(process.version)'; "
                                "echo \"options=${NODE_OPTIONS-unset}\""},
                               Options(RuntimeEnv(), 120000, project_));
    ASSERT_EQ(old.exit_code, 0) << old.out << old.err;
    EXPECT_THAT(old.out, HasSubstr("v18."));
    EXPECT_THAT(old.out, HasSubstr("options=unset"));
  }
}

// A user outside the docker group, as a new account is: the refusal says to
// join the group or use bubblewrap, not "Start the runtime" (the daemon is
// running), and bubblewrap then runs for that same user with no group.
TEST(FirstRunNonRootTest, DockerWithoutItsGroupNamesTheGroupAndBubblewrapRunsWithout) {
  NP_REQUIRE_RUNTIME("docker");
  NP_REQUIRE_RUNTIME("bwrap");
  if (geteuid() != 0) NP_NEEDS("root (setpriv to uid 1000)");
  struct stat socket_st;
  if (stat("/var/run/docker.sock", &socket_st) != 0 || (socket_st.st_mode & 0007) != 0) {
    NP_NEEDS("docker's socket at /var/run/docker.sock, closed to others");
  }
  TempDir dir;
  const std::string np_exec = dir.Path("np-exec");
  std::filesystem::copy_file(NpExecBin(), np_exec);
  chmod(np_exec.c_str(), 0755);
  const std::string project = dir.MakeDir("project");
  MakeProject(project, ContainerConfig("docker", "np-test:local"), /*trust=*/false);
  const std::string home = dir.MakeDir("home");
  const std::string state = dir.MakeDir("state");
  for (const std::string& path : {project, home, state}) ChownTree(path, 1000, 1000);
  std::vector<std::string> env = RuntimeEnv({"HOME=" + home, "XDG_STATE_HOME=" + state});
  SetEnv(env, "DOCKER_HOST", "unix:///var/run/docker.sock");
  ASSERT_EQ(RunAsUser1000(np_exec, {"trust"}, env, project).exit_code, 0);
  RunResult refused = RunAsUser1000(np_exec, {"--", "sh", "-c", "echo ran"}, env, project);
  EXPECT_EQ(refused.exit_code, 69) << refused.err;
  EXPECT_EQ(refused.out, "");
  EXPECT_THAT(refused.err, HasSubstr("(isolation-container-unavailable)"));
  EXPECT_THAT(refused.err, HasSubstr("join the docker group (sudo usermod -aG docker $USER"));
  EXPECT_THAT(refused.err, HasSubstr("or use bubblewrap, which needs no daemon and no group"));
  EXPECT_THAT(refused.err, Not(HasSubstr("Start the runtime")));

  dir.Write("project/.nubos-pilot/config.json", ContainerConfig("bwrap", ""));
  ChownTree(project, 1000, 1000);
  ASSERT_EQ(RunAsUser1000(np_exec, {"trust"}, env, project).exit_code, 0);
  RunResult ran = RunAsUser1000(np_exec, {"--", "sh", "-c", "echo ran; id -u"}, env, project);
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_EQ(ran.out, "ran\n1000\n");
}

INSTANTIATE_TEST_SUITE_P(Runtimes, FirstRunTest, ::testing::Values("docker", "podman", "bwrap"),
                         RuntimeName);

}  // namespace
}  // namespace np::testing
