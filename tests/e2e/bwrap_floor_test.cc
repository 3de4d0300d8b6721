// Issue 19 items 1-3 on real runtimes: bubblewrap at its floor makes the same
// sandbox, takes as many arguments as the direct tier, and `wrap` reuses a
// probe only under the same key.
//
// 1. The same sandbox. np-exec now binds a prepared copy of the /etc files in
//    one bind and merges mounts (core/bwrap_targets.h). The test takes the
//    plan `wrap` prints, rebuilds the sandbox as np-exec built it before (one
//    --ro-bind-try per /etc file, one bind per configured mount) and runs the
//    same probe in both, from inside: for a list of paths whether each
//    exists, is readable and is writable, plus every entry below /etc and
//    /opt with its type, mode and content checksum. Both must be equal, and
//    nothing below /etc, /usr or a read-only mount may be writable; the
//    prepared copy on the host is unchanged afterwards.
// 2. 100 000 arguments reach the program on bubblewrap (run path and printed
//    plan), docker and podman, as on the direct tier.
// 3. `wrap` on bubblewrap remembers the probe in the caller's state store
//    (mode 0600) and does not trust a record open to others or under
//    another key.
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "core/bwrap_argv.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"

namespace np::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Paths whose state inside the sandbox is compared; PROJECT is replaced.
const std::vector<std::string> kProbedPaths = {
    "/",
    "/etc",
    "/etc/passwd",
    "/etc/group",
    "/etc/shadow",
    "/etc/hostname",
    "/etc/ssl",
    "/etc/ssl/certs",
    "/etc/localtime",
    "/etc/ld.so.cache",
    "/etc/alternatives",
    "/usr",
    "/usr/bin/true",
    "/bin",
    "/tmp",
    "/home/np-exec",
    "/root",
    "/var",
    "/run",
    "/dev/null",
    "PROJECT",
    "PROJECT/src",
    "PROJECT/.git/hooks",
    "PROJECT/.nubos-pilot/config.json",
    "/opt",
    "/opt/pkgs",
    "/opt/pkgs/a",
    "/opt/pkgs/b",
    "/opt/pkgs/c",
    "/data",
    "/data/sub",
    "/data/sub/file",
};

// For each argument "PATH e|- r|- w|-", then /etc's and /opt's entries.
constexpr char kProbeScript[] = R"sh(
for p in "$@"; do
  e=-; r=-; w=-
  if [ -e "$p" ] || [ -L "$p" ]; then e=e; fi
  if [ -r "$p" ]; then r=r; fi
  if [ -d "$p" ]; then
    if (: > "$p/.np-probe") 2>/dev/null; then w=w; rm -f "$p/.np-probe"; fi
  elif [ -e "$p" ]; then
    if (: >> "$p") 2>/dev/null; then w=w; fi
  fi
  echo "$p $e$r$w"
done
find /etc /opt -printf '%p %y %m\n' 2>/dev/null | LC_ALL=C sort
find /etc /opt -type f 2>/dev/null | LC_ALL=C sort | while read -r f; do cksum "$f"; done
)sh";

class BwrapFloorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    NP_REQUIRE_RUNTIME("bwrap");
    project_ = dir_.MakeDir("project");
    dir_.MakeDir("project/src");
    dir_.MakeDir("project/.git/hooks");
    pkgs_ = dir_.MakeDir("pkgs");
    dir_.MakeDir("pkgs/a");
    dir_.MakeDir("pkgs/b");
    dir_.Write("pkgs/c", "c\n");
    dir_.Write("pkgs/a/x", "x\n");
    ASSERT_EQ(chmod(pkgs_.c_str(), 0755), 0);
    data_ = dir_.MakeDir("data");
    dir_.Write("data/sub/file", "data\n");
    const nlohmann::json mounts = {
        {{"source", pkgs_ + "/a"}, {"target", "/opt/pkgs/a"}},
        {{"source", pkgs_ + "/b"}, {"target", "/opt/pkgs/b"}},
        {{"source", pkgs_ + "/c"}, {"target", "/opt/pkgs/c"}},
        {{"source", data_}, {"target", "/data"}},
        {{"source", data_ + "/sub"}, {"target", "/data/sub"}},
    };
    // Cold (warm false, whatever the operator file says): the sandbox is
    // compared with a bare bwrap run of the same argv.
    MakeProject(project_, ContainerConfig("bwrap", "", {{"mounts", mounts}, {"warm", false}}));
  }

  std::vector<std::string> ProbeCommand() const {
    std::vector<std::string> command = {"/bin/sh", "-c", kProbeScript, "probe"};
    for (std::string path : kProbedPaths) {
      if (path.rfind("PROJECT", 0) == 0) path = project_ + path.substr(7);
      command.push_back(path);
    }
    return command;
  }

  // The printed plan of the probe, as JSON.
  nlohmann::json Plan() const {
    std::vector<std::string> argv = {NpExecBin(), "wrap", "--"};
    const std::vector<std::string> probe = ProbeCommand();
    argv.insert(argv.end(), probe.begin(), probe.end());
    RunResult wrap = RunProcess(argv, Options(RuntimeEnv(), 120000, project_));
    EXPECT_EQ(wrap.exit_code, 0) << wrap.err;
    return nlohmann::json::parse(wrap.out, nullptr, false);
  }

  TempDir dir_;
  std::string project_, pkgs_, data_;
};

