// Issue 19's launcher pieces as library calls: the argv hand-off through a
// descriptor (runtime/argv_handoff.h), the prepared /etc in a temporary state
// store (runtime/bwrap_etc_view.h) and the probe record's key
// (runtime/bwrap_probe_cache.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "core/bwrap_argv.h"
#include "core/errors.h"
#include "gtest/gtest.h"
#include "launcher/runtime/argv_handoff.h"
#include "launcher/runtime/bwrap_etc_view.h"
#include "launcher/runtime/bwrap_probe_cache.h"
#include "tests/support/temp_dir.h"

namespace np {
namespace {

TEST(ArgvHandoffTest, TheProgramsArgvTravelsThroughASealedDescriptor) {
  std::vector<std::string> argv = {
      "bwrap",      "--ro-bind", "/usr", "/usr", "--", "/run/np-exec/np-exec",
      "argv-entry", "--",        "echo", "a b",  "",   "--"};
  absl::StatusOr<int> fd = HandOffArgv(argv);
  ASSERT_TRUE(fd.ok()) << fd.status();
  ASSERT_GE(*fd, 0);
  EXPECT_EQ(argv, (std::vector<std::string>{"bwrap", "--ro-bind", "/usr", "/usr", "--",
                                            "/run/np-exec/np-exec", "argv-entry", "--fd",
                                            std::to_string(*fd)}));
  // Sealed: nothing can write it.
  EXPECT_EQ(write(*fd, "x", 1), -1);
  absl::StatusOr<std::vector<std::string>> read = ReadHandedOffArgv(*fd);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, (std::vector<std::string>{"echo", "a b", "", "--"}));
  // An argv without the entry point hands nothing off.
  std::vector<std::string> plain = {"bwrap", "--", "true"};
  EXPECT_EQ(*HandOffArgv(plain), -1);
  EXPECT_EQ(plain.size(), 3u);
}

TEST(ArgvHandoffTest, ADescriptorWithoutAWholeProgramIsRefused) {
  for (const std::string& data : {std::string(), std::string("echo"), std::string("\0x\0", 3)}) {
    int pipe_fds[2];
    ASSERT_EQ(pipe(pipe_fds), 0);
    ASSERT_EQ(write(pipe_fds[1], data.data(), data.size()), static_cast<ssize_t>(data.size()));
    close(pipe_fds[1]);
    EXPECT_EQ(ErrorCode(ReadHandedOffArgv(pipe_fds[0]).status()), "usage") << data.size();
  }
}

TEST(EtcViewTest, ACopyOfTheSelectedFilesReusedWhileTheyStay) {
  testing::TempDir dir;
  const std::string store = dir.MakeDir("store");
  ASSERT_EQ(chmod(store.c_str(), 0700), 0);
  absl::StatusOr<std::string> view = PrepareEtcView(store, getuid(), kBwrapMadeDirMode);
  ASSERT_TRUE(view.ok()) << view.status();
  struct stat st;
  ASSERT_EQ(stat(view->c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, kBwrapMadeDirMode);
  for (const std::string& file : SandboxEtcFiles()) {
    struct stat host;
    const std::string copy = *view + file.substr(4);
    if (stat(file.c_str(), &host) != 0) {
      EXPECT_NE(lstat(copy.c_str(), &st), 0) << copy;
      continue;
    }
    ASSERT_EQ(stat(copy.c_str(), &st), 0) << copy;
    EXPECT_EQ(st.st_mode & 0777, host.st_mode & 0777) << copy;
    // A copy, never the host's own file.
    EXPECT_FALSE(st.st_dev == host.st_dev && st.st_ino == host.st_ino) << copy;
    if (S_ISREG(host.st_mode)) {
      EXPECT_EQ(testing::ReadFile(copy), testing::ReadFile(file));
    }
  }
  // Reused: the same copy, the record untouched.
  const std::string current = testing::ReadFile(store + "/etc-view/current");
  absl::StatusOr<std::string> again = PrepareEtcView(store, getuid(), kBwrapMadeDirMode);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *view);
  EXPECT_EQ(testing::ReadFile(store + "/etc-view/current"), current);
  // A record that no longer describes the host (here: edited) makes a new one.
  dir.Write("store/etc-view/current", current + "F\t/etc/passwd\t0\t0\t0\t0\t0.0\t0.0\n", 0600);
  absl::StatusOr<std::string> rebuilt = PrepareEtcView(store, getuid(), kBwrapMadeDirMode);
  ASSERT_TRUE(rebuilt.ok());
  EXPECT_EQ(testing::ReadFile(store + "/etc-view/current"), current);
  // The view directory must be the caller's private one.
  ASSERT_EQ(chmod((store + "/etc-view").c_str(), 0755), 0);
  EXPECT_EQ(ErrorCode(PrepareEtcView(store, getuid(), kBwrapMadeDirMode).status()),
            "etc-view-failed");
}

TEST(ProbeCacheTest, TheKeyNamesWhatDecidesTheProbe) {
  EXPECT_EQ(BwrapProbeKey("", getuid()), "");
  EXPECT_EQ(BwrapProbeKey("/nonexistent/bwrap", getuid()), "");
  const std::string key = BwrapProbeKey("/bin/sh", getuid());
  EXPECT_EQ(key.rfind("/bin/sh|", 0), 0u);
  EXPECT_NE(key, BwrapProbeKey("/bin/sh", getuid() + 1));
  EXPECT_NE(key, BwrapProbeKey("/bin/ls", getuid()));
}

}  // namespace
}  // namespace np
