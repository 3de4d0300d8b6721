// An engine on another host, for real: a second docker engine with a file
// system of its own, reached only over ssh on the loopback
// (remote_engine_up.sh). A project the engine's host does not share is
// refused by the spawn's entry point there and nothing runs; a project on
// storage both see at the same path runs, and its writes reach the
// operator's project; a SIGKILLed np-exec's watchdog removes the container
// over the same connection.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"
#include "tests/support/ci.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace np::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kImage[] = "np-test:local";

// The protected paths a look-alike project needs so that the engine's host
// mounts every placeholder np-exec binds (core/protected_paths.cc): only
// then does the spawn reach its entry point, whose check is under test.
constexpr const char* kLookAlikeDirs[] = {
    ".claude", ".vscode", ".idea",         ".gemini",          ".codex",
    ".cursor", ".zed",    ".devcontainer", ".nubos-pilot/bin", ".nubos-pilot/audit"};
constexpr const char* kLookAlikeFiles[] = {
    ".mcp.json", ".envrc", ".gitmodules", ".devcontainer.json", ".git", ".nubos-pilot/config.json"};

int FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

// What the remote engine needs here, or why it cannot be had.
std::string MissingPieces() {
  if (geteuid() != 0) return "needs root (a privileged podman container)";
  for (const char* tool : {"/usr/sbin/sshd", "/usr/sbin/dockerd", "/usr/bin/ssh-keygen"}) {
    if (access(tool, X_OK) != 0) return std::string(tool) + " is not installed";
  }
  for (const char* runtime : {"docker", "podman"}) {
    const std::string why = RuntimeUnavailableReason(runtime);
    if (!why.empty()) return std::string(runtime) + ": " + why;
  }
  return "";
}

class RemoteEngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    missing_ = new std::string(MissingPieces());
    if (!missing_->empty()) return;
    dir_ = new TempDir();
    name_ = new std::string("np-remote-engine-" + std::to_string(getpid()));
    remote_ = new std::string("ssh://root@127.0.0.1:" + std::to_string(FreeLoopbackPort()));
    dir_->MakeDir("shared");
    dir_->MakeDir("private");
    const std::string bin_dir = std::filesystem::path(NpExecBin()).parent_path().string();
    RunResult up = RunProcess(
        {SourceDir() + "/tests/e2e/remote_engine_up.sh", dir_->Path("engine"),
         remote_->substr(remote_->rfind(':') + 1), *name_, kImage, bin_dir, dir_->Path("shared")},
        Options(RuntimeEnv(), 180000));
    if (up.exit_code != 0) *missing_ = "the remote engine did not come up: " + up.err;
  }

  static void TearDownTestSuite() {
    if (name_ != nullptr) (void)RunRuntime("podman", {"rm", "-f", "-t", "0", *name_}, RuntimeEnv());
    delete dir_;
    delete name_;
    delete remote_;
    delete missing_;
  }

  void SetUp() override {
    if (!missing_->empty()) NP_NEEDS(*missing_);
  }

  // The client's environment: its ssh (with the engine's keys) first on
  // PATH, DOCKER_HOST the remote engine, the operator file accepting it.
  std::vector<std::string> Env() const {
    const std::string xdg = dir_->Path("xdg");
    dir_->Write("xdg/nubos-pilot/config.json",
                R"({"isolation":{"container":{"remote_engine":true}}})");
    // A value of the caller's that no long-lived helper may keep.
    std::vector<std::string> env = RuntimeEnv({"DOCKER_HOST=" + *remote_, "XDG_CONFIG_HOME=" + xdg,
                                               "NP_REMOTE_SECRET=np-remote-secret-value"});
    for (std::string& entry : env) {
      if (entry.rfind("PATH=", 0) == 0)
        entry = "PATH=" + dir_->Path("engine/bin") + ":" + entry.substr(5);
    }
    return env;
  }

  std::string Project(const std::string& where) const {
    const std::string project = dir_->MakeDir(where + "/proj-" + std::to_string(++count_));
    dir_->Write(project.substr(dir_->path().size() + 1) + "/.nubos-pilot/config.json",
                ContainerConfig("docker", kImage));
    return project;
  }

  RunResult OnEngine(const std::string& script) const {
    return RunRuntime("podman", {"exec", *name_, "/bin/sh", "-c", script}, RuntimeEnv());
  }

  RunResult Spawn(const std::string& project, const std::string& script) const {
    return RunProcess({NpExecBin(), "--", "sh", "-c", script}, Options(Env(), 120000, project));
  }

  static bool NoCheckFileLeft(const std::string& project) {
    for (const auto& entry : std::filesystem::directory_iterator(project)) {
      if (entry.path().filename().string().rfind(".np-exec-remote-check-", 0) == 0) return false;
    }
    return true;
  }

  static std::string* missing_;
  static TempDir* dir_;
  static std::string* name_;
  static std::string* remote_;
  mutable int count_ = 0;
};

