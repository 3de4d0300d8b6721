// git inside a slice worktree on the container tier (core/git_mounts.h), on
// docker, podman and bubblewrap: a worktree laid out as nubos-pilot lays it
// out (`<repo>/.nubos-pilot/worktrees/M001/S001`, its own project) runs
// `git status`, `git add` and `git commit` inside; the commit is on the
// host's branch, owned by the caller. The same program then goes for git's
// exec surface in the repository's common directory and the worktree's own
// git directory (a hook, the config, the back-link, another worktree, a
// config.worktree), and afterwards those files are byte for byte as they
// were, nothing new exists, and the placeholders are gone.
//
// Under CI=true a runtime that is not usable fails these tests; otherwise they
// skip (scripts/test.sh brings the runtimes up first).
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"

namespace np::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Real(const std::string& path) {
  char buffer[PATH_MAX];
  return realpath(path.c_str(), buffer) != nullptr ? buffer : path;
}

class GitWorktreeTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    NP_REQUIRE_RUNTIME(runtime());
    repo_ = Real(dir_.MakeDir("repo"));
    state_ = dir_.MakeDir("state");
    env_ = RuntimeEnv({"XDG_STATE_HOME=" + state_, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=Host",
                       "GIT_AUTHOR_EMAIL=host@example.invalid", "GIT_COMMITTER_NAME=Host",
                       "GIT_COMMITTER_EMAIL=host@example.invalid"});
    Git(repo_, {"init", "-q", "-b", "main"});
    dir_.Write("repo/.gitignore", ".nubos-pilot/worktrees/\n.nubos-pilot/audit/\n");
    dir_.Write("repo/.nubos-pilot/config.json", ContainerConfig(runtime(), "np-node:local"));
    dir_.Write("repo/README", "hello\n");
    Git(repo_, {"add", "-A"});
    Git(repo_, {"commit", "-q", "-m", "base"});
    wt_ = repo_ + "/.nubos-pilot/worktrees/M001/S001";
    Git(repo_, {"worktree", "add", "-q", "-b", "np/M001-S001", wt_});
    wt_ = Real(wt_);
    RunResult trusted = RunProcess({NpExecBin(), "trust"}, Options(env_, 30000, wt_));
    ASSERT_EQ(trusted.exit_code, 0) << trusted.err;
    for (const char* rel : {".git/config", ".git/HEAD", ".git/worktrees/S001/gitdir",
                            ".git/worktrees/S001/commondir"}) {
      before_[rel] = ReadFile(repo_ + "/" + rel);
    }
  }

  const std::string& runtime() const { return GetParam(); }

  void Git(const std::string& cwd, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/usr/bin/git"};
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult r = RunProcess(argv, Options(env_, 60000, cwd));
    ASSERT_EQ(r.exit_code, 0) << "git " << args.front() << ": " << r.err;
  }

  std::string GitOut(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/usr/bin/git", "-C", repo_};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, Options(env_, 60000, repo_)).out;
  }

  RunResult Inside(const std::string& script) {
    return RunProcess({NpExecBin(), "--", "sh", "-c", script}, Options(env_, 180000, wt_));
  }

  TempDir dir_;
  std::string repo_, wt_, state_;
  std::vector<std::string> env_;
  std::map<std::string, std::string> before_;
};

TEST_P(GitWorktreeTest, ACommitMadeInsideLandsOnTheHostBranch) {
  RunResult r = Inside(
      "set -e; git status --short --branch; echo inside > slice.txt; git add slice.txt; "
      "git -c user.name=Agent -c user.email=agent@example.invalid commit -q -m 'from inside'; "
      "git log -1 --format=%s");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("## np/M001-S001"));
  EXPECT_THAT(r.out, HasSubstr("from inside"));
  // On the host: the branch has the commit, the worktree is clean, the main
  // worktree's branch did not move.
  EXPECT_EQ(GitOut({"log", "-1", "--format=%s", "np/M001-S001"}), "from inside\n");
  EXPECT_EQ(GitOut({"log", "-1", "--format=%s", "main"}), "base\n");
  RunResult status =
      RunProcess({"/usr/bin/git", "status", "--porcelain"}, Options(env_, 60000, wt_));
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_EQ(status.out, "");
  // The new commit's object belongs to the caller.
  const std::string sha = GitOut({"rev-parse", "np/M001-S001"}).substr(0, 40);
  struct stat st;
  ASSERT_EQ(stat((repo_ + "/.git/objects/" + sha.substr(0, 2) + "/" + sha.substr(2)).c_str(), &st),
            0);
  EXPECT_EQ(st.st_uid, getuid());
  EXPECT_EQ(st.st_gid, getgid());
}

