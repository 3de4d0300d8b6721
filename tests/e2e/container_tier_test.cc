// End-to-end tests of the container tier on a real runtime (issue 4 item 2,
// issue 9 item 5): the built np-exec runs a program through its own run path
// in a temporary project configured for tier "container", and every promise
// of design.md section 4 is checked from INSIDE the sandbox. The suite is
// parameterised over docker, podman and bwrap; where bubblewrap differs by
// design (no image, no cgroup limits, the host's /usr visible) the test says so.
//
// Under CI=true a runtime that is not usable fails these tests; otherwise they
// skip (scripts/test.sh brings the runtimes up first).
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "core/sha256.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"

namespace np::testing {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::Not;

// The names in `dir`, sorted.
std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string RandomToken() {
  std::random_device rd;
  std::ostringstream out;
  out << std::hex << rd() << rd();
  return out.str();
}

class ContainerTierTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    NP_REQUIRE_RUNTIME(runtime());
    project_ = dir_.MakeDir("project");
    MakeProject(project_, ContainerConfig(runtime(), "np-test:local"));
  }

  const std::string& runtime() const { return GetParam(); }
  bool is_bwrap() const { return runtime() == "bwrap"; }

  void Configure(const nlohmann::json& container, const std::string& image = "np-test:local") {
    MakeProject(project_,
                ContainerConfig(runtime(), image,
                                container.is_null() ? nlohmann::json::object() : container));
  }

  // np-exec ARGS..., from `cwd` (default: the project).
  RunResult Np(const std::vector<std::string>& args, const std::string& stdin_data = "",
               std::vector<std::string> env = {}, const std::string& cwd = "") {
    std::vector<std::string> argv = {NpExecBin()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, Options(env.empty() ? RuntimeEnv() : env, 120000,
                                    cwd.empty() ? project_ : cwd, stdin_data));
  }

  // np-exec -- sh -c SCRIPT.
  RunResult Sh(const std::string& script, const std::string& stdin_data = "") {
    return Np({"--", "sh", "-c", script}, stdin_data);
  }

  TempDir dir_;
  std::string project_;
};

// Several programs, each in its own image: `images` picks node's image by the
// program's name, and every other program runs in `image` (which has no
// node). bubblewrap has no image: the host's node runs.
TEST_P(ContainerTierTest, ImagesPickEachProgramsImage) {
  Configure({{"images", {{"node", "np-node:local"}}}});
  RunResult node = Np({"--", "node", "-e", "console.log('node ran')"});
  EXPECT_EQ(node.exit_code, 0) << node.err;
  EXPECT_EQ(node.out, "node ran\n");
  RunResult other = Sh("command -v node || echo no node here");
  EXPECT_EQ(other.exit_code, 0) << other.err;
  if (is_bwrap()) {
    EXPECT_NE(other.out, "no node here\n");
    return;
  }
  EXPECT_EQ(other.out, "no node here\n");
  // The audit log names the image each ran in.
  std::vector<std::string> images;
  int bad = 0;
  for (const nlohmann::json& r : ReadAuditLog(project_, &bad)) {
    if (r.value("decision", "") == "run") images.push_back(r.value("image", ""));
  }
  EXPECT_EQ(images, std::vector<std::string>({"np-node:local", "np-test:local"}));
  // `which` names it too.
  RunResult which = Np({"which", "node", "--json"});
  EXPECT_EQ(nlohmann::json::parse(which.out, nullptr, false).value("image", ""), "np-node:local")
      << which.out << which.err;
}

// Interface names listed in /proc/net/dev.
std::set<std::string> Interfaces(const std::string& net_dev) {
  std::set<std::string> names;
  std::stringstream in(net_dev);
  std::string line;
  while (std::getline(in, line)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    name.erase(0, name.find_first_not_of(' '));
    names.insert(name);
  }
  return names;
}