std::string* RemoteEngineTest::missing_ = nullptr;
TempDir* RemoteEngineTest::dir_ = nullptr;
std::string* RemoteEngineTest::name_ = nullptr;
std::string* RemoteEngineTest::remote_ = nullptr;

// The project is not on storage the engine's host shares: at its path there
// is a look-alike someone prepared, with every protected path in place. The
// spawn's entry point finds no check file there and the program never runs,
// neither there nor here; the refusal is in the project's audit log.
TEST_F(RemoteEngineTest, AProjectTheEngineDoesNotShareIsRefused) {
  const std::string project = Project("private");
  std::string prepare = "mkdir -p " + project;
  for (const char* d : kLookAlikeDirs) prepare += " " + project + "/" + d;
  prepare += " && cd " + project + " && touch";
  for (const char* f : kLookAlikeFiles) prepare += std::string(" ") + f;
  ASSERT_EQ(OnEngine(prepare).exit_code, 0);
  RunResult r = Spawn(project, "echo ran > ran-here");
  EXPECT_EQ(r.exit_code, 125) << r.err;
  EXPECT_THAT(r.err, HasSubstr("no check file"));
  EXPECT_THAT(r.err, HasSubstr("isolation-engine-project-not-shared"));
  EXPECT_FALSE(std::filesystem::exists(project + "/ran-here"));
  EXPECT_NE(OnEngine("test -e " + project + "/ran-here").exit_code, 0) << "ran on the engine";
  EXPECT_TRUE(NoCheckFileLeft(project));
  int bad = 0;
  const std::vector<nlohmann::json> lines = ReadAuditLog(project, &bad);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back()["code"], "isolation-engine-project-not-shared") << lines.back().dump();
  EXPECT_EQ(lines.back()["engine"], "DOCKER_HOST (" + *remote_ + ")");
  // Nothing at all at that path there: the engine refuses the mounts, and
  // the unconfirmed check is named the same way.
  const std::string absent = Project("private");
  RunResult none = Spawn(absent, "echo ran > ran-here");
  EXPECT_EQ(none.exit_code, 125) << none.err;
  EXPECT_THAT(none.err, HasSubstr("isolation-engine-project-not-shared"));
  EXPECT_FALSE(std::filesystem::exists(absent + "/ran-here"));
}

