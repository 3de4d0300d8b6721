// Issue 17 items 5 and 7 on real runtimes: `status` gates on everything a
// spawn needs (a missing image with pull "never" is isolation-image-missing
// and exit 1, as from doctor, on docker and podman), and the shim verbs
// (shims list, which, shims remove) against a real container tier on docker,
// podman and bubblewrap: a shim with a real program behind it runs inside the
// sandbox, one with nothing behind it is flagged and exits 127.
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"

namespace np::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr char kMissingImage[] = "np-no-such-image:e2e-status";

class GateTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    NP_REQUIRE_RUNTIME(runtime());
    project_ = dir_.MakeDir("project");
  }

  const std::string& runtime() const { return GetParam(); }

  RunResult Np(const std::vector<std::string>& args, const std::vector<std::string>& extra = {},
               const std::string& argv0 = "") {
    std::vector<std::string> argv = {argv0.empty() ? NpExecBin() : argv0};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<std::string> env = RuntimeEnv();
    for (const std::string& entry : extra) {
      const size_t eq = entry.find('=');
      SetEnv(env, entry.substr(0, eq), entry.substr(eq + 1));
    }
    return RunProcess(argv, Options(env, 120000, project_));
  }

  TempDir dir_;
  std::string project_;
};

// Docker and podman: bubblewrap has no image.
class StatusImageGateTest : public GateTest {};