TEST_P(ContainerTierTest, OnlyLoopbackInterface) {
  RunResult r = Np({"--", "cat", "/proc/net/dev"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Interfaces(r.out), std::set<std::string>({"lo"})) << r.out;
}

TEST_P(ContainerTierTest, NameResolutionFails) {
  Configure({}, "np-node:local");
  RunResult r = Np({"--", "node", "-e",
                    "require('dns').lookup('example.com', (e, a) => {"
                    " console.log(e ? 'failed ' + e.code : 'resolved ' + a);"
                    " process.exit(e ? 0 : 3); })"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("failed")) << r.err;
}

TEST_P(ContainerTierTest, EveryCapabilitySetIsEmptyAndNoNewPrivs) {
  RunResult r = Np({"--", "cat", "/proc/self/status"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* set : {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}) {
    EXPECT_THAT(r.out, HasSubstr(std::string(set) + ":\t0000000000000000")) << set << "\n" << r.out;
  }
  EXPECT_THAT(r.out, HasSubstr("NoNewPrivs:\t1"));
}

TEST_P(ContainerTierTest, RootFilesystemIsReadOnly) {
  RunResult r =
      Sh("touch /np-root-probe; echo rc=$?; touch /etc/np-probe 2>/dev/null; echo etc=$?");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("rc=1"));
  EXPECT_THAT(r.out, Not(HasSubstr("etc=0")));
  EXPECT_THAT(r.err, HasSubstr("Read-only file system"));
}

TEST_P(ContainerTierTest, TmpAndHomeAreWritableAndGoneWithTheContainer) {
  RunResult first =
      Sh("echo t > /tmp/np-left && echo h > \"$HOME/np-left\" && "
         "cat /tmp/np-left \"$HOME/np-left\" && echo \"$HOME\"");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out, "t\nh\n/home/np-exec\n");
  RunResult second = Sh("ls /tmp/np-left; ls \"$HOME/np-left\"; echo done");
  EXPECT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.out, "done\n");
  EXPECT_THAT(second.err, HasSubstr("No such file"));
}

TEST_P(ContainerTierTest, ProjectIsReadWriteAtItsOwnPathOwnedByCaller) {
  dir_.Write("project/host.txt", "from the host\n");
  // sh -c SCRIPT NAME: $0 is the project path, passed as an argument.
  RunResult r =
      Np({"--", "sh", "-c",
          "cat \"$0/host.txt\" && echo inside > \"$0/inside.txt\" && id -u && id -g", project_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "from the host\n" + std::to_string(getuid()) + "\n" + std::to_string(getgid()) + "\n");
  struct stat st;
  ASSERT_EQ(stat((project_ + "/inside.txt").c_str(), &st), 0);
  EXPECT_EQ(ReadFile(project_ + "/inside.txt"), "inside\n");
  EXPECT_EQ(st.st_uid, getuid());
  EXPECT_EQ(st.st_gid, getgid());
}

TEST_P(ContainerTierTest, HostSecretOutsideProjectIsUnreadable) {
  const std::string home = dir_.MakeDir("home");
  const std::string key = dir_.Write("home/.ssh/id_rsa", "FAKE-PRIVATE-KEY\n", 0600);
  std::vector<std::string> env = RuntimeEnv({"HOME=" + home});
  RunResult r = Np({"--", "sh", "-c",
                    "cat \"$0\"; cat ../home/.ssh/id_rsa; cat ~/.ssh/id_rsa; "
                    "echo end",
                    key},
                   "", env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "end\n");
  EXPECT_THAT(r.out + r.err, Not(HasSubstr("FAKE-PRIVATE-KEY")));
}

// np-exec's state store (trust records, persistent homes, warm sandboxes'
// sockets) inside the project would be handed to the sandbox with it: a
// project that holds it is refused, without extra mounts as with them, and
// its program never runs. On an engine a user of its own is asked for, so no
// account view is planned (whose own check, that it lies outside the
// project, refuses the caller's user here as well).
TEST_P(ContainerTierTest, AProjectThatHoldsNpExecsStateIsRefused) {
  if (!is_bwrap()) Configure({{"user", "1000:1000"}});
  const std::vector<std::string> env = RuntimeEnv({"XDG_STATE_HOME=" + project_ + "/.state"});
  RunResult trusted = Np({"trust"}, "", env);
  ASSERT_EQ(trusted.exit_code, 0) << trusted.err;
  ASSERT_TRUE(std::filesystem::is_directory(project_ + "/.state/np-exec"));
  RunResult r = Np({"--", "sh", "-c", "touch ran; ls -A .state/np-exec"}, "", env);
  EXPECT_EQ(r.exit_code, 125) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("isolation-mount-forbidden-source"));
  EXPECT_FALSE(std::filesystem::exists(project_ + "/ran")) << "the program ran";
}

