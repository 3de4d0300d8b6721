// Pinned mount sources in both argv builders (core/mount_pins.h, issue 15
// item 2): bubblewrap binds the launcher's descriptors; docker, podman and a
// printed plan put np-exec's mount-check in front of the program with each
// pinned target's identity.
#include "core/mount_pins.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/bwrap_argv.h"
#include "core/container_argv.h"
#include "core/errors.h"
#include "core/protected_paths.h"
#include "gtest/gtest.h"
#include "tests/core/argv_util.h"

namespace np {
namespace {

using ::np::testing::Contains;
using ::np::testing::HasSequence;
using ::np::testing::IndexOf;
using ::np::testing::IndexOfSequence;

const std::vector<RootEntry> kMergedUsr = {{"/bin", "usr/bin"}, {"/lib", "usr/lib"}};

ContainerSpawn Spawn() {
  ContainerSpawn spawn;
  spawn.project_root = "/home/u/proj";
  spawn.cwd = "/home/u/proj";
  spawn.uid = 1000;
  spawn.gid = 1000;
  spawn.name = "np-exec-1";
  spawn.program = {"node", "agent.js"};
  spawn.self_binary = "/usr/bin/np-exec";
  ProtectedBind hooks;
  hooks.relative = ".git/hooks";
  hooks.directory = true;
  ProtectedBind vscode;
  vscode.relative = ".vscode";
  vscode.directory = true;
  vscode.placeholder = true;
  spawn.protected_binds = {hooks, vscode};
  return spawn;
}

// A pin that hands out descriptors 10, 11, ... (or none) and records what it
// was asked for.
struct FakePins {
  bool descriptors = true;
  std::map<std::string, SourcePin> asked;
  PinSourceFn Fn() {
    return [this](const std::string& source) -> absl::StatusOr<SourcePin> {
      if (source == "/refused") {
        return MakeError(absl::StatusCode::kFailedPrecondition, "isolation-mount-source-unstable",
                         "swapped");
      }
      SourcePin pin;
      pin.fd = descriptors ? 10 + static_cast<int>(asked.size()) : -1;
      pin.dev = 7;
      pin.ino = 100 + asked.size();
      asked.emplace(source, pin);
      return pin;
    };
  }
};

const std::vector<ValidatedMount> kMounts = {{"/data", "/d", false}};

TEST(MountPinsTest, BubblewrapBindsThePinnedDescriptors) {
  ContainerConfig config;
  config.runtime = Runtime::kBwrap;
  ContainerSpawn spawn = Spawn();
  FakePins pins;
  spawn.pin = pins.Fn();
  absl::StatusOr<std::vector<std::string>> argv =
      BuildBwrapArgv(config, kMounts, spawn, kMergedUsr);
  ASSERT_TRUE(argv.ok()) << argv.status();
  const std::string project_fd = absl::StrCat(pins.asked.at("/home/u/proj").fd);
  EXPECT_TRUE(HasSequence(*argv, {"--bind-fd", project_fd, "/home/u/proj"}));
  EXPECT_TRUE(
      HasSequence(*argv, {"--ro-bind-fd", absl::StrCat(pins.asked.at("/home/u/proj/.git/hooks").fd),
                          "/home/u/proj/.git/hooks"}));
  EXPECT_TRUE(HasSequence(*argv, {"--ro-bind-fd", absl::StrCat(pins.asked.at("/data").fd), "/d"}));
  // A placeholder is made after the plan: bound by path, never pinned.
  EXPECT_EQ(pins.asked.count("/home/u/proj/.vscode"), 0u);
  EXPECT_TRUE(HasSequence(*argv, {"--ro-bind", "/home/u/proj/.vscode", "/home/u/proj/.vscode"}));
  // The system's own paths go by path; no path of a pinned source remains.
  EXPECT_TRUE(HasSequence(*argv, {"--ro-bind", "/usr", "/usr"}));
  EXPECT_FALSE(HasSequence(*argv, {"--bind", "/home/u/proj", "/home/u/proj"}));
  // Bound by descriptor, nothing is left for an entry point to check.
  EXPECT_FALSE(Contains(*argv, std::string(kMountCheckVerb)));
}

TEST(MountPinsTest, APrintedBubblewrapPlanChecksInsideInstead) {
  ContainerConfig config;
  config.runtime = Runtime::kBwrap;
  ContainerSpawn spawn = Spawn();
  FakePins pins;
  pins.descriptors = false;
  spawn.pin = pins.Fn();
  absl::StatusOr<std::vector<std::string>> argv =
      BuildBwrapArgv(config, kMounts, spawn, kMergedUsr);
  ASSERT_TRUE(argv.ok()) << argv.status();
  EXPECT_TRUE(HasSequence(*argv, {"--bind", "/home/u/proj", "/home/u/proj"}));
  EXPECT_TRUE(HasSequence(*argv, {"--ro-bind", "/usr/bin/np-exec", "/run/np-exec/np-exec"}));
  const long at = IndexOfSequence(
      *argv, {"--", "/run/np-exec/np-exec", std::string(kMountCheckVerb), "--expect",
              "/home/u/proj", absl::StrCat("7:", pins.asked.at("/home/u/proj").ino)});
  ASSERT_GE(at, 0);
  EXPECT_TRUE(
      HasSequence(*argv, {"--expect", "/d", absl::StrCat("7:", pins.asked.at("/data").ino)}));
  EXPECT_TRUE(HasSequence(*argv, {"--", "node", "agent.js"}));
}

TEST(MountPinsTest, DockerAndPodmanRunTheMountCheckBeforeTheProgram) {
  for (Runtime runtime : {Runtime::kDocker, Runtime::kPodman}) {
    ContainerConfig config;
    config.runtime = runtime;
    config.image = "img:1";
    ContainerSpawn spawn = Spawn();
    FakePins pins;
    pins.descriptors = false;
    spawn.pin = pins.Fn();
    absl::StatusOr<std::vector<std::string>> argv = BuildContainerArgv(config, kMounts, spawn);
    ASSERT_TRUE(argv.ok()) << argv.status();
    EXPECT_TRUE(
        Contains(*argv, "type=bind,source=/usr/bin/np-exec,target=/run/np-exec/np-exec,readonly"));
    const long image = IndexOf(*argv, "img:1");
    ASSERT_GE(image, 0);
    std::vector<std::string> expected = {"/run/np-exec/np-exec", std::string(kMountCheckVerb)};
    for (const auto& [source, target] : std::vector<std::pair<std::string, std::string>>{
             {"/home/u/proj", "/home/u/proj"},
             {"/home/u/proj/.git/hooks", "/home/u/proj/.git/hooks"},
             {"/data", "/d"}}) {
      expected.insert(expected.end(),
                      {"--expect", target, absl::StrCat("7:", pins.asked.at(source).ino)});
    }
    expected.insert(expected.end(), {"--", "node", "agent.js"});
    EXPECT_EQ(std::vector<std::string>(argv->begin() + image + 1, argv->end()), expected);
    EXPECT_EQ(pins.asked.count("/home/u/proj/.vscode"), 0u);
  }
}

// On the run path the plan made the placeholders before the argv
// (ContainerSpawn::placeholders_made): they are pinned like every other
// source, so nothing rewrites the argv afterwards.
TEST(MountPinsTest, PlaceholdersMadeBeforeTheArgvArePinnedToo) {
  for (Runtime runtime : {Runtime::kBwrap, Runtime::kDocker}) {
    ContainerConfig config;
    config.runtime = runtime;
    config.image = "img:1";
    ContainerSpawn spawn = Spawn();
    spawn.placeholders_made = true;
    FakePins pins;
    pins.descriptors = runtime == Runtime::kBwrap;
    spawn.pin = pins.Fn();
    absl::StatusOr<std::vector<std::string>> argv =
        runtime == Runtime::kBwrap ? BuildBwrapArgv(config, kMounts, spawn, kMergedUsr)
                                   : BuildContainerArgv(config, kMounts, spawn);
    ASSERT_TRUE(argv.ok()) << argv.status();
    ASSERT_EQ(pins.asked.count("/home/u/proj/.vscode"), 1u) << RuntimeName(runtime);
    const SourcePin& pin = pins.asked.at("/home/u/proj/.vscode");
    if (runtime == Runtime::kBwrap) {
      EXPECT_TRUE(
          HasSequence(*argv, {"--ro-bind-fd", absl::StrCat(pin.fd), "/home/u/proj/.vscode"}));
      EXPECT_FALSE(
          HasSequence(*argv, {"--ro-bind", "/home/u/proj/.vscode", "/home/u/proj/.vscode"}));
    } else {
      EXPECT_TRUE(
          HasSequence(*argv, {"--expect", "/home/u/proj/.vscode", absl::StrCat("7:", pin.ino)}));
    }
  }
}

TEST(MountPinsTest, WithoutAPinNothingChanges) {
  ContainerConfig config;
  config.image = "img:1";
  ContainerSpawn spawn = Spawn();
  absl::StatusOr<std::vector<std::string>> argv = BuildContainerArgv(config, kMounts, spawn);
  ASSERT_TRUE(argv.ok()) << argv.status();
  EXPECT_FALSE(Contains(*argv, std::string(kMountCheckVerb)));
  EXPECT_EQ(argv->back(), "agent.js");
}

TEST(MountPinsTest, ARefusedPinRefusesTheArgv) {
  for (Runtime runtime : {Runtime::kDocker, Runtime::kBwrap}) {
    ContainerConfig config;
    config.runtime = runtime;
    config.image = "img:1";
    ContainerSpawn spawn = Spawn();
    FakePins pins;
    spawn.pin = pins.Fn();
    const std::vector<ValidatedMount> mounts = {{"/refused", "/r", false}};
    absl::StatusOr<std::vector<std::string>> argv =
        runtime == Runtime::kBwrap ? BuildBwrapArgv(config, mounts, spawn, kMergedUsr)
                                   : BuildContainerArgv(config, mounts, spawn);
    EXPECT_EQ(ErrorCode(argv.status()), "isolation-mount-source-unstable");
  }
}

TEST(MountPinsTest, ExpectationsParseBackAndRejectNonsense) {
  absl::StatusOr<MountExpectation> parsed = ParseMountExpectation("/p", "64768:1234");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->dev, 64768u);
  EXPECT_EQ(parsed->ino, 1234u);
  for (const char* bad : {"", "1", "1:", ":2", "1:2:3", "a:b", "-1:2"}) {
    EXPECT_EQ(ErrorCode(ParseMountExpectation("/p", bad).status()), "usage") << bad;
  }
  EXPECT_EQ(ErrorCode(ParseMountExpectation("p", "1:2").status()), "usage");
}

}  // namespace
}  // namespace np
