// Never downgrade, under every fault (issue 6, item 6): with the container
// tier configured and the runtime unusable in each way it can be, the program
// never runs on the host. The program is a sentinel that leaves a file when it
// runs; the fake runtime records every call.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/sha256.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/launcher/fakes.h"
#include "tests/support/ci.h"

namespace np::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// `env` without `name` (not even set empty).
std::vector<std::string> Without(std::vector<std::string> env, const std::string& name) {
  env.erase(std::remove_if(env.begin(), env.end(),
                           [&name](const std::string& e) { return e.rfind(name + "=", 0) == 0; }),
            env.end());
  return env;
}

// The Lab's environment without the DOCKER_HOST it always sets, so that the
// client's own choice (a context) decides.
std::vector<std::string> WithoutDockerHost(std::vector<std::string> env) {
  return Without(std::move(env), "DOCKER_HOST");
}

class NeverDowngradeTest : public ::testing::Test {
 protected:
  NeverDowngradeTest() { lab_.Config(R"({"isolation":{"tier":"container"}})"); }

  // Runs the sentinel through np-exec, both by path and by name, and checks
  // the refusal: `exit`, `code`, no sentinel, and a refused audit line.
  void ExpectRefused(const std::vector<std::string>& env, int exit, const std::string& code,
                     const std::string& detail = "", bool as_nobody = false) {
    for (const std::string& program : {lab_.sentinel_program(), std::string("sentinel")}) {
      std::vector<std::string> argv = {NpExecBin(), "--", program};
      if (as_nobody) argv = AsNobody(argv);
      RunOptions options;
      options.cwd = lab_.project();
      options.env = env;
      options.timeout_ms = 30000;
      RunResult r = RunProcess(argv, options);
      EXPECT_EQ(r.exit_code, exit) << program << ": " << r.err;
      EXPECT_EQ(ErrorCodeOf(r.err), code) << r.err;
      if (!detail.empty()) {
        EXPECT_THAT(r.err, HasSubstr(detail));
      }
      // The refusal names the actual cause's fix, not a blanket "start it".
      if (!fix_.empty()) {
        EXPECT_THAT(r.err, HasSubstr(fix_));
        EXPECT_THAT(r.err, ::testing::Not(HasSubstr("Start the runtime")));
      }
      EXPECT_FALSE(FileExists(lab_.sentinel())) << "the program ran on the host";
      EXPECT_TRUE(r.out.empty()) << r.out;
    }
    std::vector<json> lines = ReadJsonLines(lab_.audit_log());
    ASSERT_FALSE(lines.empty());
    EXPECT_EQ(lines.back()["decision"], "refused");
    EXPECT_EQ(lines.back()["code"], code);
    EXPECT_EQ(lines.back()["tier"], "container");
  }

  Lab lab_;
  std::string fix_;  // When set, the refusal must name this fix.
};

TEST_F(NeverDowngradeTest, RuntimeBinaryMissing) {
  fix_ =
      "Install docker (sudo apt install docker.io) and join the docker group (sudo usermod -aG "
      "docker $USER, then log in again), or use bubblewrap, which needs no daemon and no group";
  FakeEngine engine(lab_.tmp().Path("engine.sock"));  // The engine is fine.
  ExpectRefused(lab_.Env(engine.docker_host()), 69, "isolation-container-unavailable",
                "runtime-not-installed");
}

TEST_F(NeverDowngradeTest, PodmanAndBwrapMissing) {
  for (const char* runtime : {"podman", "bwrap"}) {
    lab_.Config(std::string(R"({"isolation":{"tier":"container","container":{"runtime":")") +
                runtime + R"("}}})");
    fix_ = std::string(runtime) == "podman" ? "Install podman (sudo apt install podman uidmap)"
                                            : "Install bubblewrap (sudo apt install bubblewrap)";
    ExpectRefused(lab_.Env(), 69, "isolation-container-unavailable", "runtime-not-installed");
  }
}