TEST_P(ContainerTierTest, ForwardedVariableArrivesExactly) {
  const std::string value = "two words $HOME `x` 'q' \"dq\"\nsecond line\t" + RandomToken();
  std::vector<std::string> env = RuntimeEnv({"NP_E2E_SECRET=" + value});
  const std::string script = "printf '%s|' \"${NP_E2E_SECRET-unset}\"";
  RunResult r = Np({"--env", "NP_E2E_SECRET", "--", "sh", "-c", script}, "", env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, value + "|");
  // Not forwarded: not there.
  RunResult unforwarded = Np({"--", "sh", "-c", script}, "", env);
  EXPECT_EQ(unforwarded.exit_code, 0);
  EXPECT_EQ(unforwarded.out, "unset|");
}

// The interposer's variables never reach the inside, even when named: the
// runtime client's environment lacks them (docker, podman), and bubblewrap's
// is built without them.
TEST_P(ContainerTierTest, InterposerVariablesNeverForwarded) {
  std::vector<std::string> env =
      RuntimeEnv({"NP_EXEC_PRELOAD_NAMES=node,npx", "NP_EXEC_PRELOAD=0", "NP_E2E_PLAIN=kept"});
  const std::string script =
      "printf '%s|%s|%s' \"${NP_EXEC_PRELOAD_NAMES-unset}\" \"${NP_EXEC_PRELOAD-unset}\" "
      "\"${NP_E2E_PLAIN-unset}\"";
  RunResult r =
      Np({"--env", "NP_EXEC_PRELOAD_NAMES,NP_EXEC_PRELOAD,NP_E2E_PLAIN", "--", "sh", "-c", script},
         "", env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "unset|unset|kept");
}

TEST_P(ContainerTierTest, ForwardedValueIsInNoHostCmdline) {
  const std::string token = "np-secret-" + RandomToken();
  const std::string sleep_arg = std::to_string(300 + std::random_device()() % 500);
  std::vector<std::string> env = RuntimeEnv({"NP_E2E_SECRET=value with " + token});
  RunOptions options = Options(env, 0, project_);
  pid_t pid = StartProcess({NpExecBin(), "--env", "NP_E2E_SECRET", "--", "sleep", sleep_arg},
                           options, dir_.Path("out"), dir_.Path("err"));
  ASSERT_GT(pid, 0);
  const std::string marker = std::string("sleep\0", 6) + sleep_arg + std::string("\0", 1);
  bool running = WaitFor([&] { return !PidsWithCmdlinePrefix(marker).empty(); }, 60000);
  std::vector<pid_t> leaking = PidsWithCmdline(token);
  kill(pid, SIGTERM);
  EXPECT_EQ(WaitProcess(pid, 30000), 128 + SIGTERM) << ReadFile(dir_.Path("err"));
  ASSERT_TRUE(running) << ReadFile(dir_.Path("err"));
  EXPECT_TRUE(leaking.empty()) << "the value is in /proc/" << leaking.front() << "/cmdline";
}

// Issue 15, item 11: podman kept a forwarded value in its state database
// (bolt_state.db) after the container was gone. Forwarded values now go in as
// podman secrets removed with the spawn: the value arrives, and afterwards it
// is neither in the database nor in a secret.
TEST_P(ContainerTierTest, AForwardedValueLeavesNothingInTheRuntimesState) {
  const std::string token = "np-secret-" + RandomToken();
  std::vector<std::string> env = RuntimeEnv({"NP_E2E_SECRET=" + token});
  RunResult r =
      Np({"--env", "NP_E2E_SECRET", "--", "sh", "-c", "echo \"$NP_E2E_SECRET\""}, "", env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, token + "\n");
  if (runtime() != "podman") return;
  RunResult info = RunRuntime("podman", {"info", "--format", "{{.Store.GraphRoot}}"});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const std::string root = info.out.substr(0, info.out.find('\n'));
  const std::string db = ReadFile(root + "/libpod/bolt_state.db");
  ASSERT_FALSE(db.empty()) << root;
  EXPECT_EQ(db.find(token), std::string::npos) << "the value is in podman's state database";
  RunResult secrets = RunRuntime("podman", {"secret", "ls", "--format", "{{.Name}}"});
  EXPECT_EQ(secrets.out.find("np-exec-"), std::string::npos) << secrets.out;
}