// On storage both hosts see at the same path: the spawn runs on the remote
// engine and what it writes is in the operator's project; through the one
// reused connection (a forwarded endpoint in the state store, which status
// names as the engine's socket) and without it (NP_EXEC_ENGINE_TUNNEL=0:
// the client dials ssh on every call).
TEST_F(RemoteEngineTest, ASharedProjectRunsAndItsWritesReachTheProject) {
  for (const std::string tunnel : {"1", "0"}) {
    const std::string project = Project("shared");
    std::vector<std::string> env = Env();
    SetEnv(env, "NP_EXEC_ENGINE_TUNNEL", tunnel);
    RunResult r = RunProcess({NpExecBin(), "--", "sh", "-c", "echo made-there > made-inside"},
                             Options(env, 120000, project));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(ReadFile(project + "/made-inside"), "made-there\n");
    EXPECT_TRUE(NoCheckFileLeft(project));
    int bad = 0;
    const std::vector<nlohmann::json> lines = ReadAuditLog(project, &bad);
    ASSERT_GE(lines.size(), 2u);
    EXPECT_EQ(lines.back()["exit_status"], 0);
    EXPECT_EQ(lines.back()["engine"], "DOCKER_HOST (" + *remote_ + ")");
    RunResult status = RunProcess({NpExecBin(), "status", "--json"}, Options(env, 60000, project));
    const nlohmann::json engine = nlohmann::json::parse(status.out, nullptr, false)["engine"];
    EXPECT_EQ(engine["reach"], "ssh") << status.out;
    if (tunnel == "1") {
      ASSERT_TRUE(engine["socket"].is_string()) << status.out;
      EXPECT_THAT(engine["socket"].get<std::string>(), HasSubstr("/np-exec/engines/"));
      // The master outlives the spawn, and keeps none of its values.
      const std::vector<pid_t> masters = PidsWithCmdline("/np-exec/engines/");
      EXPECT_FALSE(masters.empty());
      for (pid_t pid : masters) {
        EXPECT_THAT(ReadFile("/proc/" + std::to_string(pid) + "/environ"),
                    ::testing::Not(HasSubstr("np-remote-secret-value")));
      }
    } else {
      EXPECT_TRUE(engine["socket"].is_null()) << status.out;
    }
  }
}

// The protected paths stay read-only on the engine's host too: a program
// there cannot rewrite the project's config, a git hook or .claude/.
TEST_F(RemoteEngineTest, ProtectedPathsHoldThere) {
  const std::string project = Project("shared");
  const std::string config = ReadFile(project + "/.nubos-pilot/config.json");
  dir_->MakeDir(project.substr(dir_->path().size() + 1) + "/.git/hooks");
  for (const std::string attack :
       {"echo '{}' > .nubos-pilot/config.json", "echo evil > .git/hooks/pre-commit",
        "mkdir -p .claude && echo evil > .claude/settings.json",
        "rm -f .nubos-pilot/config.json"}) {
    RunResult r = Spawn(project, attack);
    EXPECT_NE(r.exit_code, 0) << attack;
  }
  EXPECT_EQ(ReadFile(project + "/.nubos-pilot/config.json"), config);
  EXPECT_FALSE(std::filesystem::exists(project + "/.git/hooks/pre-commit"));
  EXPECT_FALSE(std::filesystem::exists(project + "/.claude/settings.json"));
}

// A SIGKILLed np-exec cannot remove its container; its watchdog does, over
// the same pinned ssh endpoint.
TEST_F(RemoteEngineTest, TheWatchdogRemovesTheRemoteContainerAfterSigkill) {
  const std::string project = Project("shared");
  pid_t np_exec = StartProcess({NpExecBin(), "--", "sleep", "300"}, Options(Env(), 0, project),
                               dir_->Path("killed.out"), dir_->Path("killed.err"));
  ASSERT_GT(np_exec, 0);
  const std::string prefix = ContainerPrefix(np_exec);
  auto running = [&] { return OnEngine("docker ps -q --filter name=" + prefix).out.size() > 0; };
  ASSERT_TRUE(WaitFor(running, 60000)) << "the container never started on the engine";
  ASSERT_EQ(kill(np_exec, SIGKILL), 0);
  (void)WaitProcess(np_exec, 10000);
  EXPECT_TRUE(WaitFor([&] { return !running(); }, 30000)) << "the container outlived np-exec";
}

}  // namespace
}  // namespace np::testing
