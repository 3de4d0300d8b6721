// The LD_PRELOAD exec interposer (shim/preload): a dynamically linked C host
// execs a node-like target by absolute path through every exec-family
// function and posix_spawn(p); each spawn must be wrapped by np-exec exactly
// once (one audit line, NP_EXEC_DEPTH=1), anything else must run untouched,
// and a failing exec must fail with the errno it has without the library.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/ci.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace np::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kLibrary[] = NP_PRELOAD_LIB;
constexpr char kHost[] = NP_PRELOAD_EXEC_HOST;
constexpr char kRealNode[] = "/usr/bin/node";

// A node stand-in: prints a marker with its depth, and can start itself
// again (a child, not an exec in place) to build chains.
constexpr char kFakeNode[] = R"(#!/bin/sh
echo "FAKE-NODE depth=${NP_EXEC_DEPTH:-none} args=$*"
if [ "$1" = chain ] && [ "$2" -lt "$3" ]; then
  "$0" chain $(($2 + 1)) "$3" || exit $?
fi
if [ "$1" = forever ]; then
  "$0" forever
  echo "level-exit=$?"
fi
exit 0
)";

// A docker stand-in: answers the version probe and records `run`.
constexpr char kFakeDocker[] = R"(#!/bin/sh
if [ "$1" = version ]; then echo 24.0.7; exit 0; fi
echo "FAKE-DOCKER ld_preload=${LD_PRELOAD:-unset} args=$*"
exit 0
)";

const std::vector<std::string> kExecFunctions = {
    "execve", "execv",       "execvp",       "execvpe",     "execl",      "execlp",
    "execle", "posix_spawn", "posix_spawnp", "fork:execve", "fork:execvp"};

bool HaveRealNode() { return access(kRealNode, X_OK) == 0; }

int CountLines(const std::string& text, const std::string& needle) {
  int count = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find(needle) != std::string::npos) ++count;
  }
  return count;
}

class PreloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    project_ = tmp_.MakeDir("project");
    MakeProject(project_);
    bin_ = tmp_.MakeDir("bin");
    node_ = tmp_.Write("bin/node", kFakeNode, 0755);
    const char* path = getenv("PATH");
    path_ = bin_ + ":" + (path != nullptr ? path : "/usr/bin:/bin");
  }

  // The environment of a host with the interposer loaded.
  std::vector<std::string> Env(const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> env =
        BaseEnv({std::string("LD_PRELOAD=") + kLibrary, "PATH=" + path_});
    for (const std::string& entry : extra) {
      size_t eq = entry.find('=');
      SetEnv(env, entry.substr(0, eq), entry.substr(eq + 1));
    }
    return env;
  }

  RunResult Run(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                int timeout_ms = 60000) const {
    RunOptions options;
    options.cwd = project_;
    options.env = env;
    options.timeout_ms = timeout_ms;
    return RunProcess(argv, options);
  }

  RunResult Host(const std::vector<std::string>& args, const std::vector<std::string>& env) {
    std::vector<std::string> argv = {kHost};
    argv.insert(argv.end(), args.begin(), args.end());
    return Run(argv, env);
  }

  std::string AuditLog() const {
    const std::string path = project_ + "/.nubos-pilot/audit/np-exec.jsonl";
    return FileExists(path) ? ReadFile(path) : "";
  }
  int AuditRuns() const { return CountLines(AuditLog(), "\"decision\":\"run\""); }

  TempDir tmp_;
  std::string project_;
  std::string bin_;
  std::string node_;
  std::string path_;
};

TEST_F(PreloadTest, EveryExecFunctionIsWrappedExactlyOnce) {
  int expected = 0;
  for (const std::string& fn : kExecFunctions) {
    SCOPED_TRACE(fn);
    RunResult r = Host({fn, node_, "a", "b"}, Env());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "FAKE-NODE depth=1 args=a b\n") << r.err;
    EXPECT_EQ(AuditRuns(), ++expected);
  }
  // The audit names the resolved target, so the tier saw the real program.
  EXPECT_EQ(CountLines(AuditLog(), "\"path\":\"" + node_ + "\""), expected);
}