// The same for a printed plan run as printed (sandbox-exec): on podman the
// value goes in as a secret there too, and none is left.
TEST_P(ContainerTierTest, APrintedPlansForwardedValueLeavesNothingInTheRuntimesState) {
  const std::string token = "np-secret-" + RandomToken();
  std::vector<std::string> env = RuntimeEnv({"NP_E2E_SECRET=" + token});
  RunResult wrap =
      Np({"wrap", "--env", "NP_E2E_SECRET", "--", "sh", "-c", "echo \"$NP_E2E_SECRET\""}, "", env);
  ASSERT_EQ(wrap.exit_code, 0) << wrap.err;
  const nlohmann::json plan = nlohmann::json::parse(wrap.out);
  EXPECT_EQ(plan.dump().find(token), std::string::npos) << "a printed plan carries no value";
  std::vector<std::string> argv = {plan["bin"].get<std::string>()};
  for (const auto& arg : plan["args"]) argv.push_back(arg.get<std::string>());
  RunResult r = RunProcess(argv, Options(env, 120000, project_));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, token + "\n");
  if (runtime() != "podman") return;
  EXPECT_EQ(std::find(argv.begin(), argv.end(), "--env") != argv.end(), true)
      << "sandbox-exec is told the forwarded names";
  RunResult info = RunRuntime("podman", {"info", "--format", "{{.Store.GraphRoot}}"});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const std::string root = info.out.substr(0, info.out.find('\n'));
  EXPECT_EQ(ReadFile(root + "/libpod/bolt_state.db").find(token), std::string::npos)
      << "the value is in podman's state database";
  RunResult secrets = RunRuntime("podman", {"secret", "ls", "--format", "{{.Name}}"});
  EXPECT_EQ(secrets.out.find("np-exec-"), std::string::npos) << secrets.out;
}

TEST_P(ContainerTierTest, ExitStatusPropagates) {
  EXPECT_EQ(Sh("exit 7").exit_code, 7);
  EXPECT_EQ(Sh("exit 0").exit_code, 0);
}

TEST_P(ContainerTierTest, NotFoundInsideIs127) {
  RunResult r = Np({"--", "np-no-such-program"});
  EXPECT_EQ(r.exit_code, 127) << r.err;
}

// A program that exists on the host, outside the project and the mounts,
// does not exist inside: 127 on every runtime (bubblewrap would say 1), and
// it never runs.
TEST_P(ContainerTierTest, HostOnlyProgramIs127) {
  const std::string sentinel = project_ + "/host-program-ran";
  const std::string program = dir_.Write("outside/tool", "#!/bin/sh\ntouch '" + sentinel + "'\n");
  ASSERT_EQ(chmod(program.c_str(), 0755), 0);
  RunResult r = Np({"--", program});
  EXPECT_EQ(r.exit_code, 127) << r.err;
  EXPECT_FALSE(FileExists(sentinel));
  // A link in the project to it dangles inside.
  ASSERT_EQ(symlink(program.c_str(), (project_ + "/tool-link").c_str()), 0);
  r = Np({"--", "./tool-link"});
  EXPECT_EQ(r.exit_code, 127) << r.err;
  EXPECT_FALSE(FileExists(sentinel));
}

TEST_P(ContainerTierTest, MegabyteOnStdinArrivesIntact) {
  std::string data(1 << 20, '\0');
  std::mt19937 random(42);
  for (char& c : data) c = static_cast<char>(random());
  RunResult r = Np({"--", "sha256sum"}, data);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, 64), Sha256Hex(data));
}

TEST_P(ContainerTierTest, StdoutAndStderrStayApart) {
  RunResult r = Sh("echo to-out; echo to-err >&2; echo more-out");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "to-out\nmore-out\n");
  EXPECT_EQ(r.err, "to-err\n");
}

TEST_P(ContainerTierTest, WorkingDirectoryMapsToTheSamePlaceInside) {
  const std::string sub = dir_.MakeDir("project/src/deep dir");
  RunResult r = Np({"--", "pwd"}, "", {}, sub);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, sub + "\n");
}

// With isolation.container.workdir the project is mounted there, and a
// program in the project, named relative to the working directory, runs.
TEST_P(ContainerTierTest, ProjectProgramRunsWithAWorkdir) {
  Configure({{"workdir", "/work"}});
  const std::string tool = dir_.Write("project/bin/tool.sh", "#!/bin/sh\necho \"in $(pwd)\"\n");
  ASSERT_EQ(chmod(tool.c_str(), 0755), 0);
  RunResult r = Np({"--", "bin/tool.sh"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "in /work\n");
}

TEST_P(ContainerTierTest, ExtraReadOnlyMountIsReadableNotWritable) {
  const std::string data = dir_.MakeDir("data");
  dir_.Write("data/file.txt", "extra\n");
  Configure({{"mounts", {{{"source", data}, {"target", "/np-extra"}, {"mode", "ro"}}}}});
  RunResult r = Sh("cat /np-extra/file.txt; touch /np-extra/new; echo rc=$?");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "extra\nrc=1\n");
  EXPECT_THAT(r.err, HasSubstr("Read-only file system"));
  EXPECT_FALSE(FileExists(data + "/new"));
}

