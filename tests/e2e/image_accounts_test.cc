// Issue 17 item 2 on docker and podman: the spawn's /etc/passwd and
// /etc/group are the image's own entries plus the caller. Images built here
// FROM np-test:local carry a distinctive system user and group; the image's
// files are copied out once per image ID into the operator state store
// (image-accounts/<id>.json), and the next spawn makes no container for it
// (counted in the engine's own event log); a tag moved to another image gets
// that image's entries; an image whose passwd is a link, or whose group is
// over the 1 MiB cap, gets the minimal base, silently. On bubblewrap the base
// stays the host's own files and nothing is cached.
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"

namespace np::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kPasswdA[] =
    "root:x:0:0:root:/root:/bin/sh\n"
    "npimgsys:x:4242:4242:np-exec image user:/var/lib/npimg:/sbin/nologin\n";
constexpr char kGroupA[] = "root:x:0:\nnpimggrp:x:4243:npimgsys\n";
constexpr char kPasswdB[] =
    "root:x:0:0:root:/root:/bin/sh\n"
    "npimgtwo:x:4244:4244:the moved tag's user:/var/lib/two:/sbin/nologin\n";
constexpr char kGroupB[] = "root:x:0:\nnpimgtwo:x:4244:\n";

// The current time with nanoseconds, as the engines' `events --since` take it.
std::string Now() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  char out[40];
  snprintf(out, sizeof(out), "%lld.%09ld", static_cast<long long>(ts.tv_sec), ts.tv_nsec);
  return out;
}

class ImageAccountsTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    NP_REQUIRE_RUNTIME(runtime());
    state_ = dir_.MakeDir("state");
    project_ = dir_.MakeDir("project");
    env_ = RuntimeEnv({"HOME=" + dir_.MakeDir("home"), "XDG_STATE_HOME=" + state_});
    image_ = "np-img-accounts-" + std::to_string(getpid()) + ":test";
  }

  void TearDown() override {
    // By ID: a moved tag leaves the image it moved from untagged.
    for (const std::string& id : built_) RunRuntime(runtime(), {"rmi", "-f", id});
  }

  const std::string& runtime() const { return GetParam(); }

  // Builds `tag` FROM np-test:local with these files in /etc, then `script`.
  void Build(const std::string& tag, const std::string& passwd, const std::string& group,
             const std::string& script = "") {
    const std::string context = dir_.MakeDir("context-" + std::to_string(built_.size()));
    dir_.Write("context-" + std::to_string(built_.size()) + "/passwd", passwd);
    dir_.Write("context-" + std::to_string(built_.size()) + "/group", group);
    std::string dockerfile = "FROM np-test:local\nCOPY passwd group /etc/\n";
    if (!script.empty()) dockerfile += "RUN " + script + "\n";
    dir_.Write("context-" + std::to_string(built_.size()) + "/Dockerfile", dockerfile);
    std::vector<std::string> args = {"build", "-q", "--network", "none", "-t", tag};
    if (runtime() == "podman") args.push_back("--pull=never");
    args.push_back(context);
    RunResult built = RunRuntime(runtime(), args);
    ASSERT_EQ(built.exit_code, 0) << built.err;
    built_.push_back(IdOf(tag));
  }

  // The image's content ID as 64 hex digits.
  std::string IdOf(const std::string& image) {
    RunResult r = RunRuntime(runtime(), {"image", "inspect", "--format", "{{.Id}}", image});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return std::string(absl::StripPrefix(absl::StripAsciiWhitespace(r.out), "sha256:"));
  }

  // Cold (warm false, whatever the operator file says): these tests count
  // the containers each spawn makes the engine create.
  void Configure(const std::string& image) {
    MakeProject(project_, ContainerConfig(runtime(), image, {{"warm", false}}), /*trust=*/false);
    RunResult trusted = Np({"trust"});
    ASSERT_EQ(trusted.exit_code, 0) << trusted.err;
  }

  RunResult Np(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {NpExecBin()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, Options(env_, 120000, project_));
  }

  RunResult Sh(const std::string& script) { return Np({"--", "sh", "-c", script}); }

  // Containers np-exec had the engine create from `image` since `since`
  // (the engine's own event log: the run's and any copy-out's alike).
  int CreatesSince(const std::string& since, const std::string& image) {
    std::vector<std::string> args = {"events", "--since", since, "--filter", "event=create"};
    if (runtime() == "docker") {
      args.insert(args.end(), {"--until", Now(), "--format",
                               "{{.Actor.Attributes.name}} {{.Actor.Attributes.image}}"});
    } else {
      args.insert(args.end(), {"--stream=false", "--format", "{{.Name}} {{.Image}}"});
    }
    RunResult r = RunRuntime(runtime(), args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    int count = 0;
    for (absl::string_view line : absl::StrSplit(r.out, '\n', absl::SkipEmpty())) {
      std::vector<absl::string_view> fields = absl::StrSplit(line, ' ');
      if (fields.size() == 2 && absl::StartsWith(fields[0], "np-exec-") &&
          (fields[1] == image || fields[1] == "localhost/" + image)) {
        ++count;
      }
    }
    return count;
  }

  std::string CacheDir() const { return state_ + "/np-exec/image-accounts"; }

  std::vector<std::string> CacheFiles() const {
    std::vector<std::string> names;
    std::error_code none;
    for (const auto& entry : std::filesystem::directory_iterator(CacheDir(), none)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  TempDir dir_;
  std::string state_, project_, image_;
  std::vector<std::string> env_;
  std::vector<std::string> built_;  // The IDs of the images built here.
};

// The script every spawn runs: the image's user and group by name, the
// caller by name, the caller's own line.
constexpr char kLook[] =
    "grep '^npimg' /etc/passwd; grep '^npimg' /etc/group; "
    "echo user=$(id -un) whoami=$(whoami) group=$(id -gn); "
    "awk -F: -v u=\"$(id -u)\" '$3==u' /etc/passwd; grep -c . /etc/passwd";

TEST_P(ImageAccountsTest, ImageUsersAreThereWithTheCallerAndCachedOnce) {
  Build(image_, kPasswdA, kGroupA);
  Configure(image_);
  const std::string caller = getuid() == 0 ? "root" : "";

  const std::string before_first = Now();
  RunResult first = Sh(kLook);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.err, "");
  EXPECT_THAT(first.out, HasSubstr("npimgsys:x:4242:4242:np-exec image user:/var/lib/npimg:"
                                   "/sbin/nologin\n"));
  EXPECT_THAT(first.out, HasSubstr("npimggrp:x:4243:npimgsys\n"));
  std::vector<std::string> lines = absl::StrSplit(first.out, '\n');
  ASSERT_GE(lines.size(), 5u) << first.out;
  if (!caller.empty()) {
    EXPECT_EQ(lines[2], "user=root whoami=root group=root");
    // The image's root line is replaced by the caller's, with the sandbox's
    // home; the image's other line stays: two lines.
    EXPECT_EQ(lines[3], "root:x:0:0:root:/home/np-exec:/bin/sh");
    EXPECT_EQ(lines[4], "2");
  }
  // One record, for this image's content ID.
  const std::string id = IdOf(image_);
  ASSERT_EQ(id.size(), 64u);
  ASSERT_EQ(CacheFiles(), std::vector<std::string>{id + ".json"});
  const std::string record = CacheDir() + "/" + id + ".json";
  struct stat st;
  ASSERT_EQ(lstat(record.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_uid, getuid());
  const ino_t inode = st.st_ino;
  EXPECT_THAT(ReadFile(record), HasSubstr("npimgsys"));
  // The run's own container and the copy-out's.
  EXPECT_EQ(CreatesSince(before_first, image_), 2);

  // The second spawn reads the record: the engine creates only the run's
  // container, and the record is the same file, untouched.
  const std::string before_second = Now();
  RunResult second = Sh(kLook);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.out, first.out);
  EXPECT_EQ(CreatesSince(before_second, image_), 1);
  ASSERT_EQ(lstat(record.c_str(), &st), 0);
  EXPECT_EQ(st.st_ino, inode);
  EXPECT_EQ(CacheFiles(), std::vector<std::string>{id + ".json"});
  // No copy-out container is left behind.
  RunResult left = RunRuntime(runtime(), {"ps", "-a", "-q", "--filter", "ancestor=" + image_});
  EXPECT_EQ(left.exit_code, 0) << left.err;
  EXPECT_EQ(left.out, "");
}

// The cache is keyed by content, not by tag: the tag moved to another image
// shows that image's entries, and the first image's record stays.
TEST_P(ImageAccountsTest, AMovedTagGetsTheNewImagesEntries) {
  Build(image_, kPasswdA, kGroupA);
  Configure(image_);
  const std::string first_id = IdOf(image_);
  RunResult first = Sh(kLook);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_THAT(first.out, HasSubstr("npimgsys:"));

  Build(image_, kPasswdB, kGroupB);
  const std::string second_id = IdOf(image_);
  ASSERT_NE(first_id, second_id);
  const std::string before = Now();
  RunResult moved = Sh(kLook);
  ASSERT_EQ(moved.exit_code, 0) << moved.err;
  EXPECT_THAT(moved.out, HasSubstr("npimgtwo:x:4244:4244:the moved tag's user:"));
  EXPECT_THAT(moved.out, HasSubstr("npimgtwo:x:4244:\n"));
  EXPECT_THAT(moved.out, Not(HasSubstr("npimgsys")));
  EXPECT_EQ(CreatesSince(before, image_), 2);
  std::vector<std::string> expected = {first_id + ".json", second_id + ".json"};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(CacheFiles(), expected);
}

// The image's passwd is a link (to a file with a user of its own) and its
// group over the 1 MiB cap: each falls back to the minimal base, and the
// spawn says nothing about it.
TEST_P(ImageAccountsTest, ALinkedOrOversizedImageFileGetsTheMinimalBase) {
  std::string big = "root:x:0:\n";
  for (int i = 0; big.size() <= (1u << 20); ++i)
    big += absl::StrCat("g", i, ":x:", 5000 + i, ":\n");
  Build(image_, "linkeduser:x:4300:4300::/:/bin/sh\n", big,
        "mv /etc/passwd /etc/npimg-real-passwd && ln -s npimg-real-passwd /etc/passwd");
  Configure(image_);
  RunResult r = Sh("cat /etc/passwd; echo ---; cat /etc/group; echo user=$(id -un)");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, Not(HasSubstr("linkeduser")));
  EXPECT_THAT(r.out, Not(HasSubstr("g0:x:5000")));
  EXPECT_THAT(r.out, HasSubstr("nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"));
  EXPECT_THAT(r.out, HasSubstr("nogroup:x:65534:\n"));
  if (getuid() == 0) {
    EXPECT_THAT(r.out, HasSubstr("user=root\n"));
  }
  // Remembered as unusable: the next spawn makes no copy-out either.
  ASSERT_EQ(CacheFiles().size(), 1u);
  const std::string before = Now();
  RunResult again = Sh("cat /etc/passwd; echo ---; cat /etc/group; echo user=$(id -un)");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, r.out);
  EXPECT_EQ(CreatesSince(before, image_), 1);
}

