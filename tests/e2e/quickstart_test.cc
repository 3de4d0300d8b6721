// The README's Quick start, run as written by a new user: a throwaway account
// (useradd, removed afterwards) runs the lines of the README's fenced block
// `sh quickstart-<runtime>`, read from README.md itself, after the README's
// install: under CI=true as root the package of this build (`cpack -G DEB`)
// is installed for real (`dpkg -i`, removed again afterwards), so the block
// runs the package's /usr/bin/np-exec; elsewhere, or where np-exec is
// installed already, the built np-exec is first on its PATH instead. A
// line starting with `sudo ` runs as root with USER naming the new account,
// as sudo would; the other lines run as that account (setpriv with its own
// groups, so a group the block added counts, as after logging in again),
// from a copy of the checkout's scripts/ and packaging/images/ that the
// account can read wherever the checkout itself lies. Then the host is checked: the agent CLI ran
// (in its image on docker, from the account's own npm prefix on bubblewrap), on bubblewrap the
// sandbox saw neither the account's own files nor the other homes, and each spawn is in the
// project's audit log.
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"
#include "tests/support/package.h"

namespace np::testing {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

// The lines of the README's block marked `sh quickstart-<runtime>`.
std::vector<std::string> QuickStartLines(const std::string& runtime) {
  std::istringstream in(ReadFile(SourceDir() + "/README.md"));
  const std::string marker = "```sh quickstart-" + runtime;
  std::vector<std::string> lines;
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!inside) {
      inside = line == marker;
      continue;
    }
    if (line == "```") break;
    lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

// The tag scripts/build-agent-image.sh gives the claude image it would build
// from this checkout (the hash of its recipe: the script, rootfs-lib.sh and
// the Dockerfile).
std::string ClaudeRecipeTag() {
  const std::string scripts = SourceDir() + "/scripts/";
  RunResult r = RunProcess({"/bin/sh", "-c", "cat \"$0\" \"$1\" \"$2\" | sha256sum | cut -c1-12",
                            scripts + "build-agent-image.sh", scripts + "rootfs-lib.sh",
                            SourceDir() + "/packaging/images/claude/Dockerfile"},
                           Options(BaseEnv()));
  std::string hash = r.out.substr(0, r.out.find('\n'));
  return "np-agent-claude:recipe-" + hash;
}

// The claude version the Dockerfile pins (ARG PACKAGE=...@VERSION).
std::string PinnedClaudeVersion() {
  std::smatch match;
  const std::string dockerfile = ReadFile(SourceDir() + "/packaging/images/claude/Dockerfile");
  if (!std::regex_search(dockerfile, match, std::regex(R"(ARG PACKAGE=\S+@([0-9][^\s]*))"))) {
    return "";
  }
  return match[1];
}

class QuickStartTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (geteuid() != 0 || access("/usr/sbin/useradd", X_OK) != 0 ||
        access("/usr/bin/setpriv", X_OK) != 0) {
      NP_NEEDS("needs root, useradd and setpriv to make a throwaway account");
    }
    NP_REQUIRE_RUNTIME(runtime());
    ASSERT_EQ(chmod(bin_dir_.path().c_str(), 0755), 0);
    bin_ = bin_dir_.MakeDir("bin");
    InstallNpExec();
    // What the block uses of the checkout, where the account can read it.
    checkout_ = bin_dir_.MakeDir("checkout");
    bin_dir_.MakeDir("checkout/packaging");
    for (const char* part : {"scripts", "packaging/images"}) {
      RunResult r = RunProcess({"/bin/cp", "-R", SourceDir() + "/" + part, checkout_ + "/" + part},
                               Options(BaseEnv()));
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    RunResult readable = RunProcess({"/bin/chmod", "-R", "a+rX", checkout_}, Options(BaseEnv()));
    ASSERT_EQ(readable.exit_code, 0) << readable.err;
    user_ = "npqs" + std::to_string(getpid());
    RunResult add = RunProcess(
        {"/usr/sbin/useradd", "--create-home", "--shell", "/bin/bash", user_}, Options(BaseEnv()));
    ASSERT_EQ(add.exit_code, 0) << add.err;
    created_ = true;
    const passwd* pw = getpwnam(user_.c_str());
    ASSERT_NE(pw, nullptr);
    uid_ = pw->pw_uid;
    gid_ = pw->pw_gid;
    home_ = pw->pw_dir;
  }

