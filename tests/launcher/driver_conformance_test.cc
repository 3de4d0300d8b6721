// What every runtime driver must do (launcher/runtime/driver.h), checked on
// each row of core's runtime table, so a new runtime gets the same tests by
// adding its row and its driver. The cases need no engine: they are the
// contract's failure edges, where a driver must fail closed and say so in
// core's words (a probe reason, a coded error), never guess, never run.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "core/gate.h"
#include "core/runtime.h"
#include "gtest/gtest.h"
#include "launcher/runtime/driver.h"
#include "launcher/runtime/reaper.h"
#include "tests/launcher/fakes.h"
#include "tests/support/temp_dir.h"

namespace np {
namespace {

using ::np::testing::FileExists;
using ::np::testing::TempDir;

class DriverConformanceTest : public ::testing::TestWithParam<Runtime> {
 protected:
  void SetUp() override {
    tools_ = ::np::testing::MakeToolsDir(tmp_.Path("tools"), {"sh", "true"});
    host_.path = tools_;
    host_.home = tmp_.MakeDir("home");
    host_.pid = getpid();
    host_.uid = getuid();
    host_.gid = getgid();
    host_.engine_timeout_ms = 500;
    // No engine anywhere: a socket path where nothing is.
    host_.docker_host = "unix://" + tmp_.Path("no-engine.sock");
    host_.container_host = host_.docker_host;
    host_.envp = envp_;
  }

  Runtime runtime() const { return GetParam(); }
  const RuntimeTraits& traits() const { return TraitsOf(runtime()); }
  const RuntimeDriver& driver() const { return DriverFor(runtime()); }

  // A file named as the runtime in `dir` that, if anything ran it, would
  // leave the sentinel; `mode` decides whether it can run at all.
  std::string PlantRuntime(const std::string& dir, mode_t mode) {
    const std::string path = tmp_.Write(absl::StrCat(dir, "/", traits().name),
                                        "#!/bin/sh\ntouch '" + sentinel() + "'\n", mode);
    EXPECT_EQ(chmod(path.c_str(), mode), 0);
    return path;
  }
  std::string sentinel() const { return tmp_.Path("ran"); }