TEST_F(PreloadTest, PathVariantsResolveABareNameOnPath) {
  int expected = 0;
  for (const char* fn : {"execvp", "execvpe", "execlp", "posix_spawnp"}) {
    SCOPED_TRACE(fn);
    RunResult r = Host({fn, "node", "x"}, Env());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "FAKE-NODE depth=1 args=x\n") << r.err;
    EXPECT_EQ(AuditRuns(), ++expected);
  }
  EXPECT_EQ(CountLines(AuditLog(), "\"path\":\"" + node_ + "\""), expected);
}

TEST_F(PreloadTest, OtherProgramsRunUntouched) {
  const std::string other = tmp_.Write("bin/notnode", kFakeNode, 0755);
  for (const std::string& fn : kExecFunctions) {
    SCOPED_TRACE(fn);
    RunResult r = Host({fn, other, "a"}, Env());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "FAKE-NODE depth=none args=a\n") << r.err;
  }
  RunResult echo = Host({"execve", "/bin/echo", "plain"}, Env());
  EXPECT_EQ(echo.out, "plain\n");
  EXPECT_EQ(AuditLog(), "");
}

TEST_F(PreloadTest, DisabledDoesNothing) {
  for (const std::string& fn : kExecFunctions) {
    SCOPED_TRACE(fn);
    RunResult r = Host({fn, node_}, Env({"NP_EXEC_PRELOAD_DISABLE=1"}));
    EXPECT_EQ(r.out, "FAKE-NODE depth=none args=\n") << r.err;
  }
  EXPECT_EQ(AuditLog(), "");
}

TEST_F(PreloadTest, NamesComeFromTheEnvironment) {
  const std::string claude = tmp_.Write("bin/claude", kFakeNode, 0755);
  std::vector<std::string> env = Env({"NP_EXEC_PRELOAD_NAMES=claude,codex"});
  EXPECT_EQ(Host({"execve", claude}, env).out, "FAKE-NODE depth=1 args=\n");
  EXPECT_EQ(Host({"execve", node_}, env).out, "FAKE-NODE depth=none args=\n");
  EXPECT_EQ(AuditRuns(), 1);
}

TEST_F(PreloadTest, FailingExecKeepsItsErrno) {
  const std::string missing = tmp_.Path("nowhere/node");
  const std::string not_executable = tmp_.Write("plain/node", kFakeNode, 0644);
  const std::string directory = tmp_.MakeDir("dir/node");
  for (const std::string& target : {missing, not_executable, directory}) {
    for (const std::string& fn : kExecFunctions) {
      SCOPED_TRACE(fn + " " + target);
      RunResult with = Host({fn, target}, Env());
      RunResult without = Host({fn, target}, BaseEnv({"PATH=" + path_}));
      EXPECT_NE(without.exit_code, 0);
      EXPECT_EQ(with.exit_code, without.exit_code);
      EXPECT_EQ(with.out, without.out);
      EXPECT_THAT(with.out + std::to_string(with.exit_code), Not(HasSubstr("FAKE-NODE")));
    }
  }
  // A bare name whose only match on PATH is not executable.
  const std::string only = tmp_.MakeDir("only");
  tmp_.Write("only/node", kFakeNode, 0644);
  for (const char* fn : {"execvp", "execlp", "posix_spawnp"}) {
    SCOPED_TRACE(fn);
    RunResult with = Host({fn, "node"}, Env({"PATH=" + only}));
    RunResult without = Host({fn, "node"}, BaseEnv({"PATH=" + only}));
    EXPECT_EQ(with.out, without.out);
    EXPECT_EQ(with.out, "errno=13\n");
  }
  EXPECT_EQ(AuditLog(), "");
}

TEST_F(PreloadTest, TooManyArgumentsIsRefusedWithE2big) {
  std::vector<std::string> args = {"execve", node_};
  args.insert(args.end(), 16400, "x");
  RunResult r = Host(args, Env());
  EXPECT_EQ(r.out, "errno=7\n");
  EXPECT_EQ(AuditLog(), "");
}

TEST_F(PreloadTest, ShimIsNpExecAndIsNotWrappedAgain) {
  const std::string shims = tmp_.MakeDir("shims");
  ASSERT_EQ(symlink(NpExecBin().c_str(), (shims + "/node").c_str()), 0);
  std::vector<std::string> env = Env({"PATH=" + shims + ":" + path_});
  for (const char* fn : {"execve", "execvp", "posix_spawnp"}) {
    SCOPED_TRACE(fn);
    const std::string target = std::string(fn) == "execve" ? shims + "/node" : "node";
    RunResult r = Host({fn, target, "s"}, env);
    EXPECT_EQ(r.out, "FAKE-NODE depth=1 args=s\n") << r.err;
  }
  EXPECT_EQ(AuditRuns(), 3);
}