// A refused mount is refused before any runtime client starts: a recording
// wrapper named like the runtime comes first on PATH, and no container of
// this np-exec exists (and, under CI where nothing else runs, the count of
// all containers is unchanged).
class RefusedMountTest : public ContainerTierTest {
 protected:
  void ExpectRefused(const nlohmann::json& mount, const std::string& code) {
    const std::string bin = dir_.MakeDir("bin");
    const std::string record = dir_.Path("client-calls");
    dir_.Write("bin/" + runtime(),
               "#!/bin/sh\necho \"$*\" >> '" + record + "'\nPATH=${PATH#*:} exec " + runtime() +
                   " \"$@\"\n",
               0755);
    Configure({{"mounts", {mount}}});
    std::vector<std::string> env = RuntimeEnv();
    std::string path;
    for (const std::string& e : env) {
      if (e.rfind("PATH=", 0) == 0) path = e.substr(5);
    }
    SetEnv(env, "PATH", bin + ":" + path);
    const int before = is_bwrap() ? 0 : CountContainers(runtime());
    const std::string sentinel = project_ + "/sentinel";
    RunResult r = Np({"--", "touch", sentinel}, "", env);
    EXPECT_EQ(r.exit_code, 125) << r.err;
    EXPECT_THAT(r.err, HasSubstr(code));
    EXPECT_FALSE(FileExists(sentinel));
    std::string calls = ReadFile(record);
    EXPECT_THAT(calls, Not(HasSubstr("run"))) << calls;
    if (!is_bwrap()) {
      // No more than before: a container of an earlier test may end
      // meanwhile (a warm sandbox's idle time, NP_E2E_WARM), none may start.
      const int after = CountContainers(runtime());
      if (InCi()) {
        EXPECT_LE(after, before);
      }
    }
  }
};

TEST_P(RefusedMountTest, ForbiddenSourceRefusedBeforeAnyContainer) {
  ExpectRefused({{"source", "/var/run/docker.sock"}, {"target", "/sock"}, {"mode", "ro"}},
                "isolation-mount-forbidden-source");
}

// Issue 26, item 3: the host's other control surfaces, even read-only: the
// system bus (systemd starts units for it), systemd's own endpoints,
// dockerd's key, the lock directories.
TEST_P(RefusedMountTest, HostControlSurfacesRefusedBeforeAnyContainer) {
  for (const char* source : {"/run/dbus", "/run/systemd", "/etc/docker", "/run/lock", "/var/lock",
                             "/etc/docker/key.json"}) {
    ExpectRefused({{"source", source}, {"target", "/surface"}, {"mode", "ro"}},
                  "isolation-mount-forbidden-source");
  }
}

// Issue 26, item 3: a directory under /run that holds a socket is found by
// walking /run, whatever its name: a daemon np-exec never heard of.
TEST_P(RefusedMountTest, AnyDirectoryUnderRunHoldingASocketIsRefused) {
  const std::string daemon = "/run/np-exec-test-daemon-" + std::to_string(getpid());
  if (mkdir(daemon.c_str(), 0755) != 0 || mkdir((daemon + "/sub").c_str(), 0755) != 0) {
    NP_NEEDS("cannot create " << daemon << " (the test makes a daemon's directory under /run)");
  }
  ASSERT_EQ(mknod((daemon + "/sub/control.sock").c_str(), S_IFSOCK | 0600, 0), 0);
  std::ofstream(daemon + "/sub/state") << "state\n";
  ExpectRefused({{"source", daemon + "/sub"}, {"target", "/d"}, {"mode", "ro"}},
                "isolation-mount-forbidden-source");
  ExpectRefused({{"source", daemon + "/sub/state"}, {"target", "/d"}, {"mode", "ro"}},
                "isolation-mount-forbidden-source");
  // Its parent holds it, so a mount of the parent would show it too.
  ExpectRefused({{"source", daemon}, {"target", "/d"}, {"mode", "ro"}},
                "isolation-mount-forbidden-source");
  unlink((daemon + "/sub/control.sock").c_str());
  unlink((daemon + "/sub/state").c_str());
  rmdir((daemon + "/sub").c_str());
  rmdir(daemon.c_str());
}

