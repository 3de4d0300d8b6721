// Mount sources pinned between np-exec's check and the runtime's mount (issue
// 15 item 2): what the launcher opens (launcher/source_pins.h) and what the
// sandbox's entry point checks (the mount-check verb of the built np-exec).
#include "launcher/source_pins.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "launcher/runtime/driver.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace np {
namespace {

using ::np::testing::NpExecBin;
using ::np::testing::RunProcess;
using ::np::testing::RunResult;
using ::np::testing::TempDir;
using ::testing::HasSubstr;

std::string Identity(const std::string& path) {
  struct stat st;
  EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
  return absl::StrCat(st.st_dev, ":", st.st_ino);
}

TEST(SourcePinsTest, ASourceIsOpenedOnceAndHeldWithItsIdentity) {
  TempDir dir;
  const std::string data = dir.MakeDir("data");
  SourcePins pins(/*keep_descriptors=*/true);
  absl::StatusOr<SourcePin> pin = pins.Pin(data);
  ASSERT_TRUE(pin.ok()) << pin.status();
  ASSERT_GE(pin->fd, 0);
  EXPECT_EQ(absl::StrCat(pin->dev, ":", pin->ino), Identity(data));
  // The descriptor is the folder itself, whatever happens to the path now.
  ASSERT_EQ(rename(data.c_str(), dir.Path("moved").c_str()), 0);
  struct stat st;
  ASSERT_EQ(fstat(pin->fd, &st), 0);
  EXPECT_EQ(absl::StrCat(st.st_dev, ":", st.st_ino), Identity(dir.Path("moved")));
  // Asked again (one folder at two targets), the same object under a
  // descriptor of its own: bubblewrap closes each one it binds. The folder
  // is opened once: its rename above does not matter.
  absl::StatusOr<SourcePin> again = pins.Pin(data);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_NE(again->fd, pin->fd);
  ASSERT_EQ(fstat(again->fd, &st), 0);
  EXPECT_EQ(absl::StrCat(st.st_dev, ":", st.st_ino), Identity(dir.Path("moved")));
  EXPECT_EQ(again->ino, pin->ino);
}

// Below the opened project folder a source is reached through that folder:
// a folder swapped in at the project's path (by a program in an enclosing
// project's sandbox) is never what is pinned and bound: while the swap lasts
// and once the folder is back, what is pinned is the node below the held
// folder. (A run refuses a project that moved: CheckProjectStillAt.)
TEST(SourcePinsTest, AFolderSwappedInAtTheProjectsPathIsNeverPinned) {
  TempDir dir;
  const std::string project = dir.MakeDir("p");
  dir.Write("p/.envrc", "own\n");
  const std::string own = Identity(project + "/.envrc");
  const int opened = open(project.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(opened, 0);
  SourcePins pins(/*keep_descriptors=*/true);
  ASSERT_TRUE(pins.ReadBelow(project, opened).ok());
  close(opened);
  ASSERT_EQ(rename(project.c_str(), dir.Path("p-away").c_str()), 0);
  dir.Write("p/.envrc", "swapped in\n");
  const std::string swapped = Identity(project + "/.envrc");
  absl::StatusOr<SourcePin> during = pins.Pin(project + "/.envrc");
  ASSERT_TRUE(during.ok()) << during.status();
  EXPECT_EQ(absl::StrCat(during->dev, ":", during->ino), own);
  EXPECT_NE(absl::StrCat(during->dev, ":", during->ino), swapped);
  ASSERT_EQ(rename(project.c_str(), dir.Path("p-swapped").c_str()), 0);
  ASSERT_EQ(rename(dir.Path("p-away").c_str(), project.c_str()), 0);
  SourcePins again(/*keep_descriptors=*/true);
  const int reopened = open(project.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(reopened, 0);
  ASSERT_TRUE(again.ReadBelow(project, reopened).ok());
  close(reopened);
  absl::StatusOr<SourcePin> after = again.Pin(project + "/.envrc");
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(absl::StrCat(after->dev, ":", after->ino), own);
  // A folder on the way is opened once; a link swapped in for it after that
  // is not followed for the next source in it.
  dir.MakeDir("p/deep");
  dir.Write("p/deep/a", "a\n");
  dir.Write("p/deep/b", "b\n");
  const std::string b = Identity(project + "/deep/b");
  ASSERT_TRUE(again.Pin(project + "/deep/a").ok());
  ASSERT_EQ(rename((project + "/deep").c_str(), (project + "/deep-away").c_str()), 0);
  ASSERT_EQ(symlink(dir.MakeDir("decoy").c_str(), (project + "/deep").c_str()), 0);
  dir.Write("decoy/b", "decoy\n");
  absl::StatusOr<SourcePin> held = again.Pin(project + "/deep/b");
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_EQ(absl::StrCat(held->dev, ":", held->ino), b);
  // A link planted on the way below the project is never followed.
  dir.MakeDir("elsewhere/deep");
  dir.Write("elsewhere/deep/file", "x\n");
  ASSERT_EQ(symlink(dir.Path("elsewhere").c_str(), (project + "/sub").c_str()), 0);
  EXPECT_EQ(ErrorCode(again.Pin(project + "/sub/deep/file").status()),
            "isolation-mount-source-unstable");
  // Never a parent of the project through a ".." below it.
  EXPECT_EQ(ErrorCode(again.Pin(project + "/deep-away/..").status()),
            "isolation-mount-source-unstable");
  EXPECT_EQ(ErrorCode(again.Pin(project + "/./.envrc").status()),
            "isolation-mount-source-unstable");
}

TEST(SourcePinsTest, WithoutDescriptorsOnlyTheIdentityIsKept) {
  TempDir dir;
  const std::string data = dir.MakeDir("data");
  SourcePins pins(/*keep_descriptors=*/false);
  absl::StatusOr<SourcePin> pin = pins.Pin(data);
  ASSERT_TRUE(pin.ok()) << pin.status();
  EXPECT_EQ(pin->fd, -1);
  EXPECT_EQ(absl::StrCat(pin->dev, ":", pin->ino), Identity(data));
}

// The attack: a folder of a project, checked by its real path, is renamed
// and a link put in its place before the runtime mounts it.
TEST(SourcePinsTest, ALinkInsideAProjectIsASwapAndRefused) {
  TempDir dir;
  const std::string project = dir.MakeDir("project");
  ::np::testing::MakeProject(project, "{}");
  const std::string inner = dir.MakeDir("project/inner");
  const std::string decoy = dir.MakeDir("decoy");
  ASSERT_EQ(rename(inner.c_str(), dir.Path("project/inner.x").c_str()), 0);
  ASSERT_EQ(symlink(decoy.c_str(), inner.c_str()), 0);
  SourcePins pins(/*keep_descriptors=*/true);
  absl::StatusOr<SourcePin> pin = pins.Pin(inner);
  ASSERT_FALSE(pin.ok());
  EXPECT_EQ(ErrorCode(pin.status()), "isolation-mount-source-unstable");
  EXPECT_THAT(pin.status().message(), HasSubstr(decoy));
  // A link into a project from outside is one too.
  ASSERT_EQ(symlink(dir.Path("project/inner.x").c_str(), dir.Path("into").c_str()), 0);
  EXPECT_EQ(ErrorCode(pins.Pin(dir.Path("into")).status()), "isolation-mount-source-unstable");
}

// Every source np-exec pins is a real path, so a link anywhere on the way
// is a change, outside every project too: a top-level project whose parent
// another user can write in, swapped for a link to `/`, walks through the
// link, and no `.nubos-pilot/` above it would tell.
TEST(SourcePinsTest, ALinkOutsideEveryProjectIsRefusedToo) {
  TempDir dir;
  const std::string real = dir.MakeDir("real-home");
  ASSERT_EQ(symlink(real.c_str(), dir.Path("home").c_str()), 0);
  ASSERT_EQ(symlink("/", dir.Path("root").c_str()), 0);
  SourcePins pins(/*keep_descriptors=*/false);
  EXPECT_EQ(ErrorCode(pins.Pin(dir.Path("home")).status()), "isolation-mount-source-unstable");
  EXPECT_EQ(ErrorCode(pins.Pin(dir.Path("root")).status()), "isolation-mount-source-unstable");
}

TEST(SourcePinsTest, AMissingSourceIsRefused) {
  TempDir dir;
  SourcePins pins(/*keep_descriptors=*/false);
  EXPECT_EQ(ErrorCode(pins.Pin(dir.Path("gone")).status()), "isolation-mount-source-missing");
}

// Placeholders exist only once the spawn made them: pinned then, in the
// runtime argv the plan built.
TEST(PlaceholderPinsTest, BubblewrapBindsTheirDescriptorsAndDockerChecksThem) {
  TempDir dir;
  const std::string project = dir.MakeDir("project");
  const std::string vscode = dir.MakeDir("project/.vscode");
  ProtectedBind bind;
  bind.relative = ".vscode";
  bind.directory = true;
  bind.placeholder = true;
  ProtectedBind real;
  real.relative = ".git";
  real.directory = true;
  {
    SourcePins pins(/*keep_descriptors=*/true);
    std::vector<std::string> argv = {"bwrap", "--ro-bind", vscode, "/p/.vscode", "--", "true"};
    std::vector<int> fds;
    ASSERT_TRUE(DriverFor(Runtime::kBwrap)
                    .PinPrintedPlaceholders({bind, real}, project, "/p", pins, argv, fds)
                    .ok());
    ASSERT_EQ(fds.size(), 1u);
    EXPECT_EQ(argv, (std::vector<std::string>{"bwrap", "--ro-bind-fd", std::to_string(fds[0]),
                                              "/p/.vscode", "--", "true"}));
    struct stat st;
    ASSERT_EQ(fstat(fds[0], &st), 0);
    EXPECT_EQ(absl::StrCat(st.st_dev, ":", st.st_ino), Identity(vscode));
  }
  {
    SourcePins pins(/*keep_descriptors=*/false);
    std::vector<std::string> argv = {"docker",      "run", "img", "/run/np-exec/np-exec",
                                     "mount-check", "--",  "true"};
    std::vector<int> fds;
    ASSERT_TRUE(DriverFor(Runtime::kDocker)
                    .PinPrintedPlaceholders({bind}, project, "/p", pins, argv, fds)
                    .ok());
    EXPECT_TRUE(fds.empty());
    EXPECT_EQ(argv, (std::vector<std::string>{"docker", "run", "img", "/run/np-exec/np-exec",
                                              "mount-check", "--expect", "/p/.vscode",
                                              Identity(vscode), "--", "true"}));
    // Without a mount check to extend, nothing runs.
    std::vector<std::string> bare = {"docker", "run", "img", "true"};
    EXPECT_EQ(ErrorCode(DriverFor(Runtime::kDocker)
                            .PinPrintedPlaceholders({bind}, project, "/p", pins, bare, fds)),
              "spawn-failed");
  }
  // A placeholder swapped for a link before it is pinned is refused.
  ASSERT_EQ(rename(vscode.c_str(), dir.Path("project/vscode.x").c_str()), 0);
  ASSERT_EQ(symlink(dir.MakeDir("elsewhere").c_str(), vscode.c_str()), 0);
  SourcePins pins(/*keep_descriptors=*/true);
  std::vector<std::string> argv = {"bwrap", "--ro-bind", vscode, "/p/.vscode", "--", "true"};
  std::vector<int> fds;
  EXPECT_EQ(ErrorCode(DriverFor(Runtime::kBwrap)
                          .PinPrintedPlaceholders({bind}, project, "/p", pins, argv, fds)),
            "isolation-mount-source-unstable");
}

// The entry point inside: a target that is not what was pinned stops the
// spawn before the program exists.
TEST(MountCheckTest, AMountThatIsNotThePinnedOneRunsNothing) {
  TempDir dir;
  const std::string data = dir.MakeDir("data");
  const std::string other = dir.MakeDir("other");
  const std::string marker = dir.Path("ran");
  RunResult wrong = RunProcess({NpExecBin(), "mount-check", "--expect", data, Identity(other), "--",
                                "/usr/bin/touch", marker},
                               {});
  EXPECT_EQ(wrong.exit_code, 125) << wrong.err;
  EXPECT_THAT(wrong.err, HasSubstr("(isolation-mount-source-unstable)"));
  EXPECT_THAT(wrong.err, HasSubstr(data));
  EXPECT_FALSE(::np::testing::FileExists(marker));
  RunResult missing = RunProcess({NpExecBin(), "mount-check", "--expect", dir.Path("gone"),
                                  Identity(data), "--", "/usr/bin/touch", marker},
                                 {});
  EXPECT_EQ(missing.exit_code, 125) << missing.err;
  EXPECT_FALSE(::np::testing::FileExists(marker));
  RunResult right =
      RunProcess({NpExecBin(), "mount-check", "--expect", data, Identity(data), "--expect", other,
                  Identity(other), "--", "/bin/sh", "-c", "touch \"$0\"; exit 7", marker},
                 {});
  EXPECT_EQ(right.exit_code, 7) << right.err;
  EXPECT_TRUE(::np::testing::FileExists(marker));
}

TEST(MountCheckTest, AMalformedCommandLineIsAUsageError) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--expect", "/x", "1-2", "--", "true"},
        std::vector<std::string>{"--expect", "rel", "1:2", "--", "true"},
        std::vector<std::string>{"--expect", "/x", "1:2"}, std::vector<std::string>{"true"}}) {
    std::vector<std::string> argv = {NpExecBin(), "mount-check"};
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult r = RunProcess(argv, {});
    EXPECT_EQ(r.exit_code, 125) << r.err;
    EXPECT_THAT(r.err, HasSubstr("(usage)"));
  }
}

}  // namespace
}  // namespace np