  // The package, installed as the README's install does (CI=true, as root,
  // and no np-exec on the machine yet); otherwise the built np-exec where
  // the new account can run it, as /usr/bin/np-exec would be (outside every
  // project, root's, not writable).
  void InstallNpExec() {
    const bool installed =
        access("/usr/bin/np-exec", F_OK) == 0 || access("/usr/local/bin/np-exec", F_OK) == 0 ||
        RunProcess({"/usr/bin/dpkg", "-s", "np-exec"}, Options(BaseEnv())).exit_code == 0;
    if (InCi() && !installed) {
      const std::string deb = BuildDeb(bin_dir_.MakeDir("deb"));
      ASSERT_FALSE(deb.empty());
      RunResult install = RunProcess({"/usr/bin/dpkg", "-i", deb}, Options(BaseEnv(), 300000));
      ASSERT_EQ(install.exit_code, 0) << install.out << install.err;
      package_installed_ = true;
      return;
    }
    RunResult copy = RunProcess({"/bin/cp", NpExecBin(), bin_ + "/np-exec"}, Options(BaseEnv()));
    ASSERT_EQ(copy.exit_code, 0) << copy.err;
  }

  void TearDown() override {
    if (package_installed_) {
      RunResult remove = RunProcess({"/usr/bin/dpkg", "-r", "np-exec"}, Options(BaseEnv(), 300000));
      EXPECT_EQ(remove.exit_code, 0) << remove.err;
      EXPECT_NE(access("/usr/bin/np-exec", F_OK), 0);
    }
    if (!created_) return;
    RunResult del = RunProcess({"/usr/sbin/userdel", "--remove", user_}, Options(BaseEnv()));
    EXPECT_EQ(del.exit_code, 0) << "userdel " << user_ << ": " << del.err;
    EXPECT_EQ(getpwnam(user_.c_str()), nullptr);
  }

  const std::string& runtime() const { return GetParam(); }

  // Writes `content` into the account's home as a file of its own.
  void WriteAsUser(const std::string& rel, const std::string& content) {
    const std::string path = home_ + "/" + rel;
    std::ofstream(path) << content;
    ASSERT_EQ(chown(path.c_str(), uid_, gid_), 0);
  }

  // Runs the block: `sudo` lines as root, the others as the new account in
  // one bash each run of them, stopping at the first failing line.
  RunResult RunBlock(const std::vector<std::string>& lines) {
    std::vector<std::string> user_env = {
        "HOME=" + home_,   "USER=" + user_, "LOGNAME=" + user_,
        "SHELL=/bin/bash", "LANG=C.UTF-8",  "PATH=" + bin_ + ":/usr/local/bin:/usr/bin:/bin"};
    for (const char* pass : {"CI", "DOCKER_HOST"}) {
      if (const char* value = getenv(pass)) user_env.push_back(std::string(pass) + "=" + value);
    }
    RunResult all;
    all.exit_code = 0;
    std::string script;
    auto flush = [&]() {
      if (script.empty()) return true;
      std::vector<std::string> argv = {"/usr/bin/setpriv",
                                       "--reuid=" + std::to_string(uid_),
                                       "--regid=" + std::to_string(gid_),
                                       "--init-groups",
                                       "/usr/bin/env",
                                       "-i"};
      argv.insert(argv.end(), user_env.begin(), user_env.end());
      argv.insert(argv.end(), {"/bin/bash", "-e", "-x", "-o", "pipefail", "-c", script});
      RunResult r = RunProcess(argv, Options({}, 900000, checkout_));
      all.out += r.out;
      all.err += r.err;
      all.exit_code = r.exit_code;
      script.clear();
      return r.exit_code == 0;
    };
    for (const std::string& line : lines) {
      if (line.rfind("sudo ", 0) == 0) {
        if (!flush()) return all;
        RunResult r = RunProcess({"/bin/bash", "-e", "-x", "-c", line.substr(5)},
                                 Options(BaseEnv({"USER=" + user_}), 120000, checkout_));
        all.out += r.out;
        all.err += r.err;
        all.exit_code = r.exit_code;
        if (r.exit_code != 0) return all;
        continue;
      }
      script += line + "\n";
    }
    flush();
    return all;
  }

