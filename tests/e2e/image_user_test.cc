// Issue 26, item 1: a project file chose `"user": "image"`, and the images
// here (np-test, np-node, any busybox import) run as root, so the program ran
// as uid 0: it read root-only files through read-only mounts and left
// setuid-root binaries in the project. Now a user the project chose is
// resolved in the image before anything runs (core/container_user.h), and
// root however spelled ("image" of a root image, a name that is uid 0 in the
// image's passwd, a bare uid without a group, which the engines run as gid 0)
// is refused on docker and podman: no file written on the host, no container
// left, no run in the audit log. A non-root image user still runs as itself,
// and the operator's own file may still ask for root. bubblewrap has no
// image: "image" there is refused, as any user but the caller's is.
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"

namespace np::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class ImageUserTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    NP_REQUIRE_RUNTIME(runtime());
    project_ = dir_.MakeDir("project");
    state_ = dir_.MakeDir("state");
    env_ = RuntimeEnv({"XDG_STATE_HOME=" + state_, "XDG_CONFIG_HOME=" + dir_.Path("operator")});
  }

  void TearDown() override {
    for (const std::string& image : images_) (void)RunRuntime(runtime(), {"rmi", "-f", image});
  }

  const std::string& runtime() const { return GetParam(); }

  // An image of np-test:local whose config says USER `user`, after `setup`
  // ran in it (as root); removed when the test ends.
  std::string ImageWithUser(const std::string& user, const std::string& setup) {
    const std::string tag = absl::StrCat("np-exec-test-user:", getpid(), "-", images_.size());
    const std::string name = absl::StrCat("np-exec-test-user-", getpid(), "-", images_.size());
    RunResult made = RunRuntime(runtime(), {"run", "--name", name, "--network", "none",
                                            "np-test:local", "sh", "-c", setup});
    EXPECT_EQ(made.exit_code, 0) << made.err;
    RunResult committed = RunRuntime(runtime(), {"commit", "--change", "USER " + user, name, tag});
    EXPECT_EQ(committed.exit_code, 0) << committed.err;
    (void)RunRuntime(runtime(), {"rm", "-f", name});
    images_.push_back(tag);
    return tag;
  }

  // The project's config, trusted by the operator: every key here widens.
  void Configure(const nlohmann::json& container, const std::string& image = "np-test:local") {
    MakeProject(project_, ContainerConfig(runtime(), image, container), /*trust=*/false);
    RunResult trusted = Np({"trust"});
    ASSERT_EQ(trusted.exit_code, 0) << trusted.err;
    trust_out_ = trusted.out;
  }

  RunResult Np(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {NpExecBin()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, Options(env_, 120000, project_));
  }

  // The program would leave a setuid copy of a shell and its ids in the
  // project; refused, none of it exists and nothing ran.
  int RunsInAuditLog() {
    int bad = 0;
    int runs = 0;
    for (const nlohmann::json& line : ReadAuditLog(project_, &bad)) {
      if (line.value("decision", "") == "run") ++runs;
    }
    EXPECT_EQ(bad, 0);
    return runs;
  }

  void ExpectRefusedAsRoot(const std::string& what) {
    const int before = CountContainers(runtime());
    const int runs_before = RunsInAuditLog();
    RunResult r = Np({"--", "sh", "-c", "id > ids; cp /bin/sh suid-sh; chmod 4755 suid-sh"});
    EXPECT_EQ(r.exit_code, 125) << what << ": " << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr("isolation-user-root-needs-operator")) << what;
    EXPECT_FALSE(FileExists(project_ + "/ids")) << what << ": " << ReadFile(project_ + "/ids");
    EXPECT_FALSE(FileExists(project_ + "/suid-sh")) << what;
    EXPECT_EQ(RunsInAuditLog(), runs_before) << what;
    // No container of this spawn was left (and, where nothing else runs, none
    // was made at all); one of an earlier test may end meanwhile (a warm
    // sandbox's idle time, NP_E2E_WARM).
    const int after = CountContainers(runtime());
    if (InCi()) {
      EXPECT_LE(after, before) << what;
    }
    // wrap prints no plan for it either.
    RunResult wrap = Np({"wrap", "--", "true"});
    EXPECT_NE(wrap.exit_code, 0) << what << ": " << wrap.out;
    EXPECT_THAT(wrap.err, HasSubstr("isolation-user-root-needs-operator")) << what;
  }

  TempDir dir_;
  std::string project_, state_, trust_out_;
  std::vector<std::string> env_;
  std::vector<std::string> images_;
};

