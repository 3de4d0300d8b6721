// Issue 15, item 5: bubblewrap creates a missing mount point while the host's
// root is still reachable (at /oldroot) and follows links on the way, so a
// repository symlink in the project and a mount target under it made it
// create directories and files on the host, outside the project. Such a
// target is refused (125, isolation-mount-target-symlink), nothing runs, and
// the host directory the link points to stays empty.
#include <dirent.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"

namespace np::testing {
namespace {

using ::testing::HasSubstr;

// Entries of `dir` other than . and ..; -1 when it cannot be read.
int EntryCount(const std::string& dir) {
  DIR* handle = opendir(dir.c_str());
  if (handle == nullptr) return -1;
  int count = 0;
  while (dirent* entry = readdir(handle)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") ++count;
  }
  closedir(handle);
  return count;
}

class BwrapMountTargetTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    NP_REQUIRE_RUNTIME("bwrap");
    project_ = dir_.MakeDir("project");
    outside_ = dir_.MakeDir("outside");
    data_ = dir_.MakeDir("data");
    dir_.Write("data/file.txt", "data\n");
    std::string link = GetParam();
    if (link == "oldroot") {
      // Up out of the project, out of bubblewrap's /newroot, then into the
      // host's root through /oldroot (with bare bubblewrap this creates
      // outside/a/mnt on the host).
      link = "../";
      for (char c : project_) {
        if (c == '/') link += "../";
      }
      link += "oldroot" + outside_;
    } else {
      link = "../outside";
    }
    ASSERT_EQ(symlink(link.c_str(), (project_ + "/x").c_str()), 0);
  }
  TempDir dir_;
  std::string project_, outside_, data_;
};

TEST_P(BwrapMountTargetTest, ATargetThroughAProjectLinkIsRefused) {
  nlohmann::json mount = {{"source", data_}, {"target", project_ + "/x/a/mnt"}, {"mode", "ro"}};
  MakeProject(project_, ContainerConfig("bwrap", "", {{"mounts", {mount}}}));
  const std::string ran = dir_.Path("program-ran");
  RunResult r = RunProcess({NpExecBin(), "--", "/usr/bin/touch", ran},
                           Options(RuntimeEnv(), 120000, project_));
  EXPECT_EQ(r.exit_code, 125) << r.err;
  EXPECT_THAT(r.err, HasSubstr("isolation-mount-target-symlink"));
  EXPECT_EQ(EntryCount(outside_), 0) << "bubblewrap created something outside the project";
  EXPECT_EQ(access(ran.c_str(), F_OK), -1) << "the program ran";
  // The same mount at a target without links runs.
  mount["target"] = project_ + "/real/mnt";
  MakeProject(project_, ContainerConfig("bwrap", "", {{"mounts", {mount}}}));
  RunResult fine = RunProcess({NpExecBin(), "--", "cat", project_ + "/real/mnt/file.txt"},
                              Options(RuntimeEnv(), 120000, project_));
  EXPECT_EQ(fine.exit_code, 0) << fine.err;
  EXPECT_EQ(fine.out, "data\n");
  EXPECT_EQ(EntryCount(outside_), 0);
}

INSTANTIATE_TEST_SUITE_P(Links, BwrapMountTargetTest, ::testing::Values("relative", "oldroot"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           return param.param;
                         });

}  // namespace
}  // namespace np::testing