// No extra config: `git commit` inside finds the caller's user.name and
// user.email (from their ~/.gitconfig here), and nothing else of that file;
// the identity file is read-only, while the program's own ~/.gitconfig, in
// the sandbox's home, still works and wins. The host file is untouched.
TEST_P(GitWorktreeTest, ACommitInsideCarriesTheCallersIdentityAndNothingElseOfTheirConfig) {
  const std::string home = Real(dir_.MakeDir("home"));
  const std::string host_config =
      "[user]\n\tname = Ada Host\n\temail = ada@host.invalid\n"
      "[credential]\n\thelper = store --file /secret/credential-store\n"
      "[url \"https://token-s3cret@example.invalid/\"]\n\tinsteadOf = https://example.invalid/\n"
      "[alias]\n\tpwn = !touch /tmp/pwned\n";
  dir_.Write("home/.gitconfig", host_config);
  std::vector<std::string> env = env_;
  SetEnv(env, "HOME", home);
  RunResult r = RunProcess(
      {NpExecBin(), "--", "sh", "-c",
       "set -e; echo id > id.txt; git add id.txt; git commit -q -m 'with identity'; "
       "git log -1 --format='author=%an <%ae> committer=%cn <%ce>'; "
       "git config --list --show-origin | sed 's/^/config: /'; "
       "if echo '[alias] x = !true' >> \"$GIT_CONFIG_SYSTEM\"; then echo identity-writable; fi; "
       "if git config --system user.name Agent; then echo system-writable; fi; "
       "git config --global user.name Agent; echo \"now=$(git config user.name)\""},
      Options(env, 180000, wt_));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("author=Ada Host <ada@host.invalid> "
                               "committer=Ada Host <ada@host.invalid>"));
  for (const char* leaked : {"credential", "s3cret", "insteadof", "pwn", "alias"}) {
    EXPECT_THAT(r.out, Not(HasSubstr(leaked))) << r.out;
  }
  EXPECT_THAT(r.out, Not(HasSubstr("identity-writable")));
  EXPECT_THAT(r.out, Not(HasSubstr("system-writable")));
  EXPECT_THAT(r.out, HasSubstr("now=Agent"));
  // On the host: the commit on the slice's branch with that identity, the
  // caller's file byte for byte, nothing left in the spawn's directory.
  EXPECT_EQ(GitOut({"log", "-1", "--format=%an <%ae>|%s", "np/M001-S001"}),
            "Ada Host <ada@host.invalid>|with identity\n");
  EXPECT_EQ(ReadFile(home + "/.gitconfig"), host_config);
  EXPECT_FALSE(FileExists("/tmp/pwned"));
  // A warm sandbox (NP_E2E_WARM) keeps its spawn's files while it lives.
  EXPECT_TRUE(EndWarmSandboxes(env, wt_));
  struct stat st;
  const std::string spawns = state_ + "/np-exec/spawns";
  if (lstat(spawns.c_str(), &st) == 0) {
    RunResult left = RunProcess({"/usr/bin/find", spawns, "-mindepth", "1"}, Options(env_));
    EXPECT_EQ(left.out, "");
  }
}

