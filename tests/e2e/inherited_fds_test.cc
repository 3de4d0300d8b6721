// Issue 15, item 4: the sandbox gets only 0, 1 and 2. A caller (a host CLI,
// an agent's shell) that leaves a descriptor open, here a directory
// descriptor of the host's `/`, must not hand it to the program inside: on
// bubblewrap an inherited `7</` was the host's whole filesystem, read and
// write. Run on docker, podman and bubblewrap, checked from inside, and the
// host's file checked afterwards.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"

namespace np::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class InheritedFdsTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    NP_REQUIRE_RUNTIME(GetParam());
    project_ = dir_.MakeDir("project");
    MakeProject(project_, ContainerConfig(GetParam(), "np-test:local"));
    outside_ = dir_.Write("outside/secret.txt", "host-secret\n");
  }
  TempDir dir_;
  std::string project_;
  std::string outside_;
};

TEST_P(InheritedFdsTest, OnlyStdioReachesTheSandbox) {
  // The caller opens fd 7 on the host's / and fd 8 on a host file, then
  // execs np-exec; inside, the program lists its descriptors and tries to
  // write through fd 7 to the host.
  const std::string outside_dir = outside_.substr(0, outside_.rfind('/'));
  const std::string inner = "ls /proc/self/fd; echo pwned >/proc/self/fd/7" + outside_dir +
                            "/planted 2>/dev/null;"
                            " cat /proc/self/fd/8 2>/dev/null; exit 0";
  const std::string outer = "exec 7</ 8<" + outside_ + "; exec \"$NP\" -- sh -c '" + inner + "'";
  std::vector<std::string> env = RuntimeEnv({"NP=" + NpExecBin()});
  RunResult r = RunProcess({"/bin/sh", "-c", outer}, Options(env, 120000, project_));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream listed(r.out);
  std::string fd;
  std::vector<std::string> fds;
  while (listed >> fd) fds.push_back(fd);
  // 0, 1, 2 and ls's own descriptor of /proc/self/fd (the lowest free one).
  EXPECT_THAT(fds, ::testing::ElementsAre("0", "1", "2", "3")) << r.out;
  EXPECT_THAT(r.out, Not(HasSubstr("host-secret")));
  struct stat st;
  EXPECT_NE(stat((outside_dir + "/planted").c_str(), &st), 0) << "a file was planted on the host";
}

INSTANTIATE_TEST_SUITE_P(Runtimes, InheritedFdsTest, ::testing::Values("docker", "podman", "bwrap"),
                         RuntimeName);

}  // namespace
}  // namespace np::testing