using ImageRuntimeUserTest = ImageUserTest;

TEST_P(ImageRuntimeUserTest, TheImageUserOfARootImageIsRefused) {
  // np-test:local's config has no User: root.
  Configure({{"user", "image"}});
  ExpectRefusedAsRoot("np-test:local as \"image\"");
}

TEST_P(ImageRuntimeUserTest, ANameThatIsRootInTheImageIsRefused) {
  const std::string image =
      ImageWithUser("toor", "echo 'toor:x:0:0:root:/root:/bin/sh' >> /etc/passwd");
  Configure({{"user", "image"}}, image);
  ExpectRefusedAsRoot("USER toor, uid 0 in the image, as \"image\"");
  Configure({{"user", "toor"}}, image);
  ExpectRefusedAsRoot("\"toor\" named by the project");
}

TEST_P(ImageRuntimeUserTest, AUidWithoutAGroupRunsAsGidZeroAndIsRefused) {
  // No passwd entry for 1500 in np-test: the engines run it as gid 0.
  Configure({{"user", "1500"}});
  ExpectRefusedAsRoot("\"1500\"");
}

TEST_P(ImageRuntimeUserTest, AGroupThatIsRootInTheImageIsRefused) {
  const std::string image = ImageWithUser(
      "app",
      "echo 'app:x:1234:1234::/:/bin/sh' >> /etc/passwd &&"
      " echo 'app:x:1234:' >> /etc/group && sed -i 's/^root:x:0:.*/&,app/' /etc/group");
  Configure({{"user", "image"}}, image);
  ExpectRefusedAsRoot("USER app, a member of group root");
}

TEST_P(ImageRuntimeUserTest, ANonRootImageUserRunsAsItself) {
  const std::string image = ImageWithUser("1234:1234", "true");
  Configure({{"user", "image"}}, image);
  EXPECT_THAT(trust_out_, HasSubstr("1234:1234")) << trust_out_;
  RunResult r = Np({"--", "sh", "-c", "id -u; id -g"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "1234\n1234\n");
  int bad = 0;
  bool recorded = false;
  for (const nlohmann::json& line : ReadAuditLog(project_, &bad)) {
    if (line.value("decision", "") == "run") recorded = line.value("user", "") == "1234:1234";
  }
  EXPECT_TRUE(recorded);
}

// The operator's own file may ask for the image's user, root included; a
// project that then picks the image picks who runs, and is checked as if it
// had named the user.
TEST_P(ImageRuntimeUserTest, TheOperatorsFileMayStillAskForTheImagesRoot) {
  dir_.Write("operator/nubos-pilot/config.json",
             R"({"isolation": {"container": {"user": "image", "image": "np-test:local"}}})");
  const nlohmann::json project = {
      {"isolation", {{"tier", "container"}, {"container", {{"runtime", runtime()}}}}}};
  MakeProject(project_, project.dump(), /*trust=*/false);
  RunResult r = Np({"--", "id", "-u"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "0\n");
  MakeProject(project_, ContainerConfig(runtime(), "np-test:local"), /*trust=*/false);
  ExpectRefusedAsRoot("the operator's \"image\" with the project's image");
}

using BwrapImageUserTest = ImageUserTest;

// bubblewrap has no image and maps only the caller's uid and gid: "image"
// names nothing there, and is refused before anything runs.
TEST_P(BwrapImageUserTest, ImageMeansNothingOnBubblewrapAndIsRefused) {
  MakeProject(project_, ContainerConfig(runtime(), "", {{"user", "image"}}), /*trust=*/false);
  ASSERT_EQ(Np({"trust"}).exit_code, 0);
  RunResult r = Np({"--", "sh", "-c", "id > ids"});
  EXPECT_EQ(r.exit_code, 125) << r.err;
  EXPECT_THAT(r.err, HasSubstr("isolation-bwrap-unsupported"));
  EXPECT_THAT(r.err, HasSubstr("no image"));
  EXPECT_FALSE(FileExists(project_ + "/ids"));
  int bad = 0;
  for (const nlohmann::json& line : ReadAuditLog(project_, &bad)) {
    EXPECT_NE(line.value("decision", ""), "run") << line.dump();
  }
}

INSTANTIATE_TEST_SUITE_P(Runtimes, ImageRuntimeUserTest, ::testing::Values("docker", "podman"),
                         RuntimeName);
INSTANTIATE_TEST_SUITE_P(Runtimes, BwrapImageUserTest, ::testing::Values("bwrap"), RuntimeName);

}  // namespace
}  // namespace np::testing
