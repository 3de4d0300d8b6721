// Warm sandboxes on podman without an API service of the caller's
// (launcher/runtime/podman_service.h): the first warm spawn starts np-exec's
// own `podman system service` in the state store, later spawns ask it (no
// podman client process at all for a warm spawn) and still run in the one
// warm sandbox; the service carries none of the caller's other variables and
// ends after the idle time; NP_EXEC_PODMAN_SERVICE=0 starts none.
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"

namespace np::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

constexpr char kCanary[] = "NP_SERVICE_CANARY=not-for-the-service";

class PodmanServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    NP_REQUIRE_RUNTIME("podman");
    project_ = dir_.MakeDir("project");
    MakeProject(project_, ContainerConfig("podman", "np-test:local",
                                          {{"warm", {{"idle_seconds", kIdleSeconds}}}}));
    services_needle_ = absl::StrCat(TestStateHome(), "/np-exec/engines/podman-");
  }
  void TearDown() override {
    if (project_.empty()) return;
    Np({"warm", "--stop"});
    for (pid_t pid : Services()) kill(pid, SIGTERM);
  }

  RunResult Np(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
    std::vector<std::string> argv = {NpExecBin()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, Options(RuntimeEnv(env), 120000, project_));
  }

  // np-exec's podman services of this test's state store.
  std::vector<pid_t> Services() { return PidsWithCmdline(services_needle_); }

  static std::string Environ(pid_t pid) {
    std::ifstream in(absl::StrCat("/proc/", pid, "/environ"));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  static constexpr int kIdleSeconds = 8;
  TempDir dir_;
  std::string project_;
  std::string services_needle_;
};

TEST_F(PodmanServiceTest, WarmSpawnsAskNpExecsOwnServiceAndRunNoPodmanClient) {
  RunResult first = Np({"--", "true"}, {kCanary});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  // Started by the first spawn (which ran), in the state store.
  ASSERT_TRUE(WaitFor([&] { return !Services().empty(); }, 10000)) << "no service was started";
  const std::vector<pid_t> services = Services();
  ASSERT_THAT(services, SizeIs(1));
  const std::string environ = Environ(services[0]);
  EXPECT_THAT(environ, Not(HasSubstr("NP_SERVICE_CANARY"))) << "the caller's variable reached it";
  EXPECT_THAT(environ, HasSubstr("CONTAINERS_CONF=")) << "podman's own configuration is missing";
  // Once it answers, a warm spawn starts no podman process at all.
  const std::string trace = dir_.Path("execve.trace");
  bool quiet = false;
  for (int attempt = 0; attempt < 40 && !quiet; ++attempt) {
    RunResult traced = RunProcess({"/usr/bin/strace", "-f", "-qq", "-e", "trace=execve", "-o",
                                   trace, NpExecBin(), "--", "true"},
                                  Options(RuntimeEnv(), 120000, project_));
    ASSERT_EQ(traced.exit_code, 0) << traced.err << traced.out;
    std::ifstream in(trace);
    std::stringstream text;
    text << in.rdbuf();
    quiet = !absl::StrContains(text.str(), "podman\"");
    if (!quiet) usleep(250 * 1000);
  }
  EXPECT_TRUE(quiet) << "every warm spawn still ran podman's client";
  // Every spawn ran warm, all in the one sandbox (the service's answers key
  // it as the client's did).
  RunResult listed = Np({"warm", "--json"});
  const nlohmann::json parsed = nlohmann::json::parse(listed.out, nullptr, false);
  ASSERT_TRUE(parsed.is_object()) << listed.out;
  EXPECT_THAT(parsed["warm_sandboxes"], SizeIs(1)) << listed.out;
  int bad = 0;
  for (const nlohmann::json& line : ReadAuditLog(project_, &bad)) {
    if (line.value("decision", "") == "run") {
      EXPECT_TRUE(line.value("warm", false)) << line.dump();
    }
  }
  EXPECT_EQ(bad, 0);
  // No spawn for the idle time: the service ends by itself.
  Np({"warm", "--stop"});
  EXPECT_TRUE(WaitFor([&] { return Services().empty(); }, (kIdleSeconds + 20) * 1000))
      << "np-exec's podman service outlived its idle time";
}

// A spawn that is refused starts nothing, not even the service.
TEST_F(PodmanServiceTest, ARefusedSpawnStartsNoService) {
  MakeProject(
      project_,
      ContainerConfig("podman", "np-test:local",
                      {{"warm", {{"idle_seconds", kIdleSeconds}}},
                       {"mounts", {{{"source", "/var/run/docker.sock"}, {"target", "/sock"}}}}}));
  RunResult refused = Np({"--", "true"});
  EXPECT_EQ(refused.exit_code, 125) << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("isolation-mount-forbidden-source"));
  usleep(1000 * 1000);
  EXPECT_THAT(Services(), IsEmpty());
}

TEST_F(PodmanServiceTest, TurnedOffNoServiceStartsAndSpawnsStillRunWarm) {
  const std::vector<std::string> off = {"NP_EXEC_PODMAN_SERVICE=0"};
  for (int i = 0; i < 2; ++i) {
    RunResult spawn = Np({"--", "true"}, off);
    ASSERT_EQ(spawn.exit_code, 0) << spawn.err;
  }
  usleep(1000 * 1000);
  EXPECT_THAT(Services(), IsEmpty());
  int bad = 0;
  int warm = 0;
  for (const nlohmann::json& line : ReadAuditLog(project_, &bad)) {
    if (line.value("decision", "") == "run" && line.value("warm", false)) ++warm;
  }
  EXPECT_EQ(warm, 2);
}

}  // namespace
}  // namespace np::testing
