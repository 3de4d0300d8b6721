// The in-sandbox bridge: TCP on 127.0.0.1 forwarded to the proxy's unix
// socket, end to end through the real proxy to a loopback server.
#include "launcher/egress/bridge.h"

#include <dirent.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <memory>
#include <string>
#include <vector>

#include "core/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "launcher/egress/proxy.h"
#include "launcher/egress/relay.h"
#include "tests/egress/loopback.h"
#include "tests/support/temp_dir.h"

namespace np::egress {
namespace {

using ::np::testing::ConnectLoopback;
using ::np::testing::LoopbackHttpServer;
using ::np::testing::ReadUntil;
using ::np::testing::SendText;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class BridgeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_.MakeDir("egress");
    ASSERT_EQ(chmod(dir_.c_str(), 0700), 0);
    socket_path_ = dir_ + "/proxy.sock";
    ProxyOptions options;
    options.socket_path = socket_path_;
    options.allowlist = *ParseAllowHosts({Target()});
    options.on_record = [this](const EgressRecord& record) {
      std::lock_guard<std::mutex> lock(mutex_);
      records_.push_back(record);
    };
    absl::StatusOr<std::unique_ptr<EgressProxy>> proxy = EgressProxy::Start(std::move(options));
    ASSERT_TRUE(proxy.ok()) << proxy.status();
    proxy_ = *std::move(proxy);
  }

  void TearDown() override {
    if (proxy_) proxy_->Stop();  // its threads call back into records_
    if (bridge_pid_ > 0) {
      kill(bridge_pid_, SIGKILL);
      waitpid(bridge_pid_, nullptr, 0);
    }
  }

  std::string Target() const { return "127.0.0.1:" + std::to_string(server_.port()); }

  // One request through the bridge on `port`; returns everything answered.
  std::string ThroughBridge(uint16_t port, const std::string& request) {
    int fd = ConnectLoopback(port);
    if (fd < 0) return "<connect failed>";
    SendText(fd, request);
    std::string response = ReadUntil(fd, "");
    close(fd);
    return response;
  }

  np::testing::TempDir temp_;
  std::string dir_;
  std::string socket_path_;
  LoopbackHttpServer server_;
  std::unique_ptr<EgressProxy> proxy_;
  std::mutex mutex_;
  std::vector<EgressRecord> records_;
  pid_t bridge_pid_ = -1;
};

TEST_F(BridgeTest, ForwardsTcpToTheProxyEndToEnd) {
  absl::StatusOr<BridgeProcess> bridge = StartBridge(0, socket_path_);
  ASSERT_TRUE(bridge.ok()) << bridge.status();
  bridge_pid_ = bridge->pid;
  ASSERT_NE(bridge->port, 0);

  // Plain HTTP, as HTTP_PROXY=http://127.0.0.1:PORT makes a client send it.
  std::string plain =
      ThroughBridge(bridge->port, "GET http://" + Target() + "/via-bridge HTTP/1.1\r\n\r\n");
  EXPECT_THAT(plain, StartsWith("HTTP/1.1 200 OK"));
  EXPECT_THAT(plain, HasSubstr("upstream saw GET /via-bridge HTTP/1.1"));

  // CONNECT, as HTTPS_PROXY makes a client send it.
  int fd = ConnectLoopback(bridge->port);
  ASSERT_GE(fd, 0);
  SendText(fd, "CONNECT " + Target() + " HTTP/1.1\r\n\r\n");
  EXPECT_EQ(ReadUntil(fd, "\r\n\r\n"), "HTTP/1.1 200 Connection established\r\n\r\n");
  SendText(fd, "GET /tunnel-via-bridge HTTP/1.1\r\n\r\n");
  EXPECT_THAT(ReadUntil(fd, ""), HasSubstr("upstream saw GET /tunnel-via-bridge HTTP/1.1"));
  close(fd);

  // A refusal reaches the program through the bridge unchanged.
  std::string refused = ThroughBridge(bridge->port, "CONNECT example.com:443 HTTP/1.1\r\n\r\n");
  EXPECT_THAT(refused, StartsWith("HTTP/1.1 403 Forbidden\r\n"));
  EXPECT_THAT(refused, HasSubstr("(egress-host-not-allowed)\n"));

  // A record follows its connection's close, which travels back through the
  // bridge: wait for all three, in whatever order they finished.
  std::vector<EgressRecord> records;
  for (int i = 0; i < 500; ++i) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      records = records_;
    }
    if (records.size() >= 3) break;
    usleep(10000);
  }
  ASSERT_EQ(records.size(), 3u);
  int n_allowed = 0, n_refused = 0;
  for (const EgressRecord& record : records) {
    if (record.allowed && record.reason_code.empty()) ++n_allowed;
    if (!record.allowed && record.reason_code == "egress-host-not-allowed") ++n_refused;
  }
  EXPECT_EQ(n_allowed, 2);
  EXPECT_EQ(n_refused, 1);
}