TEST_F(PreloadTest, ProgramNpExecStartedIsNotWrappedButItsChildrenAre) {
  // np-exec execs /bin/sh in place; sh's own exec in place of node is the
  // same process np-exec already ran through the tier.
  RunResult in_place =
      Run({NpExecBin(), "--", "/bin/sh", "-c", "exec " + node_ + " in-place"}, Env());
  EXPECT_EQ(in_place.exit_code, 0) << in_place.err;
  EXPECT_EQ(in_place.out, "FAKE-NODE depth=1 args=in-place\n") << in_place.err;
  EXPECT_EQ(AuditRuns(), 1);
  // A child of that program is a new spawn and is wrapped.
  RunResult child = Run({NpExecBin(), "--", "/bin/sh", "-c", node_ + " child; echo after"}, Env());
  EXPECT_EQ(child.exit_code, 0) << child.err;
  EXPECT_EQ(child.out, "FAKE-NODE depth=2 args=child\nafter\n") << child.err;
  EXPECT_EQ(AuditRuns(), 3);
}

TEST_F(PreloadTest, NestedChainIsWrappedOncePerLevel) {
  RunResult r = Host({"execve", node_, "chain", "1", "5"}, Env());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "FAKE-NODE depth=1 args=chain 1 5\nFAKE-NODE depth=2 args=chain 2 5\n"
            "FAKE-NODE depth=3 args=chain 3 5\nFAKE-NODE depth=4 args=chain 4 5\n"
            "FAKE-NODE depth=5 args=chain 5 5\n");
  EXPECT_EQ(AuditRuns(), 5);
}

TEST_F(PreloadTest, EndlessChainStopsAtTheDepthLimit) {
  RunResult r = Run({kHost, "execve", node_, "forever"}, Env(), 120000);
  ASSERT_FALSE(r.timed_out);
  EXPECT_THAT(r.err, HasSubstr("recursive-invocation"));
  const int levels = CountLines(r.out, "FAKE-NODE");
  EXPECT_GE(levels, 5);
  EXPECT_LE(levels, 64);
  EXPECT_EQ(AuditRuns(), levels);
  EXPECT_EQ(CountLines(r.out, "depth=" + std::to_string(levels) + " "), 1);
}

TEST_F(PreloadTest, ContainerTierRunsThroughTheRuntime) {
  MakeProject(project_, R"({"isolation": {"tier": "container"}})");
  tmp_.Write("bin/docker", kFakeDocker, 0755);
  std::vector<std::string> env = Env({"DOCKER_HOST=tcp://127.0.0.1:1"});
  for (const std::string& fn : kExecFunctions) {
    SCOPED_TRACE(fn);
    RunResult r = Host({fn, node_, "in-container"}, env);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("FAKE-DOCKER ld_preload=unset args=run "));
    EXPECT_THAT(r.out, HasSubstr("--network none"));
    EXPECT_THAT(r.out, HasSubstr(node_ + " in-container"));
    EXPECT_THAT(r.out, Not(HasSubstr("FAKE-NODE")));
  }
  EXPECT_EQ(AuditRuns(), static_cast<int>(kExecFunctions.size()));
}

TEST_F(PreloadTest, MissingNpExecFailsClosed) {
  const std::string lone = tmp_.MakeDir("lone") + "/libnp-exec-preload.so";
  std::ifstream in(kLibrary, std::ios::binary);
  std::ofstream(lone, std::ios::binary) << in.rdbuf();
  std::vector<std::string> env = Env({"LD_PRELOAD=" + lone});
  for (const char* fn : {"execve", "execvp", "posix_spawn"}) {
    SCOPED_TRACE(fn);
    RunResult r = Host({fn, node_}, env);
    EXPECT_EQ(r.out, "errno=13\n");
    EXPECT_THAT(r.err, HasSubstr("np-exec was not found"));
  }
  // Other programs are unaffected.
  EXPECT_EQ(Host({"execve", "/bin/echo", "ok"}, env).out, "ok\n");
}