TEST_F(NeverDowngradeTest, DaemonDownSocketMissing) {
  lab_.FakeDocker();
  fix_ = "Start the docker daemon (sudo systemctl start docker), or use bubblewrap";
  ExpectRefused(lab_.Env("unix://" + lab_.tmp().Path("docker.sock")), 69,
                "isolation-container-unavailable", "no such socket");
  EXPECT_FALSE(lab_.Invoked());
}

TEST_F(NeverDowngradeTest, SocketRefusesConnections) {
  lab_.FakeDocker();
  fix_ = "Start the docker daemon (sudo systemctl start docker)";
  MakeRefusingSocket(lab_.tmp().Path("dead.sock"));
  ExpectRefused(lab_.Env("unix://" + lab_.tmp().Path("dead.sock")), 69,
                "isolation-container-unavailable", "connection refused");
  EXPECT_FALSE(lab_.Invoked());
}

TEST_F(NeverDowngradeTest, SocketNeverAnswers) {
  lab_.FakeDocker();
  SilentSocket silent(lab_.tmp().Path("silent.sock"));
  std::vector<std::string> env = lab_.Env("unix://" + lab_.tmp().Path("silent.sock"));
  env.push_back("NP_EXEC_ENGINE_TIMEOUT_MS=150");  // Injected: no wait on the real 2 s.
  ExpectRefused(env, 69, "isolation-container-unavailable", "did not answer in time");
  EXPECT_FALSE(lab_.Invoked());
}

TEST_F(NeverDowngradeTest, SocketPermissionDenied) {
  if (!IsRoot() || access("/usr/bin/setpriv", X_OK) != 0) {
    NP_NEEDS("needs root and setpriv to run np-exec as an unprivileged user");
  }
  lab_.FakeDocker();
  FakeEngine engine(lab_.tmp().Path("engine.sock"));
  ASSERT_EQ(chmod(engine.socket_path().c_str(), 0), 0);
  // Everything else is open to nobody, so only the socket stands in the way,
  // and the sentinel could be written if the program ran.
  // (The runtime's own directory stays 0755 and its parent is sticky, as
  // /tmp is: np-exec runs no runtime from a directory others can write.)
  ASSERT_EQ(chmod(lab_.tmp().path().c_str(), 01777), 0);
  ASSERT_EQ(chmod((lab_.project() + "/.nubos-pilot").c_str(), 0777), 0);
  // A user outside the docker group: join it, or use bubblewrap.
  fix_ =
      "This user may not use the docker daemon's socket: join the docker group (sudo usermod -aG "
      "docker $USER, then log in again), or use bubblewrap, which needs no daemon and no group";
  ExpectRefused(lab_.Env(engine.docker_host()), 69, "isolation-container-unavailable",
                "permission denied", /*as_nobody=*/true);
  EXPECT_FALSE(lab_.Invoked());
  EXPECT_TRUE(engine.requests().empty());
}

// Rootless podman without subordinate ids (no newuidmap, or no range for the
// user in /etc/subuid): its client fails, and the refusal names the uid map.
TEST_F(NeverDowngradeTest, RootlessPodmanWithoutSubordinateIdsNamesTheUidMap) {
  if (!IsRoot() || access("/usr/bin/setpriv", X_OK) != 0) {
    NP_NEEDS("needs root and setpriv to run np-exec as an unprivileged user");
  }
  lab_.Config(R"({"isolation":{"tier":"container","container":{"runtime":"podman"}}})");
  FakeRuntimeOptions options;
  options.version_out = "";
  options.version_exit = 125;
  WriteFakeRuntime(lab_.fakes(), "podman", options);
  ASSERT_EQ(chmod(lab_.tmp().path().c_str(), 01777), 0);
  ASSERT_EQ(chmod((lab_.project() + "/.nubos-pilot").c_str(), 0777), 0);
  fix_ =
      "Rootless podman needs newuidmap and newgidmap (sudo apt install uidmap) and subordinate "
      "ids for this user in /etc/subuid and /etc/subgid";
  ExpectRefused(lab_.Env(), 69, "isolation-container-unavailable", "no subordinate ids",
                /*as_nobody=*/true);
}

