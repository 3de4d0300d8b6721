// Shim mode of the built np-exec: reached as `node` through a PATH-prepended
// directory, it runs the real node found later on PATH, skipping itself by
// device and inode and every other np-exec (real copies of the built binary)
// by its ELF note, never by name; a PATH of np-exec only is refused quickly.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/launcher/fakes.h"
#include "tests/support/ci.h"

namespace np::testing {
namespace {

using ::testing::HasSubstr;

class ShimTest : public ::testing::Test {
 protected:
  ShimTest() {
    shims_ = lab_.tmp().Path("shims");
    real_ = lab_.tmp().Path("real");
    InstallShim(shims_);
    WriteExecutable(real_ + "/node",
                    "#!/bin/sh\nprintf 'real-node'; printf ' [%s]' \"$@\"; echo\n");
  }

  void InstallShim(const std::string& dir) {
    std::filesystem::create_directories(dir);
    ASSERT_EQ(symlink(NpExecBin().c_str(), (dir + "/node").c_str()), 0);
  }

  // Runs DIR/node ARGS the way a host's execvp("node") does: argv[0] "node".
  RunResult RunNode(const std::string& dir, const std::string& path,
                    const std::vector<std::string>& args = {"tool.cjs", "a b"},
                    const std::vector<std::string>& extra_env = {}) {
    std::vector<std::string> argv = {dir + "/node"};
    argv.insert(argv.end(), args.begin(), args.end());
    RunOptions options;
    options.cwd = lab_.project();
    options.env = lab_.Env();
    SetEnv(options.env, "PATH", path);
    for (const std::string& entry : extra_env) {
      SetEnv(options.env, entry.substr(0, entry.find('=')), entry.substr(entry.find('=') + 1));
    }
    options.argv0 = "node";
    options.timeout_ms = 20000;
    return RunProcess(argv, options);
  }

  Lab lab_;
  std::string shims_;
  std::string real_;
};

TEST_F(ShimTest, OneShimDirRunsTheRealNode) {
  RunResult r = RunNode(shims_, shims_ + ":" + real_ + ":" + lab_.tools());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "real-node [tool.cjs] [a b]\n");
}

TEST_F(ShimTest, ExecsTheRealNodeInPlace) {
  WriteExecutable(real_ + "/node", "#!/bin/sh\necho $$\n");
  RunOptions options;
  options.cwd = lab_.project();
  options.env = lab_.Env();
  SetEnv(options.env, "PATH", shims_ + ":" + real_ + ":" + lab_.tools());
  options.argv0 = "node";
  const std::string out = lab_.tmp().Path("pid.out");
  pid_t pid = StartProcess({shims_ + "/node"}, options, out, lab_.tmp().Path("pid.err"));
  ASSERT_EQ(WaitProcess(pid, 20000), 0);
  EXPECT_EQ(ReadFile(out), std::to_string(pid) + "\n");
}

TEST_F(ShimTest, BehindTwoShimDirs) {
  const std::string second = lab_.tmp().Path("shims2");
  InstallShim(second);
  RunResult r = RunNode(shims_, shims_ + ":" + second + ":" + real_ + ":" + lab_.tools());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "real-node [tool.cjs] [a b]\n");
}

TEST_F(ShimTest, ThroughASymlinkedPathEntry) {
  const std::string link = lab_.tmp().Path("shims-link");
  ASSERT_EQ(symlink(shims_.c_str(), link.c_str()), 0);
  RunResult r = RunNode(link, link + ":" + shims_ + ":" + real_ + ":" + lab_.tools());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "real-node [tool.cjs] [a b]\n");
}

TEST_F(ShimTest, HardLinkUnderAnotherNameInASecondDir) {
  const std::string dir = lab_.tmp().MakeDir("hard");
  if (link(NpExecBin().c_str(), (dir + "/node").c_str()) != 0) {
    NP_NEEDS("the build tree and $TMPDIR are on different filesystems");
  }
  RunResult r = RunNode(shims_, shims_ + ":" + dir + ":" + real_ + ":" + lab_.tools());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "real-node [tool.cjs] [a b]\n");
  RunResult direct = RunNode(dir, dir + ":" + real_ + ":" + lab_.tools());
  EXPECT_EQ(direct.exit_code, 0) << direct.err;
  EXPECT_EQ(direct.out, "real-node [tool.cjs] [a b]\n");
}