TEST_F(PreloadTest, InstalledLayoutFindsEachOther) {
  const std::string prefix = tmp_.MakeDir("prefix");
  const std::string bin = tmp_.MakeDir("prefix/bin") + "/np-exec";
  const std::string lib = tmp_.MakeDir("prefix/lib/np-exec") + "/libnp-exec-preload.so";
  for (const auto& [from, to] : {std::pair<std::string, std::string>{NpExecBin(), bin},
                                 std::pair<std::string, std::string>{kLibrary, lib}}) {
    std::ifstream in(from, std::ios::binary);
    std::ofstream(to, std::ios::binary) << in.rdbuf();
    ASSERT_EQ(chmod(to.c_str(), 0755), 0);
  }
  RunResult shims = Run({bin, "shims", "install", tmp_.Path("s"), "--preload", "--json"},
                        BaseEnv({"PATH=" + path_}));
  ASSERT_EQ(shims.exit_code, 0) << shims.err;
  nlohmann::json out = nlohmann::json::parse(shims.out);
  EXPECT_EQ(out["preload_line"], "export LD_PRELOAD=\"" + lib + "\"");
  // The installed library finds PREFIX/bin/np-exec on its own.
  RunResult r = Host({"execve", node_}, Env({"LD_PRELOAD=" + lib}));
  EXPECT_EQ(r.out, "FAKE-NODE depth=1 args=\n") << r.err;
  EXPECT_EQ(AuditRuns(), 1);
}

// Issue 19: np-exec is looked for at the first exec of a configured program,
// not when the library loads. Here np-exec appears beside the library only
// after the host loaded it, and the exec still finds it (looked for at load,
// the exec would have been refused).
TEST_F(PreloadTest, NpExecIsLookedForAtTheFirstMatchingExecNotAtLoad) {
  int n = 0;
  for (const char* fn : {"execve", "posix_spawn", "fork:execvp"}) {
    SCOPED_TRACE(fn);
    const std::string dir = tmp_.MakeDir("late-" + std::to_string(++n));
    const std::string lib = dir + "/libnp-exec-preload.so";
    std::ifstream in(kLibrary, std::ios::binary);
    std::ofstream(lib, std::ios::binary) << in.rdbuf();
    RunResult r =
        Host({fn, node_}, Env({"LD_PRELOAD=" + lib, "NP_TEST_HOST_FIRST=cp '" + NpExecBin() +
                                                        "' '" + dir + "/np-exec'"}));
    EXPECT_EQ(r.out, "FAKE-NODE depth=1 args=\n") << r.err;
  }
  EXPECT_EQ(AuditRuns(), 3);
}

// The library reached through a link finds np-exec beside its real file (the
// lookup reads the real path of what it opened from /proc/self/fd).
TEST_F(PreloadTest, LibraryThroughALinkFindsNpExecBesideItsRealFile) {
  const std::string link = tmp_.MakeDir("links") + "/libnp-exec-preload.so";
  ASSERT_EQ(symlink(kLibrary, link.c_str()), 0);
  RunResult r = Host({"posix_spawn", node_}, Env({"LD_PRELOAD=" + link}));
  EXPECT_EQ(r.out, "FAKE-NODE depth=1 args=\n") << r.err;
  EXPECT_EQ(AuditRuns(), 1);
}

// A process that runs nothing the interposer wraps makes none of its system
// calls: nothing looks for np-exec or at /proc/self/exe (the constructor used
// to, in every process of the tree; issue 19). A wrapped exec does, which
// shows the trace would see them.
TEST_F(PreloadTest, ProcessesThatWrapNothingNeverLookForNpExec) {
  if (access("/usr/bin/strace", X_OK) != 0) NP_NEEDS("strace is not installed");
  auto trace = [&](const std::string& target, const std::string& name) {
    const std::string out = tmp_.Path(name);
    RunResult r =
        Run({"/usr/bin/strace", "-f", "-qq", "-o", out, kHost, "posix_spawn", target}, Env());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return ReadFile(out);
  };
  const std::string unwrapped = trace("/bin/true", "unwrapped.trace");
  EXPECT_THAT(unwrapped, HasSubstr("libnp-exec-preload.so")) << "the library was not loaded";
  EXPECT_THAT(unwrapped, Not(HasSubstr("/np-exec\"")));
  EXPECT_THAT(unwrapped, Not(HasSubstr("/proc/self/exe")));
  EXPECT_THAT(unwrapped, Not(HasSubstr("/proc/self/fd/")));
  const std::string wrapped = trace(node_, "wrapped.trace");
  EXPECT_THAT(wrapped, HasSubstr("/np-exec\""));
}

