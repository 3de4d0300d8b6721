// One spawn's egress directory (launcher/egress/session.h): private, in a
// place the sandboxed program cannot write, removed when the session ends and,
// through the watchdog, when np-exec is SIGKILLed; the proxy as a companion.
#include "launcher/egress/session.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "core/errors.h"
#include "gtest/gtest.h"
#include "tests/egress/loopback.h"
#include "tests/support/temp_dir.h"

namespace np::egress {
namespace {

using ::np::testing::ExchangeUnix;
using ::np::testing::TempDir;

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    run_ = temp_.MakeDir("run");
    ASSERT_EQ(chmod(run_.c_str(), 0700), 0);
  }
  TempDir temp_;
  std::string run_;
};

TEST_F(SessionTest, PrivateDirectoryUnderTheRuntimeDirRemovedAtTheEnd) {
  std::string dir;
  {
    absl::StatusOr<std::unique_ptr<EgressSession>> session = EgressSession::Create(run_, {});
    ASSERT_TRUE(session.ok()) << session.status();
    dir = (*session)->dir();
    EXPECT_TRUE(absl::StartsWith(dir, run_ + "/np-exec-egress-")) << dir;
    EXPECT_EQ((*session)->socket_path(), dir + "/egress.sock");
    struct stat st;
    ASSERT_EQ(lstat(dir.c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    EXPECT_EQ(st.st_uid, geteuid());
  }
  EXPECT_FALSE(Exists(dir));
}

TEST_F(SessionTest, RuntimeDirTheProgramCouldWriteIsNeverUsed) {
  // Inside a writable root (the project), writable by others, relative, or
  // missing: /tmp instead, where the sticky bit keeps others from renaming it.
  const std::string open_dir = temp_.MakeDir("open");
  ASSERT_EQ(chmod(open_dir.c_str(), 0777), 0);
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {run_, {temp_.path()}}, {open_dir, {}}, {"relative/run", {}}, {temp_.Path("absent"), {}}};
  for (const auto& [runtime_dir, roots] : cases) {
    absl::StatusOr<std::unique_ptr<EgressSession>> session =
        EgressSession::Create(runtime_dir, roots);
    ASSERT_TRUE(session.ok()) << session.status();
    EXPECT_TRUE(absl::StartsWith((*session)->dir(), "/tmp/np-exec-egress-"))
        << runtime_dir << " -> " << (*session)->dir();
  }
}

TEST_F(SessionTest, WatchdogRemovesTheDirectoryWhenTheOwnerIsKilled) {
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  const pid_t owner = fork();
  ASSERT_GE(owner, 0);
  if (owner == 0) {
    close(report[0]);
    absl::StatusOr<std::unique_ptr<EgressSession>> session = EgressSession::Create(run_, {});
    if (!session.ok()) _exit(1);
    // Something at the socket's path, as the proxy would leave it.
    const std::string socket = (*session)->socket_path();
    FILE* f = fopen(socket.c_str(), "w");
    if (f != nullptr) fclose(f);
    const std::string dir = (*session)->dir() + "\n";
    (void)!write(report[1], dir.data(), dir.size());
    pause();
    _exit(0);
  }
  close(report[1]);
  std::string dir;
  char c;
  while (read(report[0], &c, 1) == 1 && c != '\n') dir.push_back(c);
  close(report[0]);
  ASSERT_FALSE(dir.empty());
  EXPECT_TRUE(Exists(dir + "/egress.sock"));
  ASSERT_EQ(kill(owner, SIGKILL), 0);
  int status;
  ASSERT_EQ(waitpid(owner, &status, 0), owner);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = !Exists(dir);
    if (!gone) usleep(20 * 1000);
  }
  EXPECT_TRUE(gone) << dir << " outlived its SIGKILLed owner";
}

TEST_F(SessionTest, CompanionServesTheProxyForTheRunOnly) {
  absl::StatusOr<std::unique_ptr<EgressSession>> session = EgressSession::Create(run_, {});
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<EgressRecord> records;
  Companion companion = (*session)->ProxyCompanion(
      *ParseAllowHosts(nlohmann::json{"127.0.0.1:9"}),
      [&records](const EgressRecord& record) { records.push_back(record); });
  const std::string socket = (*session)->socket_path();
  EXPECT_FALSE(Exists(socket));
  ASSERT_TRUE(companion.start().ok());
  struct stat st;
  ASSERT_EQ(lstat(socket.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0666u);
  const std::string reply = ExchangeUnix(socket, "CONNECT 10.0.0.1:443 HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(absl::StartsWith(reply, "HTTP/1.1 403")) << reply;
  companion.stop();
  EXPECT_FALSE(Exists(socket));
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].reason_code, "egress-host-not-allowed");
  EXPECT_TRUE((*session)->start_error().ok());
}

TEST_F(SessionTest, CompanionThatCannotStartSaysWhy) {
  absl::StatusOr<std::unique_ptr<EgressSession>> session = EgressSession::Create(run_, {});
  ASSERT_TRUE(session.ok()) << session.status();
  // Something already at the path (a planted file): refused, never reused.
  FILE* f = fopen((*session)->socket_path().c_str(), "w");
  ASSERT_NE(f, nullptr);
  fclose(f);
  Companion companion = (*session)->ProxyCompanion(*ParseAllowHosts(nlohmann::json{"a.example"}),
                                                   [](const EgressRecord&) {});
  EXPECT_FALSE(companion.start().ok());
  EXPECT_TRUE(HasErrorCode((*session)->start_error(), "egress-socket-exists"))
      << (*session)->start_error();
}

}  // namespace
}  // namespace np::egress