  // The last line of the project's audit log: a spawn that exited 0 on the
  // container tier on this runtime.
  void ExpectContainerSpawnExited0(const std::string& project) {
    int bad = 0;
    std::vector<nlohmann::json> audit = ReadAuditLog(project, &bad);
    EXPECT_EQ(bad, 0);
    ASSERT_FALSE(audit.empty()) << "no audit log in " << project;
    const nlohmann::json& last = audit.back();
    EXPECT_EQ(last.value("event", ""), "exit") << last.dump();
    EXPECT_EQ(last.value("tier", ""), "container") << last.dump();
    EXPECT_EQ(last.value("runtime", ""), runtime()) << last.dump();
    EXPECT_EQ(last.value("exit_status", -1), 0) << last.dump();
  }

  TempDir bin_dir_;
  std::string bin_;
  std::string checkout_;
  std::string user_;
  bool created_ = false;
  bool package_installed_ = false;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
  std::string home_;
};

TEST_P(QuickStartTest, RunsAsWrittenInAFreshAccount) {
  const std::vector<std::string> lines = QuickStartLines(runtime());
  ASSERT_GE(lines.size(), 4u) << "README.md has no ```sh quickstart-" << runtime() << " block";
  if (runtime() == "docker") {
    // The block builds np-agent-claude:local with build-agent-image.sh, which
    // then finds its own recipe's image present (the test command builds it
    // first) and drops every other recipe's tag of the image; here it must
    // find its own, and no other tag it would drop.
    const std::string tag = ClaudeRecipeTag();
    if (RunRuntime("docker", {"image", "inspect", tag}).exit_code != 0) {
      NP_NEEDS(tag << " is not in docker (bash scripts/build-agent-image.sh claude docker)");
    }
    RunResult tags = RunRuntime(
        "docker", {"image", "ls", "--format", "{{.Repository}}:{{.Tag}}", "np-agent-claude"});
    for (const std::string& other : SplitLines(tags.out)) {
      if (other.find(":recipe-") != std::string::npos && other != tag) {
        NP_NEEDS("docker holds " << other << ", which the README's build line would drop");
      }
    }
  }
  WriteAsUser("host-secret", "the account's own file\n");
  // A user's git identity, as the block's commits need (nothing else of it
  // reaches the sandbox).
  WriteAsUser(".gitconfig", "[user]\n\tname = Quick Start\n\temail = qs@example.com\n");

  RunResult r = RunBlock(lines);
  ASSERT_EQ(r.exit_code, 0) << "stdout:\n" << r.out << "\nstderr:\n" << r.err;
  const std::vector<std::string> out = SplitLines(r.out);
  const std::string project = home_ + "/np-demo";

  if (runtime() == "bwrap") {
    // `echo "$(id -un) in $PWD"; ls -A ~; ls /home` inside the sandbox: the
    // account's name and the project, then an empty HOME (/home/np-exec),
    // then /home holding only that HOME and the way to the project.
    const std::string first = user_ + " in " + project;
    auto at = std::find(out.begin(), out.end(), first);
    ASSERT_NE(at, out.end()) << r.out << r.err;
    ASSERT_GE(out.end() - at, 3) << r.out;
    std::vector<std::string> after(at + 1, at + 3);
    EXPECT_THAT(after, Not(Contains("host-secret"))) << r.out;
    EXPECT_THAT(after, Not(Contains(".bashrc"))) << r.out;
    EXPECT_EQ(after, std::vector<std::string>({"np-exec", user_})) << r.out;
  }
  // claude ran through its shim in the sandbox: the image's on docker, the
  // account's own prefix install on bubblewrap.
  const std::string version = PinnedClaudeVersion();
  ASSERT_FALSE(version.empty());
  EXPECT_THAT(r.out, HasSubstr(version + " (Claude Code)")) << r.out << r.err;
  if (runtime() == "docker") {
    // The block's sudo line put the account in the docker group.
    const group* docker = getgrnam("docker");
    ASSERT_NE(docker, nullptr);
    bool member = false;
    for (char** name = docker->gr_mem; *name != nullptr; ++name) member |= user_ == *name;
    EXPECT_TRUE(member);
  }
  ExpectContainerSpawnExited0(project);
  // The commit made in the slice worktree's sandbox is on the host's branch,
  // with the account's identity, and that spawn too ran contained.
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(out.back(), "Quick Start: made inside") << r.out << r.err;
  ExpectContainerSpawnExited0(project + "/.nubos-pilot/worktrees/slice-1");
  EXPECT_EQ(ReadFile(home_ + "/host-secret"), "the account's own file\n");
}

INSTANTIATE_TEST_SUITE_P(Runtimes, QuickStartTest, ::testing::Values("bwrap", "docker"),
                         RuntimeName);

}  // namespace
}  // namespace np::testing