INSTANTIATE_TEST_SUITE_P(Runtimes, ImageAccountsTest, ::testing::Values("docker", "podman"),
                         RuntimeName);

// bubblewrap: the host's own files stay the base (its sandbox shows the
// host's /usr), and nothing is cached.
class HostAccountsTest : public ImageAccountsTest {};

TEST_P(HostAccountsTest, BubblewrapKeepsTheHostsFiles) {
  Configure("");
  // A host account other than the caller's.
  std::string other;
  for (absl::string_view line : absl::StrSplit(ReadFile("/etc/passwd"), '\n')) {
    std::vector<std::string> fields = absl::StrSplit(line, ':');
    if (fields.size() == 7 && fields[2] != std::to_string(getuid())) {
      other = std::string(line);
      break;
    }
  }
  ASSERT_FALSE(other.empty());
  RunResult r = Sh("cat /etc/passwd; id -un");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(other + "\n"));
  EXPECT_FALSE(std::filesystem::exists(CacheDir()));
}

// Each spawn's account view is files of its own: a sandbox that takes a
// write lease on its /etc/passwd (the kernel grants it, the caller owns the
// file) reaches nothing another spawn opens. A view shared by every spawn of
// the same bytes would hand it the next spawns' view: np-exec's open of it
// would fail (EAGAIN) or wait out the lease (45 s), and an inotify watch
// would see each spawn start.
TEST_P(HostAccountsTest, ALeaseOnOneSpawnsPasswdReachesNoOtherSpawn) {
  Configure("");
  const pid_t holder = StartProcess(
      {NpExecBin(), "--", "perl", "-e",
       "open(my $f, '<', '/etc/passwd') or die; fcntl($f, 1024, 1) or die \"lease: $!\"; "
       "open(my $m, '>', 'leased') or die; close($m); sleep 60"},
      Options(env_, 120000, project_), dir_.Path("holder.out"), dir_.Path("holder.err"));
  ASSERT_GT(holder, 0);
  const std::string marker = project_ + "/leased";
  for (int i = 0; i < 300 && !std::filesystem::exists(marker); ++i) usleep(100000);
  ASSERT_TRUE(std::filesystem::exists(marker)) << ReadFile(dir_.Path("holder.err"));
  RunResult r = Sh("id -un; grep -c . /etc/passwd");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("account-view")));
  kill(holder, SIGTERM);
  EXPECT_NE(WaitProcess(holder, 60000), -1);
}

INSTANTIATE_TEST_SUITE_P(Runtimes, HostAccountsTest, ::testing::Values("bwrap"), RuntimeName);

}  // namespace
}  // namespace np::testing