// A caller with no identity gets none bound: git inside says so, as it would
// on the host, and the spawn still runs.
TEST_P(GitWorktreeTest, NoIdentityOnTheHostBindsNone) {
  const std::string home = Real(dir_.MakeDir("bare-home"));
  std::vector<std::string> env = env_;
  SetEnv(env, "HOME", home);
  SetEnv(env, "XDG_CONFIG_HOME", home + "/.config");
  RunResult r = RunProcess({NpExecBin(), "--", "sh", "-c",
                            "echo \"[${GIT_CONFIG_SYSTEM-unset}]\"; git config user.name; true"},
                           Options(env, 180000, wt_));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("[unset]"));
}

TEST_P(GitWorktreeTest, GitsExecSurfaceStaysReadOnly) {
  const std::string common = repo_ + "/.git";
  const std::string own = common + "/worktrees/S001";
  // Each step runs whatever the previous one left; none may succeed.
  const std::vector<std::string> attacks = {
      "printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > " + common + "/hooks/pre-commit",
      "git config core.hooksPath /tmp",
      "echo '[core]' >> " + common + "/config",
      "echo '[core] fsmonitor = /tmp/x' > " + common + "/config.worktree",
      "echo '[core] fsmonitor = /tmp/x' > " + own + "/config.worktree",
      "echo / > " + own + "/commondir",
      "echo /tmp > " + own + "/gitdir",
      "mkdir -p " + common + "/worktrees/evil && echo x > " + common + "/worktrees/evil/HEAD",
      "echo '*.txt filter=evil' > " + common + "/info/attributes",
      "mv " + common + "/hooks " + common + "/hooks-away",
      "rm -f " + own + "/commondir " + own + "/gitdir",
  };
  // (The worktree's own HEAD and index are writable, as a commit needs: the
  // program can damage its own worktree's state, which runs nothing on the
  // host.)
  for (const std::string& attack : attacks) {
    RunResult r = Inside(attack);
    EXPECT_NE(r.exit_code, 0) << attack << "\n" << r.out << r.err;
  }
  for (const auto& [rel, content] : before_) {
    EXPECT_EQ(ReadFile(repo_ + "/" + rel), content) << rel;
  }
  // A warm sandbox (NP_E2E_WARM) keeps its placeholders while it lives.
  EXPECT_TRUE(EndWarmSandboxes(env_, wt_));
  struct stat st;
  for (const char* absent :
       {"hooks/pre-commit", "config.worktree", "worktrees/S001/config.worktree", "worktrees/evil",
        "info/attributes", "hooks-away", "modules", "worktrees/S001/info"}) {
    EXPECT_NE(lstat((common + "/" + absent).c_str(), &st), 0) << absent;
  }
  // git on the host still works on both worktrees.
  EXPECT_EQ(GitOut({"status", "--porcelain"}), "");
  RunResult wt_status =
      RunProcess({"/usr/bin/git", "status", "--porcelain"}, Options(env_, 60000, wt_));
  EXPECT_EQ(wt_status.exit_code, 0) << wt_status.err;
}

// A repository could ship a `.git` file naming any host directory to have it
// mounted writable; one that is not a worktree `git worktree add` made is
// refused before anything runs.
TEST_P(GitWorktreeTest, AGitFileNamingAnotherDirectoryIsRefused) {
  const std::string secret = Real(dir_.MakeDir("secret"));
  dir_.Write("secret/worktrees/x/commondir", "../..\n");
  dir_.Write("secret/worktrees/x/HEAD", "ref: refs/heads/x\n");
  dir_.Write("secret/key", "host secret\n");
  ASSERT_EQ(chmod((wt_ + "/.git").c_str(), 0644), 0);
  dir_.Write("repo/.nubos-pilot/worktrees/M001/S001/.git", "gitdir: " + secret + "/worktrees/x\n");
  RunResult r = Inside("echo ran > " + wt_ + "/ran; echo stolen > " + secret + "/key");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("project-git-invalid"));
  EXPECT_FALSE(FileExists(wt_ + "/ran"));
  EXPECT_EQ(ReadFile(secret + "/key"), "host secret\n");
}

INSTANTIATE_TEST_SUITE_P(Runtimes, GitWorktreeTest, ::testing::Values("docker", "podman", "bwrap"),
                         RuntimeName);

}  // namespace
}  // namespace np::testing