TEST_F(BridgeTest, ServesManyConnectionsAtOnceInOneLoop) {
  absl::StatusOr<BridgeProcess> bridge = StartBridge(0, socket_path_);
  ASSERT_TRUE(bridge.ok()) << bridge.status();
  bridge_pid_ = bridge->pid;
  constexpr int kClients = 30;
  std::vector<int> fds;
  for (int i = 0; i < kClients; ++i) {
    int fd = ConnectLoopback(bridge->port);
    ASSERT_GE(fd, 0);
    SendText(fd, "CONNECT " + Target() + " HTTP/1.1\r\n\r\n");
    fds.push_back(fd);
  }
  for (int fd : fds) EXPECT_THAT(ReadUntil(fd, "\r\n\r\n"), StartsWith("HTTP/1.1 200 "));
  // Some clients give up early; the others are answered out of order.
  for (int i = 0; i < kClients; i += 3) close(fds[i]);
  for (int i = kClients - 1; i >= 0; --i) {
    if (i % 3 == 0) continue;
    SendText(fds[i], "GET /many-" + std::to_string(i) + " HTTP/1.1\r\n\r\n");
    EXPECT_THAT(ReadUntil(fds[i], ""),
                HasSubstr("upstream saw GET /many-" + std::to_string(i) + " "));
    close(fds[i]);
  }
  // The loop is still healthy afterwards.
  EXPECT_THAT(ThroughBridge(bridge->port, "GET http://" + Target() + "/after HTTP/1.1\r\n\r\n"),
              HasSubstr("upstream saw GET /after HTTP/1.1"));
}

TEST_F(BridgeTest, ListensOnThePortAskedForAndRefusesABusyOne) {
  const uint16_t port = np::testing::UnusedPort();
  absl::StatusOr<BridgeProcess> bridge = StartBridge(port, socket_path_);
  ASSERT_TRUE(bridge.ok()) << bridge.status();
  bridge_pid_ = bridge->pid;
  EXPECT_EQ(bridge->port, port);
  absl::StatusOr<BridgeProcess> again = StartBridge(port, socket_path_);
  EXPECT_EQ(ErrorCode(again.status()), "egress-bridge-listen-failed");
  EXPECT_EQ(ErrorCode(StartBridge(0, "").status()), "egress-socket-path-too-long");
  EXPECT_EQ(ErrorCode(StartBridge(0, "/" + std::string(200, 'x')).status()),
            "egress-socket-path-too-long");
}

TEST_F(BridgeTest, WithoutTheProxyAConnectionIsClosedNotHung) {
  absl::StatusOr<BridgeProcess> bridge = StartBridge(0, dir_ + "/no-such.sock");
  ASSERT_TRUE(bridge.ok()) << bridge.status();
  bridge_pid_ = bridge->pid;
  const int64_t start = MonotonicMs();
  EXPECT_EQ(ThroughBridge(bridge->port, "CONNECT " + Target() + " HTTP/1.1\r\n\r\n"), "");
  EXPECT_LT(MonotonicMs() - start, 2000);
  EXPECT_EQ(server_.connections(), 0);
}

// What the in-sandbox entry point does: start the bridge, then exec the
// program. The program keeps nothing of the bridge, and the bridge ends with it.
TEST_F(BridgeTest, TheCallerMayExecAndTheBridgeEndsWithTheProgram) {
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  pid_t program = fork();
  ASSERT_GE(program, 0);
  if (program == 0) {
    close(report[0]);
    absl::StatusOr<BridgeProcess> bridge = StartBridge(0, socket_path_);
    if (!bridge.ok()) _exit(99);
    const uint16_t port = bridge->port;
    if (write(report[1], &port, sizeof port) != sizeof port) _exit(98);
    close(report[1]);
    execl("/bin/sleep", "sleep", "1", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(report[1]);
  uint16_t port = 0;
  ASSERT_EQ(read(report[0], &port, sizeof port), static_cast<ssize_t>(sizeof port));
  close(report[0]);

  // While the program runs, the bridge serves.
  EXPECT_THAT(ThroughBridge(port, "GET http://" + Target() + "/while-running HTTP/1.1\r\n\r\n"),
              HasSubstr("upstream saw GET /while-running HTTP/1.1"));

  // The program holds no socket: the listener was close-on-exec and closed.
  // (Looked at once the exec happened: before it, the fork's copies are there.)
  const std::string comm = "/proc/" + std::to_string(program) + "/comm";
  for (int i = 0; i < 500 && np::testing::ReadFile(comm) != "sleep\n"; ++i) usleep(2000);
  ASSERT_EQ(np::testing::ReadFile(comm), "sleep\n");
  const std::string fd_dir = "/proc/" + std::to_string(program) + "/fd";
  DIR* dir = opendir(fd_dir.c_str());
  ASSERT_NE(dir, nullptr);
  while (dirent* entry = readdir(dir)) {
    char target[PATH_MAX] = {};
    const std::string link = fd_dir + "/" + entry->d_name;
    if (readlink(link.c_str(), target, sizeof target - 1) > 0) {
      EXPECT_THAT(std::string(target), ::testing::Not(StartsWith("socket:"))) << link;
    }
  }
  closedir(dir);

  int status = 0;
  ASSERT_EQ(waitpid(program, &status, 0), program);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  // PR_SET_PDEATHSIG: the bridge goes when the program does.
  int fd = -1;
  for (int i = 0; i < 200; ++i) {
    fd = ConnectLoopback(port);
    if (fd < 0) break;
    close(fd);
    usleep(10000);
  }
  EXPECT_LT(fd, 0) << "the bridge outlived the program";
}

}  // namespace
}  // namespace np::egress