// A copy has its own inode, so identity cannot recognise it; its ELF note
// does: it is skipped like the shim itself, and the real node behind it runs.
TEST_F(ShimTest, ACopyOfNpExecIsSkipped) {
  const std::string dir = lab_.tmp().MakeDir("copy");
  std::filesystem::copy_file(NpExecBin(), dir + "/node");
  RunResult r = RunNode(shims_, shims_ + ":" + dir + ":" + real_ + ":" + lab_.tools());
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "real-node [tool.cjs] [a b]\n");
}

// Two installations, each with its own shim directory on PATH (the .deb's and
// a cmake --install one): from either shim, both are skipped.
TEST_F(ShimTest, TwoInstallationsEachWithItsShimDirFindTheRealNode) {
  const std::string second_bin = lab_.tmp().MakeDir("second/bin") + "/np-exec";
  std::filesystem::copy_file(NpExecBin(), second_bin);
  const std::string second_shims = lab_.tmp().MakeDir("second/shims");
  ASSERT_EQ(symlink(second_bin.c_str(), (second_shims + "/node").c_str()), 0);
  const std::string path = shims_ + ":" + second_shims + ":" + real_ + ":" + lab_.tools();
  for (const std::string& entry : {shims_, second_shims}) {
    RunResult r = RunNode(entry, path);
    EXPECT_FALSE(r.timed_out) << entry;
    EXPECT_EQ(r.exit_code, 0) << entry << ": " << r.err;
    EXPECT_EQ(r.out, "real-node [tool.cjs] [a b]\n") << entry;
  }
  // And with the second installation first on PATH.
  RunResult reversed =
      RunNode(second_shims, second_shims + ":" + shims_ + ":" + real_ + ":" + lab_.tools());
  EXPECT_EQ(reversed.exit_code, 0) << reversed.err;
  EXPECT_EQ(reversed.out, "real-node [tool.cjs] [a b]\n");
}

// A PATH whose every match is np-exec (the shim, a copy, a link to the copy)
// has no real node: nothing real is behind the shim, 127 as exec's "not
// found", refused quickly, never looped.
TEST_F(ShimTest, OnlyNpExecAndItsCopiesOnPathIsAShimWithNoProgram) {
  const std::string dir = lab_.tmp().MakeDir("copy");
  std::filesystem::copy_file(NpExecBin(), dir + "/node");
  const std::string links = lab_.tmp().MakeDir("links");
  ASSERT_EQ(symlink((dir + "/node").c_str(), (links + "/node").c_str()), 0);
  RunResult r = RunNode(shims_, shims_ + ":" + dir + ":" + links + ":" + lab_.tools());
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_EQ(ErrorCodeOf(r.err), "shim-no-program");
  EXPECT_TRUE(r.out.empty());
}

// The note is matched, not the name: a real program named like np-exec's
// binary, or a script mentioning it, still runs.
TEST_F(ShimTest, AProgramThatMerelyMentionsNpExecRuns) {
  const std::string dir = lab_.tmp().MakeDir("mention");
  WriteExecutable(dir + "/node", "#!/bin/sh\n# np-exec np-exec\necho mention-node\n");
  RunResult r = RunNode(shims_, shims_ + ":" + dir + ":" + real_ + ":" + lab_.tools());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "mention-node\n");
}