TEST_F(NeverDowngradeTest, DockerHostPointingNowhere) {
  lab_.FakeDocker();
  ExpectRefused(lab_.Env("unix:///nonexistent-np-exec-dir/docker.sock"), 69,
                "isolation-container-unavailable", "daemon-unreachable");
  EXPECT_FALSE(lab_.Invoked());
}

// A remote endpoint is asked through the client, which fails as the real one
// does when nothing listens there.
TEST_F(NeverDowngradeTest, RemoteDockerHostPointingNowhere) {
  FakeRuntimeOptions options;
  options.version_out = "";
  options.version_exit = 1;
  lab_.FakeDocker(options);
  ExpectRefused(lab_.Env("tcp://127.0.0.1:9"), 69, "isolation-container-unavailable",
                "daemon-unreachable");
  EXPECT_THAT(ReadFile(lab_.fakes() + "/docker.calls"), ::testing::Not(HasSubstr("run")));
}

// An engine on another host answers, but it would mount whatever sits at the
// project's path over there: refused before anything runs, whether DOCKER_HOST
// names it or docker's current context does. Before, each of these ran the
// client's `run`. (A tcp:// port on the loopback is this host's.) The engine
// is not asked anything first, not even its version: before, the client's
// `version` and `image inspect` went there.
TEST_F(NeverDowngradeTest, AnEngineOnAnotherHostIsRefused) {
  lab_.FakeDocker();
  // The loopback's address as userinfo names evil's port 2375 to the
  // client's URL parser; a relative socket path is wherever the client runs.
  for (const char* host : {"ssh://builder@build-host", "tcp://127.0.0.1:1@evil:2375",
                           "tcp://127.0.0.1%2eevil:2375", "unix://docker.sock", "tcp://[::1",
                           "fd://", "unix:///run/docker%2esock", "unix:///run/docker.sock?x"}) {
    ExpectRefused(lab_.Env(host), 125, "isolation-engine-remote", host);
  }
  // Plain tcp to another host (or to a name that only looks like the
  // loopback) is refused as insecure, whatever the operator accepts.
  for (const char* host :
       {"tcp://10.0.0.5:2376", "tcp://127.0.0.1.nip.io:2375", "tcp://127.0.0.09:2375"}) {
    ExpectRefused(lab_.Env(host), 125, "isolation-engine-insecure", host);
  }
  EXPECT_FALSE(lab_.Invoked()) << ReadFile(lab_.fakes() + "/docker.calls");
  // status and doctor name where the client would go, and doctor says why it is refused.
  RunResult status = lab_.Run({"status", "--json"}, lab_.Env("ssh://builder@build-host"));
  EXPECT_EQ(status.exit_code, 1) << status.err;
  EXPECT_EQ(ErrorCodeOf(status.err), "isolation-engine-remote") << status.err;
  EXPECT_EQ(ParseJson(status.out)["engine"]["on_this_host"], false);
  EXPECT_EQ(ParseJson(status.out)["engine"]["remote"], "DOCKER_HOST (ssh://builder@build-host)");
  RunResult doctor = lab_.Run({"doctor", "--json"}, lab_.Env("ssh://builder@build-host"));
  EXPECT_NE(doctor.exit_code, 0);
  EXPECT_THAT(doctor.out, HasSubstr("which is not this host"));
  std::vector<std::string> env = WithoutDockerHost(lab_.Env());
  const std::string docker_dir = lab_.tmp().Path("scratch-home-docker");
  SetEnv(env, "DOCKER_CONFIG", docker_dir);
  lab_.tmp().Write("scratch-home-docker/config.json", R"({"currentContext":"build"})");
  lab_.tmp().Write("scratch-home-docker/contexts/meta/" + Sha256Hex("build") + "/meta.json",
                   R"({"Name":"build","Endpoints":{"docker":{"Host":"ssh://ci@build"}}})");
  ExpectRefused(env, 125, "isolation-engine-remote", "docker context build (ssh://ci@build)");
  // Go's decoder finds a field under any case: docker reads this one too.
  lab_.tmp().Write("scratch-home-docker/config.json", R"({"CurrentContext":"build"})");
  ExpectRefused(env, 125, "isolation-engine-remote", "docker context build (ssh://ci@build)");
  // A config.json np-exec cannot read as the client would is not taken for
  // the default context.
  for (const char* config : {R"({"currentContext":"build")", R"(["build"])",
                             R"({"currentContext":"default","currentcontext":"build"})"}) {
    lab_.tmp().Write("scratch-home-docker/config.json", config);
    ExpectRefused(env, 125, "isolation-engine-remote", "docker's config.json (unreadable)");
  }
  // Go's decoder folds U+017F to s: docker reads "Hoſt" as Host. Two
  // spellings are not told apart.
  lab_.tmp().Write("scratch-home-docker/config.json", R"({"currentContext":"build"})");
  lab_.tmp().Write("scratch-home-docker/contexts/meta/" + Sha256Hex("build") + "/meta.json",
                   "{\"Endpoints\":{\"docker\":{\"Host\":\"unix:///var/run/docker.sock\","
                   "\"Ho\xC5\xBFt\":\"ssh://evil\"}}}");
  ExpectRefused(env, 125, "isolation-engine-remote", "docker context build (unreadable)");
  // A relative DOCKER_CONFIG is wherever the client starts; one in a project
  // is its sandboxes' to write; a socket in a project, theirs to replace.
  for (const std::string& config : {std::string("scratch-home-docker"), lab_.project() + "/.d"}) {
    std::vector<std::string> relative = env;
    SetEnv(relative, "DOCKER_CONFIG", config);
    ExpectRefused(relative, 125, "isolation-engine-remote", "DOCKER_CONFIG (" + config);
  }
  ExpectRefused(lab_.Env("unix://" + lab_.project() + "/engine.sock"), 125,
                "isolation-engine-remote", "a socket in a project");
  // Nor by "..", nor through a link to one there; and a DOCKER_CONFIG that
  // leads into a project counts even beside DOCKER_HOST (its credential
  // helpers and plugins are read anyway).
  ExpectRefused(lab_.Env("unix:///tmp/.." + lab_.project() + "/engine.sock"), 125,
                "isolation-engine-remote", "a socket in a project");
  lab_.tmp().Write("proj/engine.sock", "");
  lab_.tmp().MakeDir("proj/.d");
  const std::string socket_link = lab_.tmp().Path("engine-link.sock");
  ASSERT_EQ(symlink((lab_.project() + "/engine.sock").c_str(), socket_link.c_str()), 0);
  ExpectRefused(lab_.Env("unix://" + socket_link), 125, "isolation-engine-remote",
                "a socket in a project");
  const std::string config_link = lab_.tmp().Path("docker-config-link");
  ASSERT_EQ(symlink((lab_.project() + "/.d").c_str(), config_link.c_str()), 0);
  std::vector<std::string> linked = lab_.Env("unix:///var/run/docker.sock");
  SetEnv(linked, "DOCKER_CONFIG", config_link);
  ExpectRefused(linked, 125, "isolation-engine-remote", "DOCKER_CONFIG (" + config_link);
  // Nor one in np-exec's state store, where a persistent home is its
  // sandbox's to write (a plugin hook there would run on the host after
  // `docker run`), by its path as written or through a link to it.
  const std::string store_config = lab_.tmp().Path("scratch/home/.local/state/np-exec/homes/h/.d");
  lab_.tmp().MakeDir("scratch/home/.local/state/np-exec/homes/h/.d");
  const std::string store_link = lab_.tmp().Path("store-config-link");
  ASSERT_EQ(symlink(store_config.c_str(), store_link.c_str()), 0);
  for (const std::string& config : {store_config, store_link}) {
    std::vector<std::string> in_store = lab_.Env("unix:///var/run/docker.sock");
    SetEnv(in_store, "DOCKER_CONFIG", config);
    ExpectRefused(in_store, 125, "isolation-engine-remote", "DOCKER_CONFIG (" + config);
  }
  // A context np-exec cannot read is not taken for this host.
  SetEnv(env, "DOCKER_CONTEXT", "missing");
  ExpectRefused(env, 125, "isolation-engine-remote", "docker context missing (unreadable)");
  EXPECT_FALSE(lab_.Invoked()) << ReadFile(lab_.fakes() + "/docker.calls");
}

TEST_F(NeverDowngradeTest, APodmanConnectionIsRefused) {
  lab_.Config(R"({"isolation":{"tier":"container","container":{"runtime":"podman"}}})");
  WriteFakeRuntime(lab_.fakes(), "podman");
  std::vector<std::string> env = lab_.Env();
  SetEnv(env, "CONTAINER_CONNECTION", "build-server");
  ExpectRefused(env, 125, "isolation-engine-remote", "podman connection build-server");
  // Set at all, even empty, it makes podman a remote client, whatever
  // CONTAINER_HOST says.
  SetEnv(env, "CONTAINER_CONNECTION", "");
  SetEnv(env, "CONTAINER_HOST", "unix:///run/podman/podman.sock");
  ExpectRefused(env, 125, "isolation-engine-remote", "podman connection");
  env = Without(env, "CONTAINER_CONNECTION");
  SetEnv(env, "CONTAINER_HOST", "ssh://ci@build/run/podman/podman.sock");
  ExpectRefused(env, 125, "isolation-engine-remote", "CONTAINER_HOST (ssh://ci@build");
  // An empty CONTAINER_HOST makes it a remote client of its default connection.
  SetEnv(env, "CONTAINER_HOST", "");
  ExpectRefused(env, 125, "isolation-engine-remote", "CONTAINER_HOST (unreadable)");
  EXPECT_FALSE(lab_.Invoked("podman")) << ReadFile(lab_.fakes() + "/podman.calls");
}

// A loopback port is this host's engine, and the client is told exactly it:
// before, DOCKER_HOST was dropped from the client's run whenever it was not
// a socket, and the current context (here another host) took the run there.
TEST(EngineLocationTest, ALoopbackPortIsPinnedOverARemoteContext) {
  Lab lab;
  lab.Config(R"({"isolation":{"tier":"container"}})");
  lab.FakeDocker();
  std::vector<std::string> env = lab.Env("tcp://127.0.0.1:2375");
  // docker 20.10 to 24 dial a tcp:// engine through ALL_PROXY's SOCKS server,
  // loopback included: it would reach the engine on the proxy's host.
  SetEnv(env, "ALL_PROXY", "socks5://proxy.example:1080");
  SetEnv(env, "all_proxy", "socks5://proxy.example:1080");
  const std::string docker_dir = lab.tmp().Path("docker-config");
  SetEnv(env, "DOCKER_CONFIG", docker_dir);
  lab.tmp().Write("docker-config/config.json", R"({"currentContext":"build"})");
  lab.tmp().Write("docker-config/contexts/meta/" + Sha256Hex("build") + "/meta.json",
                  R"({"Name":"build","Endpoints":{"docker":{"Host":"ssh://ci@build"}}})");
  RunResult r = lab.Run({"--", "true"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(ReadFile(lab.fakes() + "/docker.calls"), HasSubstr("run"));
  const std::vector<std::string> client_env = ReadNulSeparated(lab.fakes() + "/docker.env");
  EXPECT_THAT(client_env, ::testing::Contains("DOCKER_HOST=tcp://127.0.0.1:2375"));
  for (const char* name : {"ALL_PROXY=", "all_proxy="}) {
    EXPECT_THAT(client_env, ::testing::Not(::testing::Contains(HasSubstr(name)))) << name;
  }
}

// A context that names a socket on this host is that engine: np-exec asks
// it, and the client runs against exactly the socket np-exec checked
// (DOCKER_HOST set for it, DOCKER_CONTEXT gone), whatever the context says by then.
TEST(EngineLocationTest, ALocalContextIsTheEngineTheClientIsPinnedTo) {
  Lab lab;
  lab.Config(R"({"isolation":{"tier":"container"}})");
  lab.FakeDocker();
  FakeEngine engine(lab.tmp().Path("alt-engine.sock"));
  std::vector<std::string> env = WithoutDockerHost(lab.Env());
  const std::string docker_dir = lab.tmp().Path("docker-config");
  SetEnv(env, "DOCKER_CONFIG", docker_dir);
  SetEnv(env, "DOCKER_CONTEXT", "alt");
  // A `docker` that is podman's wrapper would follow these instead.
  SetEnv(env, "CONTAINER_HOST", "ssh://ci@build/run/podman/podman.sock");
  SetEnv(env, "CONTAINER_CONNECTION", "build");
  lab.tmp().Write(
      "docker-config/contexts/meta/" + Sha256Hex("alt") + "/meta.json",
      R"({"Name":"alt","Endpoints":{"docker":{"Host":")" + engine.docker_host() + R"("}}})");
  RunResult r = lab.Run({"--", "true"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(ReadFile(lab.fakes() + "/docker.calls"), HasSubstr("run"));
  const std::vector<std::string> client_env = ReadNulSeparated(lab.fakes() + "/docker.env");
  EXPECT_THAT(client_env, ::testing::Contains(engine.docker_host().insert(0, "DOCKER_HOST=")));
  for (const char* name : {"DOCKER_CONTEXT=", "CONTAINER_HOST=", "CONTAINER_CONNECTION="}) {
    EXPECT_THAT(client_env, ::testing::Not(::testing::Contains(HasSubstr(name)))) << name;
  }
  EXPECT_FALSE(engine.requests().empty()) << "np-exec asked the context's engine";
}

// The engine answers the probe and the image check, then the daemon is gone
// when the client runs: it exits 125 as the real client does. np-exec passes
// the runtime's status on and does not fall back to running on the host.
TEST_F(NeverDowngradeTest, DaemonDiesBetweenProbeAndRun) {
  FakeRuntimeOptions options;
  options.run_exit = 125;
  options.run_stderr =
      "docker: Cannot connect to the Docker daemon at unix:///gone.sock. Is the docker daemon "
      "running?";
  lab_.FakeDocker(options);
  FakeEngine engine(lab_.tmp().Path("engine.sock"));
  for (const std::string& program : {lab_.sentinel_program(), std::string("sentinel")}) {
    RunResult r = lab_.Run({"--", program}, lab_.Env(engine.docker_host()));
    EXPECT_EQ(r.exit_code, 125);
    EXPECT_THAT(r.err, HasSubstr("Cannot connect to the Docker daemon"));
    EXPECT_FALSE(FileExists(lab_.sentinel())) << "the program ran on the host";
  }
  EXPECT_THAT(engine.requests(), ::testing::Contains("GET /images/node:22-bookworm-slim/json"));
  EXPECT_THAT(ReadFile(lab_.fakes() + "/docker.calls"), HasSubstr("run "));
  std::vector<json> lines = ReadJsonLines(lab_.audit_log());
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back()["event"], "exit");
  EXPECT_EQ(lines.back()["exit_status"], 125);
}

// Every verb that would claim isolation refuses under the same fault.
TEST_F(NeverDowngradeTest, VerbsRefuseToo) {
  const std::vector<std::string> env = lab_.Env();
  RunResult status = lab_.Run({"status", "--json"}, env);
  EXPECT_EQ(status.exit_code, 1);
  EXPECT_EQ(ErrorCodeOf(status.err), "isolation-container-unavailable");
  RunResult wrap = lab_.Run({"wrap", "--", "sentinel"}, env);
  EXPECT_EQ(wrap.exit_code, 1);
  EXPECT_EQ(ErrorCodeOf(wrap.err), "isolation-container-unavailable");
  RunResult doctor = lab_.Run({"doctor", "--json"}, env);
  EXPECT_EQ(doctor.exit_code, 1);
  EXPECT_EQ(ParseJson(doctor.out)["deliverable"], false);
  EXPECT_FALSE(FileExists(lab_.sentinel()));
}

}  // namespace
}  // namespace np::testing