TEST_F(PreloadTest, ShimsInstallPreloadAndDoctor) {
  RunResult shims = Run({NpExecBin(), "shims", "install", tmp_.Path("s"), "--preload", "--json"},
                        BaseEnv({"PATH=" + path_}));
  ASSERT_EQ(shims.exit_code, 0) << shims.err;
  char real[4096];
  ASSERT_NE(realpath(kLibrary, real), nullptr);
  EXPECT_EQ(nlohmann::json::parse(shims.out)["preload_line"],
            std::string("export LD_PRELOAD=\"") + real + "\"");

  RunResult active = Run({NpExecBin(), "doctor", "--json"}, Env());
  nlohmann::json doctor = nlohmann::json::parse(active.out, nullptr, false);
  ASSERT_FALSE(doctor.is_discarded()) << active.out;
  EXPECT_EQ(doctor["interposer"]["active"], true);
  RunResult inactive = Run({NpExecBin(), "doctor", "--json"}, BaseEnv({"PATH=" + path_}));
  doctor = nlohmann::json::parse(inactive.out, nullptr, false);
  ASSERT_FALSE(doctor.is_discarded()) << inactive.out;
  EXPECT_EQ(doctor["interposer"]["active"], false);
}

// Real node, as nubos-pilot's hooks and workers use it: spawning the
// absolute process.execPath through child_process.
class RealNodeTest : public PreloadTest {
 protected:
  void SetUp() override {
    if (!HaveRealNode()) {
      // scripts/test.sh installs Debian's nodejs: under CI a missing node is a
      // broken set-up, never a silent skip.
      NP_NEEDS(kRealNode << " is not installed");
    }
    PreloadTest::SetUp();
  }
};

TEST_F(RealNodeTest, SpawnOfExecPathIsWrappedOnce) {
  const std::string script =
      "const r = require('child_process').spawnSync(process.execPath, ['-e', "
      "'console.log(\"child depth=\" + process.env.NP_EXEC_DEPTH)'], {encoding: 'utf8'});"
      "process.stdout.write(r.stdout); process.stderr.write(r.stderr || '');"
      "console.log('parent depth=' + (process.env.NP_EXEC_DEPTH || 'none'));"
      "process.exit(r.status);";
  RunResult r = Run({kRealNode, "-e", script}, Env());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "child depth=1\nparent depth=none\n") << r.err;
  EXPECT_EQ(AuditRuns(), 1);
  EXPECT_EQ(CountLines(AuditLog(), "\"program\":\"" + std::string(kRealNode) + "\""), 1);
}

TEST_F(RealNodeTest, NodeChainFiveDeepIsWrappedOncePerLevel) {
  const std::string chain =
      tmp_.Write("project/chain.js",
                 "const level = Number(process.argv[2] || 0);\n"
                 "console.log(`level=${level} depth=${process.env.NP_EXEC_DEPTH || 'none'}`);\n"
                 "if (level < 5) {\n"
                 "  const r = require('child_process').spawnSync(process.execPath,\n"
                 "      [__filename, String(level + 1)], {stdio: 'inherit'});\n"
                 "  process.exit(r.status === null ? 1 : r.status);\n"
                 "}\n");
  RunResult r = Run({kRealNode, chain}, Env());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "level=0 depth=none\nlevel=1 depth=1\nlevel=2 depth=2\nlevel=3 depth=3\n"
            "level=4 depth=4\nlevel=5 depth=5\n")
      << r.err;
  EXPECT_EQ(AuditRuns(), 5);
}

TEST_F(RealNodeTest, ContainerTierSpawnOfExecPathRunsInTheRuntime) {
  MakeProject(project_, R"({"isolation": {"tier": "container"}})");
  tmp_.Write("bin/docker", kFakeDocker, 0755);
  const std::string script =
      "const r = require('child_process').spawnSync(process.execPath, ['-e', '0'], "
      "{encoding: 'utf8'}); process.stdout.write(r.stdout); process.exit(r.status);";
  RunResult r = Run({kRealNode, "-e", script}, Env({"DOCKER_HOST=tcp://127.0.0.1:1"}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("FAKE-DOCKER ld_preload=unset args=run "));
  EXPECT_THAT(r.out, HasSubstr(std::string(kRealNode) + " -e 0"));
  EXPECT_EQ(AuditRuns(), 1);
}

}  // namespace
}  // namespace np::testing