// Issue 19 item 1: the sandbox np-exec builds now equals the one it built
// before, seen from inside.
TEST_F(BwrapFloorTest, ThePreparedEtcAndMergedMountsMakeTheSameSandbox) {
  const nlohmann::json plan = Plan();
  ASSERT_TRUE(plan.is_object());
  std::vector<std::string> args = plan["args"].get<std::vector<std::string>>();
  // After: one bind of the prepared /etc, one of pkgs/, one of data/.
  std::string view;
  int pkgs_binds = 0, data_binds = 0;
  for (size_t i = 0; i + 2 < args.size(); ++i) {
    if (args[i] == "--ro-bind" && args[i + 2] == "/etc") view = args[i + 1];
    if (args[i] == "--ro-bind" && args[i + 1].rfind(pkgs_, 0) == 0) ++pkgs_binds;
    if (args[i] == "--ro-bind" && args[i + 1].rfind(data_, 0) == 0) ++data_binds;
  }
  ASSERT_FALSE(view.empty()) << "no prepared /etc in the plan";
  EXPECT_EQ(pkgs_binds, 1);
  EXPECT_EQ(data_binds, 1);
  EXPECT_THAT(plan.dump(), Not(HasSubstr("--ro-bind-try")));

  // Before: the same plan with one --ro-bind-try per /etc file and one bind
  // per configured mount (the inner one included).
  std::vector<std::string> before;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--ro-bind" && i + 2 < args.size() && args[i + 1] == view) {
      for (const std::string& file : SandboxEtcFiles()) {
        before.insert(before.end(), {"--ro-bind-try", file, file});
      }
      i += 2;
    } else if (args[i] == "--ro-bind" && i + 2 < args.size() && args[i + 1] == pkgs_) {
      for (const char* name : {"a", "b", "c"}) {
        before.insert(before.end(),
                      {"--ro-bind", pkgs_ + "/" + name, std::string("/opt/pkgs/") + name});
      }
      i += 2;
    } else if (args[i] == "--ro-bind" && i + 2 < args.size() && args[i + 1] == data_) {
      before.insert(before.end(),
                    {"--ro-bind", data_, "/data", "--ro-bind", data_ + "/sub", "/data/sub"});
      i += 2;
    } else if (args[i] == "--expect" && i + 2 < args.size() && args[i + 1] == "/opt/pkgs") {
      // The printed plan's mount check (core/mount_pins.h): /opt/pkgs is no
      // longer one bind of pkgs/ here.
      i += 2;
    } else {
      before.push_back(args[i]);
    }
  }
  const std::string listing_before =
      RunProcess({"/usr/bin/find", view, "-printf", "%p %y %m %s %T@\n"}, Options(RuntimeEnv()))
          .out;
  std::vector<std::string> old_argv = {plan["bin"].get<std::string>()};
  old_argv.insert(old_argv.end(), before.begin(), before.end());
  RunResult old_run = RunProcess(old_argv, Options(RuntimeEnv(), 120000, project_));
  ASSERT_EQ(old_run.exit_code, 0) << old_run.err;

  std::vector<std::string> run = {NpExecBin(), "--"};
  const std::vector<std::string> probe = ProbeCommand();
  run.insert(run.end(), probe.begin(), probe.end());
  // Without a git identity of the caller's: with one, the run path binds it
  // at /run/np-exec/gitconfig, which this comparison leaves out.
  RunResult new_run =
      RunProcess(run, Options(RuntimeEnv({"GIT_CONFIG_GLOBAL=/dev/null"}), 120000, project_));
  ASSERT_EQ(new_run.exit_code, 0) << new_run.err;
  // The printed plan runs the same sandbox as the run path.
  std::vector<std::string> printed = {plan["bin"].get<std::string>()};
  printed.insert(printed.end(), args.begin(), args.end());
  RunResult printed_run = RunProcess(printed, Options(RuntimeEnv(), 120000, project_));
  ASSERT_EQ(printed_run.exit_code, 0) << printed_run.err;

  // The one difference: the merged directory shows its host mode instead of
  // the 0700 of the directory bubblewrap made there; the rights the program
  // has on it (list, enter, not write) are the same, checked above each way.
  auto without_merged_mode = [](std::string out) {
    const size_t at = out.find("\n/opt/pkgs d ");
    if (at != std::string::npos) out.erase(at + 13, out.find('\n', at + 1) - at - 13);
    return out;
  };
  // And the run path's account view (the caller's passwd and group, which a
  // printed plan does not carry): their checksums differ by that entry.
  auto without_account = [](std::string out) {
    for (const char* file : {" /etc/passwd\n", " /etc/group\n"}) {
      const size_t at = out.find(file);
      if (at == std::string::npos) continue;
      const size_t start = out.rfind('\n', at) + 1;
      out.erase(start, at + std::string(file).size() - start);
    }
    return out;
  };
  // And a printed plan's mount check (core/mount_pins.h): np-exec's own
  // binary read-only at /run/np-exec/np-exec, where the run path binds
  // descriptors instead and has no /run.
  auto without_entry = [](std::string out) {
    const size_t at = out.find("\n/run er-\n");
    if (at != std::string::npos) out.replace(at, 10, "\n/run ---\n");
    return out;
  };
  EXPECT_THAT(new_run.out, HasSubstr("\n/run ---\n"));
  EXPECT_THAT(old_run.out, HasSubstr("\n/opt/pkgs d 700\n"));
  EXPECT_EQ(without_account(without_merged_mode(new_run.out)),
            without_entry(without_account(without_merged_mode(old_run.out))));
  EXPECT_EQ(without_entry(without_account(printed_run.out)), without_account(new_run.out));
  EXPECT_THAT(new_run.out, HasSubstr("/etc/passwd er-\n"));
  EXPECT_THAT(new_run.out, HasSubstr("/etc/shadow ---\n"));
  EXPECT_THAT(new_run.out, HasSubstr(project_ + "/src erw\n"));
  EXPECT_THAT(new_run.out, HasSubstr("/data/sub/file er-\n"));
  for (const char* read_only :
       {"/etc ", "/etc/ssl/certs ", "/usr ", "/opt/pkgs ", "/opt/pkgs/a ", "/data "}) {
    EXPECT_THAT(new_run.out, HasSubstr(std::string("\n") + read_only + "er-\n")) << read_only;
  }
  // Nothing the sandboxes did reached the prepared copy on the host.
  EXPECT_EQ(
      RunProcess({"/usr/bin/find", view, "-printf", "%p %y %m %s %T@\n"}, Options(RuntimeEnv()))
          .out,
      listing_before);
}