// The exec-pid marker still stands behind the note: a copy the lookup cannot
// read (execute-only) is exec'd, and the copy refuses to run in np-exec's
// place. Root reads any file, so as root the shim runs as nobody.
TEST_F(ShimTest, AnUnreadableCopyIsStillRefusedNotLooped) {
  if (IsRoot() && access("/usr/bin/setpriv", X_OK) != 0) {
    NP_NEEDS("needs setpriv to run the shim as an unprivileged user");
  }
  const std::string dir = lab_.tmp().MakeDir("copy");
  std::filesystem::copy_file(NpExecBin(), dir + "/node");
  ASSERT_EQ(chmod((dir + "/node").c_str(), 0111), 0);
  std::vector<std::string> argv = {shims_ + "/node", "x"};
  RunOptions options;
  options.cwd = lab_.project();
  options.env = lab_.Env();
  if (IsRoot()) {
    ASSERT_EQ(chmod(lab_.tmp().path().c_str(), 0777), 0);
    argv = AsNobody(argv);  // setpriv execs the shim path: argv[0]'s name is node.
    // nobody's own operator state store.
    const std::string state = lab_.tmp().MakeDir("nobody-state");
    ASSERT_EQ(chown(state.c_str(), 65534, 65534), 0);
    SetEnv(options.env, "XDG_STATE_HOME", state);
  }
  SetEnv(options.env, "PATH", shims_ + ":" + dir + ":" + real_ + ":" + lab_.tools());
  options.timeout_ms = 20000;
  RunResult r = RunProcess(argv, options);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 125) << r.out << r.err;
  EXPECT_EQ(ErrorCodeOf(r.err), "recursive-invocation") << r.err;
  EXPECT_TRUE(r.out.empty()) << "the real node must not run behind an unrecognised copy";
}

TEST_F(ShimTest, OnlyShimsOnPathIsAShimWithNoProgram) {
  const std::string second = lab_.tmp().Path("shims2");
  InstallShim(second);
  RunResult r = RunNode(shims_, shims_ + ":" + second + ":" + lab_.tools());
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_EQ(ErrorCodeOf(r.err), "shim-no-program");
  EXPECT_TRUE(r.out.empty());
}

TEST_F(ShimTest, DepthAtTheLimitIsRefused) {
  const std::string path = shims_ + ":" + real_ + ":" + lab_.tools();
  RunResult at_limit = RunNode(shims_, path, {"x"}, {"NP_EXEC_DEPTH=16"});
  EXPECT_EQ(at_limit.exit_code, 125);
  EXPECT_EQ(ErrorCodeOf(at_limit.err), "recursive-invocation");
  EXPECT_TRUE(at_limit.out.empty());
  RunResult below = RunNode(shims_, path, {"x"}, {"NP_EXEC_DEPTH=15"});
  EXPECT_EQ(below.exit_code, 0) << below.err;
  EXPECT_EQ(below.out, "real-node [x]\n");
}

TEST_F(ShimTest, DepthMarkerIsPassedOn) {
  WriteExecutable(real_ + "/node", "#!/bin/sh\necho \"$NP_EXEC_DEPTH\"\n");
  RunResult r = RunNode(shims_, shims_ + ":" + real_ + ":" + lab_.tools(), {}, {"NP_EXEC_DEPTH=3"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "4\n");
}

// A wrapper that calls `node` again (in a child, so a new pid each time)
// re-enters np-exec through the shim; the depth marker stops the chain.
TEST_F(ShimTest, WrappersReenteringEachOtherStopAtTheDepthLimit) {
  WriteExecutable(real_ + "/node", "#!/bin/sh\nnode \"$@\"\n");
  RunResult r = RunNode(shims_, shims_ + ":" + real_ + ":" + lab_.tools(), {"x"});
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_EQ(ErrorCodeOf(r.err), "recursive-invocation");
  EXPECT_THAT(r.err, HasSubstr("NP_EXEC_DEPTH"));
}

TEST_F(ShimTest, ShimModeHonoursTheContainerTier) {
  lab_.Config(R"({"isolation":{"tier":"container"}})");
  RunResult r = RunNode(shims_, shims_ + ":" + real_ + ":" + lab_.tools());
  EXPECT_EQ(r.exit_code, 69);
  EXPECT_EQ(ErrorCodeOf(r.err), "isolation-container-unavailable");
  EXPECT_TRUE(r.out.empty()) << "the real node must not run on the host";
}

}  // namespace
}  // namespace np::testing