  TempDir tmp_;
  std::string tools_;
  char* envp_[1] = {nullptr};
  HostFacts host_;
};

// Not on PATH: the binary is not found, and the probe says so with core's
// reason, for this runtime.
TEST_P(DriverConformanceTest, NothingOnPathIsNotInstalled) {
  const Endpoint endpoint = driver().Resolve(host_);
  EXPECT_EQ(endpoint.bin, "");
  const ProbeResult probe = driver().Probe(host_, endpoint, ProbeDepth::kFull);
  EXPECT_FALSE(probe.available);
  EXPECT_EQ(probe.runtime, runtime());
  EXPECT_EQ(probe.reason, kReasonNotInstalled) << probe.detail;
  EXPECT_FALSE(FileExists(sentinel()));
}

// A match in a directory anyone can write is named, never used, and nothing
// of it runs, not even to ask its version.
TEST_P(DriverConformanceTest, AnUntrustedMatchIsNamedAndNeverRun) {
  const std::string open_dir = tmp_.MakeDir("open");
  ASSERT_EQ(chmod(open_dir.c_str(), 0777), 0);
  const std::string planted = PlantRuntime("open", 0755);
  host_.path = absl::StrCat(open_dir, ":", tools_);
  const Endpoint endpoint = driver().Resolve(host_);
  EXPECT_EQ(endpoint.bin, "");
  ASSERT_EQ(endpoint.untrusted.size(), 1u);
  EXPECT_TRUE(absl::StartsWith(endpoint.untrusted[0], planted)) << endpoint.untrusted[0];
  for (ProbeDepth depth : {ProbeDepth::kFull, ProbeDepth::kForPlan, ProbeDepth::kForRun}) {
    const ProbeResult probe = driver().Probe(host_, endpoint, depth);
    EXPECT_FALSE(probe.available);
    EXPECT_EQ(probe.reason, kReasonUntrusted) << probe.detail;
    EXPECT_TRUE(absl::StrContains(probe.detail, planted)) << probe.detail;
  }
  EXPECT_FALSE(FileExists(sentinel()));
}

// A binary np-exec found but cannot execute: the run is a coded error that
// says nothing ran, and nothing did.
TEST_P(DriverConformanceTest, ARuntimeThatCannotBeExecutedRunsNothing) {
  Endpoint endpoint;
  endpoint.bin = PlantRuntime("bin", 0644);
  endpoint.timeout_ms = 500;
  SpawnPlan plan;
  plan.runtime = runtime();
  plan.wrapped = true;
  plan.exec_path = endpoint.bin;
  plan.argv = {std::string(traits().name), "--", "true"};
  plan.container_name = "np-exec-conformance-" + std::to_string(getpid());
  absl::StatusOr<RunOutcome> outcome = driver().Run(plan, endpoint, host_, {});
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(ErrorCode(outcome.status()), "isolation-container-unavailable") << outcome.status();
  EXPECT_TRUE(absl::StrContains(outcome.status().message(), "nothing ran"));
  EXPECT_FALSE(FileExists(sentinel()));
  // Nothing of the run is left as a child of this process.
  int status = 0;
  EXPECT_EQ(waitpid(-1, &status, WNOHANG), -1);
}

// Whether an image is there is never guessed: without an engine to ask (or
// for a runtime without images) the answer is "cannot tell".
TEST_P(DriverConformanceTest, WithoutAnEngineAnImageIsNeitherPresentNorMissing) {
  Endpoint endpoint = driver().Resolve(host_);
  endpoint.socket = tmp_.Path("no-engine.sock");
  endpoint.timeout_ms = 500;
  EXPECT_EQ(driver().ImagePresent("np-test:local", endpoint, host_), std::nullopt);
  EXPECT_EQ(driver().InspectImageUser(host_, endpoint, "np-test:local"), std::nullopt);
  SpawnImage told{"stale", std::vector<std::string>{"/stale"}};
  const ProbeResult probe = driver().ProbeForSpawn(host_, endpoint, "np-test:local", &told);
  EXPECT_FALSE(probe.available);
  EXPECT_EQ(told.id, "");
  EXPECT_EQ(told.volumes, std::nullopt);
}

// Without an engine there is no engine state to add, and cleaning up a run
// that never was returns, runs nothing and leaves no process.
TEST_P(DriverConformanceTest, CleanupAndEngineStateWithoutAnEngineAreHarmless) {
  Endpoint endpoint;
  endpoint.socket = tmp_.Path("no-engine.sock");
  endpoint.bin = PlantRuntime("bin", 0644);
  endpoint.timeout_ms = 500;
  EXPECT_TRUE(driver().EngineStatePaths(endpoint).empty());
  driver().Cleanup(endpoint, "np-exec-conformance-none", {"np-exec-conformance-none-env-0"}, host_);
  EXPECT_FALSE(FileExists(sentinel()));
  int status = 0;
  EXPECT_EQ(waitpid(-1, &status, WNOHANG), -1);
}

// A runtime whose containers can outlive their client labels each with its
// owner, this np-exec, which the reaper sees alive; one whose sandbox dies
// with np-exec has no owner to name.
TEST_P(DriverConformanceTest, TheOwnerLabelNamesThisProcessWhereAContainerCanOutliveIt) {
  const std::string label = driver().OwnerLabel(host_);
  if (!traits().named_containers) {
    EXPECT_EQ(label, "");
    return;
  }
  EXPECT_TRUE(absl::StartsWith(label, absl::StrCat(getpid(), ":"))) << label;
  EXPECT_TRUE(OwnerAlive(label)) << label;
  EXPECT_FALSE(OwnerAlive(absl::StrCat(getpid(), ":1"))) << "another start time is another process";
}

// Every row has a driver of its own, and what it reports names its row.
TEST_P(DriverConformanceTest, EachRowHasItsOwnDriver) {
  for (const RuntimeTraits& other : AllRuntimes()) {
    if (other.runtime != runtime()) {
      EXPECT_NE(&DriverFor(other.runtime), &driver()) << other.name;
    }
  }
  EXPECT_EQ(ProbeRuntime(runtime(), host_, ProbeDepth::kFull).runtime, runtime());
  EXPECT_FALSE(traits().name.empty());
}

std::vector<Runtime> EveryRuntime() {
  std::vector<Runtime> all;
  for (const RuntimeTraits& row : AllRuntimes()) all.push_back(row.runtime);
  return all;
}

std::string RowName(const ::testing::TestParamInfo<Runtime>& row) {
  return std::string(TraitsOf(row.param).name);
}

INSTANTIATE_TEST_SUITE_P(EveryRow, DriverConformanceTest, ::testing::ValuesIn(EveryRuntime()),
                         RowName);

}  // namespace
}  // namespace np