TEST_P(RefusedMountTest, WritableOutsideProjectRefusedBeforeAnyContainer) {
  const std::string outside = dir_.MakeDir("outside");
  ExpectRefused({{"source", outside}, {"target", "/out"}, {"mode", "rw"}},
                "isolation-mount-writable-outside-project");
}

TEST_P(RefusedMountTest, SourceInsideAProjectRefusedBeforeAnyContainer) {
  dir_.MakeDir("project/data");
  ExpectRefused({{"source", project_ + "/data"}, {"target", "/d"}, {"mode", "ro"}},
                "isolation-mount-source-unstable");
}

// Issue 15, item 2: a program in one project's sandbox swaps a folder of its
// project with a link to `/` in a tight loop, while another project's config
// mounts that folder read-only. np-exec checked the source and the runtime
// resolved the path again, so some spawns got the host's `/`. Now the source
// is refused, every time, before any runtime starts.
TEST_P(ContainerTierTest, AMountSourceSwappedForALinkNeverReachesTheRuntime) {
  Configure({});
  dir_.MakeDir("project/data");
  dir_.Write("project/data/file.txt", "data\n");
  const std::string victim = dir_.MakeDir("victim");
  MakeProject(
      victim,
      ContainerConfig(
          runtime(), "np-test:local",
          {{"mounts", {{{"source", project_ + "/data"}, {"target", "/d"}, {"mode", "ro"}}}}}));
  const std::string stop = project_ + "/stop";
  const pid_t swapper = StartProcess(
      {NpExecBin(), "--", "sh", "-c",
       "while [ ! -e stop ]; do mv data data.x && ln -s / data && rm data && mv data.x data; "
       "done"},
      Options(RuntimeEnv(), 120000, project_), dir_.Path("swapper.out"), dir_.Path("swapper.err"));
  ASSERT_GT(swapper, 0);
  int root_seen = 0;
  for (int i = 0; i < 8; ++i) {
    RunResult r = Np({"--", "ls", "/d"}, "", {}, victim);
    EXPECT_EQ(r.exit_code, 125) << r.out << r.err;
    // Caught mid-swap, the source is missing or the link is `/` (forbidden);
    // otherwise it lies in a project. Refused, whichever.
    EXPECT_THAT(r.err, AnyOf(HasSubstr("isolation-mount-source-unstable"),
                             HasSubstr("isolation-mount-source-missing"),
                             HasSubstr("isolation-mount-forbidden-source")));
    if (r.out.find("etc") != std::string::npos) ++root_seen;
  }
  dir_.Write("project/stop", "");
  EXPECT_EQ(WaitProcess(swapper, 60000), 0) << ReadFile(dir_.Path("swapper.err"));
  EXPECT_EQ(root_seen, 0);
  EXPECT_EQ(ReadFile(project_ + "/data/file.txt"), "data\n");
}

