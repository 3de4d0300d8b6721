// The bubblewrap sandbox's system-call filter (launcher/runtime/bwrap_seccomp.h),
// attacked directly: a forked child loads the very BPF np-exec hands
// bubblewrap and then makes every refused call. As root (the test machines'
// operator) most of these calls would reach the kernel and get past its
// capability checks, so EPERM here is the filter's, not the kernel's. The
// arguments are harmless even if a call got through (null pointers, pid 0).
#include "launcher/runtime/bwrap_seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "launcher/runtime/seccomp_rules.h"

namespace np {
namespace {

// Loads the filter from `fd` the way bubblewrap does (no_new_privs, then
// SECCOMP_SET_MODE_FILTER); false on failure.
bool LoadFilter(int fd) {
  std::vector<char> bytes;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) bytes.insert(bytes.end(), buffer, buffer + n);
  if (bytes.empty() || bytes.size() % sizeof(sock_filter) != 0) return false;
  sock_fprog program{};
  program.len = static_cast<unsigned short>(bytes.size() / sizeof(sock_filter));
  program.filter = reinterpret_cast<sock_filter*>(bytes.data());
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return false;
  return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) == 0;
}

// Runs `body` in a forked child under the filter; the child writes its
// findings to a pipe, one line each, and they come back as a string ("" when
// all held). The child's stdin is /dev/null.
std::string UnderFilter(const std::function<std::string()>& body) {
  absl::StatusOr<int> fd = BuildSeccompFilterFd();
  if (!fd.ok()) return std::string(fd.status().message());
  int out[2];
  if (pipe(out) != 0) return "pipe";
  pid_t child = fork();
  if (child == 0) {
    close(out[0]);
    int null = open("/dev/null", O_RDONLY);
    dup2(null, 0);
    std::string report = LoadFilter(*fd) ? body() : "filter did not load\n";
    (void)!write(out[1], report.data(), report.size());
    _exit(0);
  }
  close(out[1]);
  close(*fd);
  std::string report;
  char buffer[4096];
  ssize_t n;
  while ((n = read(out[0], buffer, sizeof(buffer))) > 0) report.append(buffer, n);
  close(out[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    report += "child died (status " + std::to_string(status) + ")\n";
  }
  return report;
}

std::string Expect(const std::string& what, long rc, int err, int expected) {
  if (rc == -1 && err == expected) return "";
  return what + ": rc " + std::to_string(rc) + " errno " + std::to_string(err) + " (" +
         strerror(err) + "), wanted " + strerror(expected) + "\n";
}

TEST(BwrapSeccompTest, EveryRefusedCallFailsWithEperm) {
  std::string report = UnderFilter([] {
    std::string out;
    int known = 0;
    for (const std::string& name : SeccompBlockedCalls()) {
      int nr = seccomp_syscall_resolve_name(name.c_str());
      if (nr < 0) continue;  // Not a call on this architecture (vm86, stime).
      ++known;
      errno = 0;
      long rc = syscall(nr, 0, 0, 0, 0, 0, 0);
      out += Expect(name, rc, errno, EPERM);
    }
    if (known < 40) out += "only " + std::to_string(known) + " calls resolved\n";
    return out;
  });
  EXPECT_EQ(report, "");
}

// Only docker's personality values pass; the terminal's input, console and
// line-discipline ioctls fail on any descriptor, whatever the request's upper
// 32 bits (the kernel ignores them).
TEST(BwrapSeccompTest, PersonalityAndTerminalIoctlsAreNarrowed) {
  std::string report = UnderFilter([] {
    std::string out;
    for (unsigned long value : {0x0400000UL, 0x0040000UL, 0x0040008UL, 0x1UL, 0x100000000UL}) {
      errno = 0;
      long rc = syscall(SYS_personality, value);
      out += Expect("personality " + std::to_string(value), rc, errno, EPERM);
    }
    for (unsigned long value : SeccompAllowedPersonalities()) {
      errno = 0;
      long rc = syscall(SYS_personality, value);
      if (rc == -1 && errno == EPERM) out += "personality " + std::to_string(value) + " refused\n";
    }
    (void)syscall(SYS_personality, 0UL);
    int fds[2];
    if (pipe(fds) != 0) return std::string("pipe failed\n");
    for (unsigned long request : SeccompRefusedIoctls()) {
      for (unsigned long high : {0x0UL, 0x100000000UL, 0xffffffff00000000UL}) {
        int arg = 0;
        errno = 0;
        long rc = syscall(SYS_ioctl, fds[0], high | request, &arg);
        out += Expect("ioctl " + std::to_string(high | request), rc, errno, EPERM);
      }
    }
    // Other ioctls still reach the kernel (a pipe is no terminal).
    errno = 0;
    int arg = 0;
    long rc = syscall(SYS_ioctl, fds[0], TCGETS, &arg);
    out += Expect("ioctl TCGETS", rc, errno, ENOTTY);
    return out;
  });
  EXPECT_EQ(report, "");
}

TEST(BwrapSeccompTest, NamespacesCannotBeCreated) {
  std::string report = UnderFilter([] {
    std::string out;
    const unsigned long flags[] = {
        CLONE_NEWUSER,  CLONE_NEWNS, CLONE_NEWNET, CLONE_NEWPID, CLONE_NEWUSER | CLONE_NEWNS,
        CLONE_NEWCGROUP};
    for (unsigned long flag : flags) {
      errno = 0;
      long rc = syscall(SYS_unshare, flag);
      out += Expect("unshare " + std::to_string(flag), rc, errno, EPERM);
      errno = 0;
      rc = syscall(SYS_clone, flag | SIGCHLD, 0, 0, 0, 0);
      if (rc == 0) _exit(0);  // A child got through; the parent reports it.
      out += Expect("clone " + std::to_string(flag), rc, errno, EPERM);
    }
    // clone3's flags are out of the filter's reach: ENOSYS makes the C
    // library fall back to clone.
    errno = 0;
    long rc = syscall(SYS_clone3, 0, 0);
    out += Expect("clone3", rc, errno, ENOSYS);
    return out;
  });
  EXPECT_EQ(report, "");
}

// unshare(CLONE_NEWUSER) through int 0x80 (i386's unshare is 310).
long I386UnshareUser() {
  long ia32 = 0;
  asm volatile("int $0x80"
               : "=a"(ia32)
               : "a"(310L), "b"(static_cast<long>(CLONE_NEWUSER))
               : "memory");
  return ia32;
}

// The wait status of a forked child that loads the filter and runs `body`
// (and exits 0 if it returns); -1 when that could not be tried.
int StatusUnderFilter(const std::function<void()>& body) {
  absl::StatusOr<int> fd = BuildSeccompFilterFd();
  if (!fd.ok()) return -1;
  pid_t child = fork();
  if (child == 0) {
    if (!LoadFilter(*fd)) _exit(2);
    body();
    _exit(0);
  }
  close(*fd);
  int status = 0;
  return waitpid(child, &status, 0) == child ? status : -1;
}

// The filter lists only the native ABI, so a call through another kills the
// process.
TEST(BwrapSeccompTest, TheI386AbiIsNoWayAround) {
  const int status = StatusUnderFilter([] { _exit(I386UnshareUser() == 0 ? 0 : 3); });
  ASSERT_NE(status, -1);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGSYS);
}