// The prepared copy is reused while /etc stays as it was, and a `current`
// record that is not np-exec's is never trusted: a new copy is made.
TEST_F(BwrapFloorTest, ThePreparedEtcIsReusedAndAForeignRecordIsNotTrusted) {
  const std::string view_dir = TestStateHome() + "/np-exec/etc-view";
  // (passwd and group are the spawn's account view, bound over the copy.)
  RunResult first = RunProcess({NpExecBin(), "--", "cat", "/etc/nsswitch.conf"},
                               Options(RuntimeEnv(), 120000, project_));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out, ReadFile("/etc/nsswitch.conf"));
  const std::string current = ReadFile(view_dir + "/current");
  ASSERT_FALSE(current.empty());
  RunResult second =
      RunProcess({NpExecBin(), "--", "true"}, Options(RuntimeEnv(), 120000, project_));
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(ReadFile(view_dir + "/current"), current);
  // Open to others: ignored and replaced by np-exec's own.
  ASSERT_EQ(chmod((view_dir + "/current").c_str(), 0666), 0);
  RunResult third = RunProcess({NpExecBin(), "--", "cat", "/etc/ld.so.conf"},
                               Options(RuntimeEnv(), 120000, project_));
  ASSERT_EQ(third.exit_code, 0) << third.err;
  EXPECT_EQ(third.out, ReadFile("/etc/ld.so.conf"));
  struct stat st;
  ASSERT_EQ(stat((view_dir + "/current").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

// Issue 19 item 3: bubblewrap takes at most 9000 arguments; np-exec hands the
// program's through a descriptor, on the run path and in a printed plan.
TEST_F(BwrapFloorTest, AHundredThousandArgumentsRunOnBubblewrap) {
  std::vector<std::string> run = {NpExecBin(), "--", "sh", "-c", "echo $# ${100000}", "sh"};
  for (int i = 1; i <= 100000; ++i) run.push_back(std::to_string(i));
  RunResult r = RunProcess(run, Options(RuntimeEnv(), 300000, project_));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "100000 100000\n");
  std::vector<std::string> wrap = run;
  wrap.insert(wrap.begin() + 1, "wrap");
  RunResult planned = RunProcess(wrap, Options(RuntimeEnv(), 300000, project_));
  ASSERT_EQ(planned.exit_code, 0) << planned.err.substr(0, 2000);
  const nlohmann::json plan = nlohmann::json::parse(planned.out, nullptr, false);
  ASSERT_TRUE(plan.is_object());
  EXPECT_THAT(plan["args"].dump(), HasSubstr("\"argv-entry\""));
  std::vector<std::string> printed = {plan["bin"].get<std::string>()};
  for (const auto& arg : plan["args"]) printed.push_back(arg.get<std::string>());
  RunResult printed_run = RunProcess(printed, Options(RuntimeEnv(), 300000, project_));
  EXPECT_EQ(printed_run.exit_code, 0) << printed_run.err;
  EXPECT_EQ(printed_run.out, "100000 100000\n");
}

// Issue 19 item 2: wrap remembers the probe, privately, under its key.
TEST_F(BwrapFloorTest, WrapRemembersTheProbeOnlyUnderItsKey) {
  const std::string record = TestStateHome() + "/np-exec/bwrap-probe.json";
  unlink(record.c_str());
  RunResult first =
      RunProcess({NpExecBin(), "wrap", "--", "true"}, Options(RuntimeEnv(), 120000, project_));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  struct stat st;
  ASSERT_EQ(lstat(record.c_str(), &st), 0) << "no probe record after wrap";
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  nlohmann::json stored = nlohmann::json::parse(ReadFile(record), nullptr, false);
  ASSERT_TRUE(stored.is_object());
  EXPECT_THAT(stored["key"].get<std::string>(), HasSubstr("bwrap|"));
  EXPECT_THAT(stored["key"].get<std::string>(), HasSubstr("|" + std::to_string(getuid())));
  // Another key (another bubblewrap, kernel or uid): probed again and rewritten.
  stored["key"] = "another bubblewrap";
  stored["checked_at"] = 0;
  const std::string foreign = stored.dump();
  dir_.Write("record", foreign);
  ASSERT_EQ(rename(dir_.Path("record").c_str(), record.c_str()), 0);
  ASSERT_EQ(chmod(record.c_str(), 0600), 0);
  RunResult second =
      RunProcess({NpExecBin(), "wrap", "--", "true"}, Options(RuntimeEnv(), 120000, project_));
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(ReadFile(record), foreign);
  // A record open to others is not read (and a full probe replaces it).
  ASSERT_EQ(chmod(record.c_str(), 0644), 0);
  RunResult third =
      RunProcess({NpExecBin(), "wrap", "--", "true"}, Options(RuntimeEnv(), 120000, project_));
  ASSERT_EQ(third.exit_code, 0) << third.err;
  ASSERT_EQ(lstat(record.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

// Issue 19 item 3 on the image runtimes: their clients take 100 000
// arguments as the direct tier does.
class ManyArgumentsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ManyArgumentsTest, AHundredThousandArgumentsRun) {
  NP_REQUIRE_RUNTIME(GetParam());
  TempDir dir;
  const std::string project = dir.MakeDir("project");
  MakeProject(project, ContainerConfig(GetParam(), "np-test:local"));
  std::vector<std::string> run = {NpExecBin(), "--", "sh", "-c", "echo $# ${100000}", "sh"};
  for (int i = 1; i <= 100000; ++i) run.push_back(std::to_string(i));
  RunResult r = RunProcess(run, Options(RuntimeEnv(), 300000, project));
  EXPECT_EQ(r.exit_code, 0) << r.err.substr(0, 2000);
  EXPECT_EQ(r.out, "100000 100000\n");
}

INSTANTIATE_TEST_SUITE_P(Runtimes, ManyArgumentsTest, ::testing::Values("docker", "podman"),
                         RuntimeName);

}  // namespace
}  // namespace np::testing