// Issue 15, item 2, the project mount itself: a project nested in another
// (a slice worktree, a package of a monorepo) can be renamed by the outer
// project's sandbox. Its program swaps the inner project for a link to a
// folder outside every project in a tight loop while the inner project
// spawns: np-exec checked the path, the runtime resolved it again, and the
// inner sandbox got the linked folder read-write. Now every spawn either runs
// in the real inner project or is refused, and the folder outside is byte for
// byte what it was.
TEST_P(ContainerTierTest, AProjectSwappedForALinkIsNeverWhatTheSandboxGets) {
  Configure({});
  const std::string inner = dir_.MakeDir("project/inner");
  MakeProject(inner, ContainerConfig(runtime(), "np-test:local"));
  dir_.Write("project/inner/mine.txt", "inner\n");
  const std::string decoy = dir_.MakeDir("decoy");
  dir_.Write("decoy/secret.txt", "decoy secret\n");
  // What a placeholder (a protected name the inner project lacks) would bind
  // through the link: a credential of the folder outside.
  dir_.Write("decoy/.claude/credentials", "decoy credential\n");
  // The inner project's caller: a shell whose working directory is the real
  // inner project, whatever its name at the moment, runs the spawns. (A
  // docker client fed a path that vanished mid-start can hang; the timeout
  // bounds that, and np-exec's watchdog removes the container.)
  const int spawns = is_bwrap() ? 20 : 10;
  const std::string out = dir_.MakeDir("out");
  const pid_t caller = StartProcess(
      {"/bin/sh", "-c",
       "while [ ! -e " + out + "/go ]; do sleep 0.05; done; for i in $(seq " +
           std::to_string(spawns) + "); do timeout -s KILL 30 " + NpExecBin() +
           " -- sh -c 'cat secret.txt .claude/credentials mine.txt 2>/dev/null; touch marker' > " +
           out + "/out.$i 2> " + out + "/err.$i; echo $? > " + out + "/rc.$i; done"},
      Options(RuntimeEnv(), 300000, inner), dir_.Path("caller.out"), dir_.Path("caller.err"));
  ASSERT_GT(caller, 0);
  // The outer sandbox's program: rename the inner project away, put a link
  // to the decoy in its place, and put it back, as fast as it can; every
  // fourth time it leaves the real folder in place for a while (longer than
  // a docker spawn), so that some spawns can get through and show they ran
  // in the real folder, where a loaded machine's spawn always met a swap.
  const pid_t swapper = StartProcess(
      {NpExecBin(), "--", "sh", "-c",
       "ln -s " + decoy +
           " link; touch started; n=0; while [ ! -e stop ]; do mv inner inner.x; mv link inner; "
           "mv inner link; mv inner.x inner; sleep 0.01; n=$((n + 1)); "
           "if [ $((n % 4)) = 0 ]; then sleep 1; fi; done; rm -f link started"},
      Options(RuntimeEnv(), 300000, project_), dir_.Path("swapper.out"), dir_.Path("swapper.err"));
  ASSERT_GT(swapper, 0);
  for (int i = 0; i < 600 && access((project_ + "/started").c_str(), F_OK) != 0; ++i) {
    usleep(50000);
  }
  dir_.Write("out/go", "");
  EXPECT_EQ(WaitProcess(caller, 280000), 0) << ReadFile(dir_.Path("caller.err"));
  dir_.Write("project/stop", "");
  EXPECT_EQ(WaitProcess(swapper, 60000), 0) << ReadFile(dir_.Path("swapper.err"));
  int decoy_seen = 0;
  int ran = 0;
  for (int i = 1; i <= spawns; ++i) {
    const std::string n = std::to_string(i);
    const std::string spawn_out = ReadFile(out + "/out." + n);
    const std::string spawn_err = ReadFile(out + "/err." + n);
    const std::string rc = ReadFile(out + "/rc." + n);
    if (spawn_out.find("decoy") != std::string::npos) ++decoy_seen;
    if (rc == "0\n") {
      ++ran;
      EXPECT_EQ(spawn_out, "inner\n") << spawn_err;
    } else {
      // Caught mid-swap: refused before the program ran, by np-exec (a
      // code) or by the runtime, which found a path gone or not the pinned
      // one (125; podman says 127; bubblewrap 1, with its own message), or
      // stopped by the timeout (137).
      const char* warm = getenv("NP_E2E_WARM");
      if (is_bwrap() && rc == "1\n") {
        EXPECT_THAT(spawn_err, HasSubstr("bwrap: ")) << spawn_out;
      } else if (rc == "69\n" && warm != nullptr && std::string(warm) == "1") {
        // The same refusal by the runtime, met while a warm sandbox was being
        // started (NP_E2E_WARM): np-exec names it, before its keeper ran
        // (docker: "bind source path does not exist").
        EXPECT_THAT(spawn_err, HasSubstr("before its keeper started")) << spawn_out;
        EXPECT_THAT(spawn_err,
                    HasSubstr(is_bwrap() ? "bwrap: " : "(isolation-container-unavailable)"))
            << spawn_out;
      } else {
        EXPECT_THAT(rc, AnyOf("125\n", "127\n", "137\n")) << spawn_out << spawn_err;
      }
      EXPECT_EQ(spawn_out, "") << spawn_err;
    }
  }
  EXPECT_EQ(decoy_seen, 0);
  EXPECT_EQ(ListDir(decoy), std::vector<std::string>({".claude", "secret.txt"}));
  EXPECT_EQ(ListDir(decoy + "/.claude"), std::vector<std::string>({"credentials"}));
  EXPECT_EQ(ReadFile(decoy + "/secret.txt"), "decoy secret\n");
  EXPECT_EQ(ReadFile(inner + "/mine.txt"), "inner\n");
  // Not a test that passes by refusing everything.
  EXPECT_GT(ran, 0);
}