// The same call from a second thread ends the whole process, not only that
// thread (the rest of the program does not run on without it).
TEST(BwrapSeccompTest, AnI386CallFromAnotherThreadEndsTheProcess) {
  const int status = StatusUnderFilter([] {
    std::thread caller([] { I386UnshareUser(); });
    caller.join();
  });
  ASSERT_NE(status, -1);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGSYS);
}

TEST(BwrapSeccompTest, OrdinaryCallsStillWork) {
  std::string report = UnderFilter([] {
    std::string out;
    if (syscall(SYS_unshare, 0) != 0) out += "unshare(0) refused\n";
    pid_t child = fork();  // clone without namespace flags
    if (child == 0) _exit(7);
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child || WEXITSTATUS(status) != 7) {
      out += "fork failed\n";
    }
    if (getpid() <= 0) out += "getpid\n";
    return out;
  });
  EXPECT_EQ(report, "");
}

// The personality rules are a cover of every refused value by "bit b set,
// bit c clear" comparisons (seccomp_rules.cc); checked here on values that
// stress it: every value of one or two bits, all ones but one or two bits,
// each of those with the allowed bits 3 and 17 added or taken away, values
// above 32 bits, and pseudo-random ones. Exactly docker's values pass.
TEST(BwrapSeccompTest, PersonalityPassesExactlyDockersValues) {
  std::vector<uint64_t> values;
  const uint64_t allowed_bits = 0x20008;
  auto add = [&values, allowed_bits](uint64_t v) {
    for (uint64_t extra : {uint64_t{0}, uint64_t{0x8}, uint64_t{0x20000}, allowed_bits}) {
      values.push_back(v | extra);
      values.push_back(v & ~extra);
      values.push_back((v | extra) + 0x100000000ULL);
    }
  };
  for (int a = 0; a < 32; ++a) {
    for (int b = a; b < 32; ++b) {
      const uint64_t bits = (uint64_t{1} << a) | (uint64_t{1} << b);
      add(bits);
      add(~bits & 0xffffffffULL);
    }
  }
  uint64_t seed = 0x9e3779b97f4a7c15ULL;
  for (int i = 0; i < 2000; ++i) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    add(seed >> 32);
  }
  const std::vector<unsigned long>& docker = SeccompAllowedPersonalities();
  std::string report = UnderFilter([&values, &docker] {
    std::string out;
    for (uint64_t value : values) {
      errno = 0;
      const long rc = syscall(SYS_personality, static_cast<unsigned long>(value));
      const bool refused = rc == -1 && errno == EPERM;
      if (!refused) (void)syscall(SYS_personality, 0UL);
      const bool allowed = std::find(docker.begin(), docker.end(), value) != docker.end();
      if (refused == allowed) {
        out += "personality " + std::to_string(value) + (refused ? " refused\n" : " passed\n");
      }
    }
    return out;
  });
  EXPECT_EQ(report, "");
  EXPECT_GT(values.size(), 10000u);
}