TEST_P(StatusImageGateTest, AMissingImageFailsStatusAsItFailsDoctorAndEverySpawn) {
  ASSERT_NE(RunRuntime(runtime(), {"image", "inspect", kMissingImage}).exit_code, 0);
  MakeProject(project_, ContainerConfig(runtime(), kMissingImage));

  RunResult status = Np({"status"});
  EXPECT_EQ(status.exit_code, 1) << status.out << status.err;
  EXPECT_THAT(status.err, StartsWith("np-exec: error: "));
  EXPECT_THAT(status.err, HasSubstr(kMissingImage));
  EXPECT_THAT(status.err, HasSubstr("(isolation-image-missing)"));
  EXPECT_THAT(status.out, HasSubstr("image: " + std::string(kMissingImage) + " (missing)"));

  // --json: the report on stdout, the reference's envelope on stderr.
  RunResult json = Np({"status", "--json"});
  EXPECT_EQ(json.exit_code, 1);
  nlohmann::json out = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_TRUE(out.is_object()) << json.out;
  EXPECT_EQ(out["runtime"]["available"], true) << "the runtime itself is fine";
  EXPECT_EQ(out["image"]["reference"], kMissingImage);
  EXPECT_EQ(out["image"]["present"], false);
  nlohmann::json envelope = nlohmann::json::parse(json.err, nullptr, false);
  ASSERT_TRUE(envelope.is_object()) << json.err;
  EXPECT_EQ(envelope["code"], "isolation-image-missing");
  EXPECT_EQ(envelope["details"]["image"], kMissingImage);

  RunResult doctor = Np({"doctor", "--json"});
  EXPECT_EQ(doctor.exit_code, 1);
  nlohmann::json report = nlohmann::json::parse(doctor.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << doctor.out;
  EXPECT_EQ(report["ok"], false);
  EXPECT_THAT(report["problems"].dump(), HasSubstr(kMissingImage));

  RunResult spawn = Np({"--", "true"});
  EXPECT_EQ(spawn.exit_code, 125);
  EXPECT_THAT(spawn.err, HasSubstr("(isolation-image-missing)"));
  EXPECT_NE(RunRuntime(runtime(), {"image", "inspect", kMissingImage}).exit_code, 0)
      << "nothing was pulled";
}

TEST_P(StatusImageGateTest, APresentImagePassesTheGate) {
  MakeProject(project_, ContainerConfig(runtime(), "np-test:local"));
  RunResult status = Np({"status", "--json"});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_EQ(status.err, "");
  nlohmann::json out = nlohmann::json::parse(status.out, nullptr, false);
  ASSERT_TRUE(out.is_object()) << status.out;
  EXPECT_EQ(out["image"]["present"], true);
  EXPECT_EQ(Np({"--", "true"}).exit_code, 0);
}

// With pull "missing" a spawn pulls the image (trusted: it widens the tier):
// status does not refuse for it, doctor warns.
TEST_P(StatusImageGateTest, PullMissingIsNotRefusedByTheGate) {
  MakeProject(project_, ContainerConfig(runtime(), kMissingImage, {{"pull", "missing"}}));
  RunResult status = Np({"status", "--json"});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  nlohmann::json report = nlohmann::json::parse(Np({"doctor", "--json"}).out, nullptr, false);
  ASSERT_TRUE(report.is_object());
  EXPECT_THAT(report["warnings"].dump(), HasSubstr("not present locally"));
}

INSTANTIATE_TEST_SUITE_P(Runtimes, StatusImageGateTest, ::testing::Values("docker", "podman"),
                         RuntimeName);

// shims list, which and shims remove with a real tier behind them.
class ShimVerbsTest : public GateTest {
 protected:
  void SetUp() override {
    GateTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    MakeProject(project_, ContainerConfig(runtime(), "np-test:local"));
    shims_ = dir_.Path("shims");
    RunResult installed = Np({"shims", "install", shims_, "sh", "np-e2e-nothing-behind"});
    ASSERT_EQ(installed.exit_code, 0) << installed.err;
    const char* path = getenv("PATH");
    path_ = "PATH=" + shims_ + ":" + (path != nullptr ? path : "/usr/bin:/bin");
  }

  std::string shims_, path_;
};

TEST_P(ShimVerbsTest, ListWhichAndASpawnThroughTheShimOnTheContainerTier) {
  RunResult list = Np({"shims", "list", "--json"}, {path_});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  nlohmann::json listed = nlohmann::json::parse(list.out, nullptr, false);
  ASSERT_TRUE(listed.is_object()) << list.out;
  // The first PATH entry holding shims is the test's (the machine may have more).
  ASSERT_GE(listed["dirs"].size(), 1u) << list.out;
  EXPECT_EQ(listed["dirs"][0]["dir"], shims_);
  const nlohmann::json entries = listed["dirs"][0]["shims"];
  ASSERT_EQ(entries.size(), 2u) << list.out;
  EXPECT_EQ(entries[0]["name"], "np-e2e-nothing-behind");
  EXPECT_EQ(entries[0]["program"], nullptr);
  EXPECT_EQ(entries[0]["error"], "shim-no-program");
  EXPECT_EQ(entries[1]["name"], "sh");
  EXPECT_THAT(entries[1]["program"].get<std::string>(), ::testing::EndsWith("/sh"));

  RunResult text = Np({"shims", "list"}, {path_});
  // On docker and podman the program comes from the image: the host lacking
  // it is no fault, and the list says where it runs.
  if (runtime() == "bwrap") {
    EXPECT_THAT(text.out, HasSubstr("np-e2e-nothing-behind -> nothing real behind it"));
    EXPECT_FALSE(entries[0].contains("runs_in_image"));
  } else {
    EXPECT_THAT(text.out, HasSubstr("np-e2e-nothing-behind -> not on the host's PATH; in this "
                                    "project it runs in the image np-test:local"));
    EXPECT_EQ(entries[0]["runs_in_image"], "np-test:local");
  }
  EXPECT_THAT(text.out, Not(HasSubstr("{")));

  RunResult which = Np({"which", "sh", "--json"}, {path_});
  ASSERT_EQ(which.exit_code, 0) << which.err;
  nlohmann::json w = nlohmann::json::parse(which.out, nullptr, false);
  ASSERT_TRUE(w.is_object()) << which.out;
  EXPECT_EQ(w["shim"]["path"], shims_ + "/sh");
  EXPECT_EQ(w["shim"]["path_entry"], shims_);
  EXPECT_EQ(w["program"], entries[1]["program"]);
  EXPECT_EQ(w["tier"], "container");
  EXPECT_EQ(w["effective_from"], "config");
  EXPECT_EQ(w["runtime"], runtime());
  EXPECT_EQ(w["image"],
            runtime() == "bwrap" ? nlohmann::json(nullptr) : nlohmann::json("np-test:local"));
  RunResult which_text = Np({"which", "sh"}, {path_});
  EXPECT_THAT(which_text.out, HasSubstr("np-exec shim " + shims_ + "/sh"));
  EXPECT_THAT(which_text.out, HasSubstr("tier container (from config)"));

  // The shim's spawn runs in the sandbox, where HOME is np-exec's own.
  RunResult spawn = Np({"-c", "echo \"home=$HOME\""}, {path_}, shims_ + "/sh");
  EXPECT_EQ(spawn.exit_code, 0) << spawn.err;
  EXPECT_THAT(spawn.out, HasSubstr("home=/home/np-exec"));

  // doctor flags the shim with nothing behind it where the host runs it
  // (bubblewrap), in plain sentences; on docker and podman it says where it
  // runs instead, and warns of nothing.
  RunResult doctor = Np({"doctor"}, {path_});
  EXPECT_THAT(doctor.out, HasSubstr("shims on PATH in " + shims_ + ": np-e2e-nothing-behind, sh"));
  if (runtime() == "bwrap") {
    EXPECT_THAT(doctor.out, HasSubstr("warning: shim " + shims_ + "/np-e2e-nothing-behind"));
  } else {
    EXPECT_THAT(doctor.out, Not(HasSubstr("warning: shim")));
    EXPECT_THAT(doctor.out, Not(HasSubstr("exits 127")));
    EXPECT_THAT(doctor.out, HasSubstr("shim np-e2e-nothing-behind: not on the host's PATH; in this "
                                      "project it runs in the image np-test:local"));
  }
  EXPECT_THAT(doctor.out, Not(HasSubstr("[{")));
}

// On direct, a shim with nothing real behind it is 127 (not 125), and which
// says so; shims remove takes it away and refuses what is not a shim.
TEST_P(ShimVerbsTest, NothingBehindIs127AndRemoveTakesOnlyShims) {
  MakeProject(project_, R"({"isolation":{"tier":"direct"}})");
  RunResult spawn = Np({"x"}, {path_}, shims_ + "/np-e2e-nothing-behind");
  EXPECT_EQ(spawn.exit_code, 127) << spawn.err;
  EXPECT_THAT(spawn.err, HasSubstr("(shim-no-program)"));
  RunResult which = Np({"which", "np-e2e-nothing-behind"}, {path_});
  EXPECT_EQ(which.exit_code, 1);
  EXPECT_THAT(which.out, HasSubstr("real program on the host: none (shim-no-program)"));
  EXPECT_THAT(which.err, HasSubstr("(shim-no-program)"));

  dir_.Write("shims/notes.txt", "mine\n");
  RunResult refused = Np({"shims", "remove", shims_, "np-e2e-nothing-behind", "notes.txt"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, HasSubstr("(shim-not-a-shim)"));
  EXPECT_TRUE(FileExists(shims_ + "/notes.txt"));
  EXPECT_EQ(access((shims_ + "/np-e2e-nothing-behind").c_str(), F_OK), 0)
      << "nothing is removed when one name is refused";

  RunResult removed = Np({"shims", "remove", shims_, "np-e2e-nothing-behind"});
  EXPECT_EQ(removed.exit_code, 0) << removed.err;
  EXPECT_NE(access((shims_ + "/np-e2e-nothing-behind").c_str(), F_OK), 0);
  EXPECT_TRUE(FileExists(shims_ + "/sh"));
  RunResult again = Np({"shims", "remove", shims_, "np-e2e-nothing-behind"});
  EXPECT_THAT(again.err, HasSubstr("(shim-not-found)"));
}

INSTANTIATE_TEST_SUITE_P(Runtimes, ShimVerbsTest, ::testing::Values("docker", "podman", "bwrap"),
                         RuntimeName);

}  // namespace
}  // namespace np::testing