// One folder at two targets: on bubblewrap each bind gets a descriptor of
// its own (bubblewrap closes each one it binds).
TEST_P(ContainerTierTest, OneSourceAtTwoTargetsIsMountedAtBoth) {
  const std::string shared = dir_.MakeDir("shared");
  dir_.Write("shared/file.txt", "shared\n");
  Configure({{"mounts",
              {{{"source", shared}, {"target", "/a"}, {"mode", "ro"}},
               {{"source", shared}, {"target", "/b"}, {"mode", "ro"}}}}});
  RunResult r = Np({"--", "cat", "/a/file.txt", "/b/file.txt"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "shared\nshared\n");
}

TEST_P(ContainerTierTest, MemoryAndCpuLimitsAreInForce) {
  Configure({{"memory", "64m"}, {"cpus", "0.5"}});
  RunResult r = Np({"--", "cat", "/sys/fs/cgroup/memory/memory.limit_in_bytes",
                    "/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu/cpu.cfs_period_us"});
  if (is_bwrap()) {
    // Bubblewrap has no cgroup limits: configuring them is an error, not ignored.
    EXPECT_EQ(r.exit_code, 125);
    EXPECT_THAT(r.err, HasSubstr("isolation-bwrap-unsupported"));
    return;
  }
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "67108864\n50000\n100000\n");
}

TEST_P(ContainerTierTest, NodeScriptRunsInside) {
  Configure({}, "np-node:local");
  dir_.Write("project/tool.cjs",
             "const fs = require('fs');\n"
             "const ifs = fs.readFileSync('/proc/net/dev', 'utf8').split('\\n')\n"
             "  .filter(l => l.includes(':')).map(l => l.split(':')[0].trim());\n"
             "console.log(JSON.stringify({v: process.version, argv: process.argv.slice(2),\n"
             "  ifs, home: process.env.HOME, cwd: process.cwd()}));\n");
  RunResult r = Np({"tool.cjs", "a b", "c"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json out = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(out.is_object()) << r.out;
  // The node that ran is the sandbox's: bubblewrap shows the host's /usr, an
  // image has its own (Debian's nodejs, whatever node the host has).
  RunResult sandbox_node =
      is_bwrap() ? RunProcess({"/usr/bin/env", "node", "--version"}, Options(BaseEnv()))
                 : RunRuntime(runtime(), {"run", "--rm", "--network", "none", "--pull=never",
                                          "np-node:local", "node", "--version"});
  ASSERT_EQ(sandbox_node.exit_code, 0) << sandbox_node.err;
  EXPECT_EQ(out["v"].get<std::string>() + "\n", sandbox_node.out);
  EXPECT_EQ(out["argv"], nlohmann::json({"a b", "c"}));
  EXPECT_EQ(out["ifs"], nlohmann::json({"lo"}));  // Inside: the host has more.
  EXPECT_EQ(out["home"], "/home/np-exec");
  EXPECT_EQ(out["cwd"], project_);
}

// Docker and podman only: bubblewrap uses no image.
class ImageRuntimeTest : public ContainerTierTest {};

TEST_P(ImageRuntimeTest, MissingImageIsAClearErrorAndNoPull) {
  Configure({}, "np-no-such-image:e2e");
  const std::string sentinel = project_ + "/sentinel";
  RunResult r = Np({"--", "touch", sentinel});
  EXPECT_EQ(r.exit_code, 125) << r.err;
  EXPECT_THAT(r.err, HasSubstr("np-no-such-image:e2e"));
  EXPECT_THAT(r.err, HasSubstr("isolation-image-missing"));
  EXPECT_THAT(r.err, Not(HasSubstr("registry")));
  EXPECT_THAT(r.err, Not(HasSubstr("Pulling")));
  EXPECT_FALSE(FileExists(sentinel));
  EXPECT_NE(RunRuntime(runtime(), {"image", "inspect", "np-no-such-image:e2e"}).exit_code, 0);
}

INSTANTIATE_TEST_SUITE_P(Runtimes, ContainerTierTest,
                         ::testing::Values("docker", "podman", "bwrap"), RuntimeName);
INSTANTIATE_TEST_SUITE_P(Runtimes, ImageRuntimeTest, ::testing::Values("docker", "podman"),
                         RuntimeName);
INSTANTIATE_TEST_SUITE_P(Runtimes, RefusedMountTest, ::testing::Values("docker", "podman", "bwrap"),
                         RuntimeName);

}  // namespace
}  // namespace np::testing