// np-exec carries the program libseccomp compiled at build time: it must be
// exactly what libseccomp compiles from the rules now, so a rule changed
// without the build noticing, or a generator that wrote something else, fails
// here. And the descriptor holds that program.
TEST(BwrapSeccompTest, TheBuiltInProgramIsWhatLibseccompCompiles) {
  absl::StatusOr<std::string> compiled = CompileSeccompFilter();
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  ASSERT_FALSE(compiled->empty());
  EXPECT_EQ(compiled->size() % sizeof(sock_filter), 0u);
  EXPECT_TRUE(SeccompFilterProgram() == *compiled)
      << SeccompFilterProgram().size() << " bytes built in, " << compiled->size() << " compiled";
  absl::StatusOr<int> fd = BuildSeccompFilterFd();
  ASSERT_TRUE(fd.ok()) << fd.status();
  std::string read_back(compiled->size() + 1, '\0');
  EXPECT_EQ(read(*fd, read_back.data(), read_back.size()), static_cast<ssize_t>(compiled->size()));
  read_back.resize(compiled->size());
  EXPECT_TRUE(read_back == *compiled);
  close(*fd);
}

TEST(BwrapSeccompTest, TheFilterIsSealed) {
  absl::StatusOr<int> fd = BuildSeccompFilterFd();
  ASSERT_TRUE(fd.ok()) << fd.status();
  EXPECT_EQ(write(*fd, "x", 1), -1);
  EXPECT_EQ(fcntl(*fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  close(*fd);
}

TEST(BwrapSeccompTest, AnArgvWithItsOwnFilterIsRefused) {
  std::vector<std::string> argv = {"bwrap", "--seccomp", "9", "--", "true"};
  EXPECT_EQ(AddSeccompArg(argv, 5).code(), absl::StatusCode::kInvalidArgument);
  argv = {"bwrap", "--add-seccomp-fd", "9", "--", "true"};
  EXPECT_FALSE(AddSeccompArg(argv, 5).ok());
  // After "--" it is the program's own argument.
  argv = {"bwrap", "--unshare-user", "--", "prog", "--seccomp"};
  ASSERT_TRUE(AddSeccompArg(argv, 5).ok());
  EXPECT_THAT(argv, ::testing::ElementsAre("bwrap", "--seccomp", "5", "--unshare-user", "--",
                                           "prog", "--seccomp"));
}

}  // namespace
}  // namespace np
