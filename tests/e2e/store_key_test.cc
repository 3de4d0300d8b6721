// Issue 26, item 7: the operator state store keys a project's records (trust,
// ratchet, persistent home) by its repository, so a linked worktree shares
// them. A project that arrives with a `.git` file of its own (an unpacked
// archive, a copied folder) naming a trusted project's git directory got that
// project's key: its copy of the trusted config ran without trust, and its
// persistent home was the trusted project's, with whatever the agent kept
// there (a login token). Now only a worktree git made, pointing back at its
// `.git`, shares the key; the forged one is refused until trusted, and then
// gets a home of its own. On docker, podman and bubblewrap.
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"

namespace np::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class StoreKeyTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { NP_REQUIRE_RUNTIME(GetParam()); }

  RunResult Np(const std::string& project, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {NpExecBin()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, Options(env_, 120000, project));
  }

  // A trusted repository whose persistent home holds what an agent keeps
  // there (a login token).
  void MakeTrustedRepositoryWithAToken(const std::string& trusted) {
    dir_.MakeDir("trusted");
    MakeProject(trusted, config_, /*trust=*/false);
    dir_.Write("trusted/.git/HEAD", "ref: refs/heads/main\n");
    dir_.MakeDir("trusted/.git/objects");
    dir_.MakeDir("trusted/.git/refs");
    ASSERT_EQ(Np(trusted, {"trust"}).exit_code, 0);
    RunResult keep = Np(trusted, {"--", "sh", "-c", "echo agent-login-token > $HOME/token"});
    ASSERT_EQ(keep.exit_code, 0) << keep.err;
  }

  TempDir dir_;
  const std::string config_ =
      ContainerConfig(GetParam(), "np-test:local", {{"home", "persistent"}});
  std::vector<std::string> env_ = RuntimeEnv({"XDG_STATE_HOME=" + dir_.MakeDir("state")});
};

TEST_P(StoreKeyTest, AForgedGitFileGetsNeitherTheTrustNorTheHomeOfTheProjectItNames) {
  const std::string trusted = dir_.Path("trusted");
  ASSERT_NO_FATAL_FAILURE(MakeTrustedRepositoryWithAToken(trusted));

  const std::string hostile = dir_.MakeDir("hostile");
  MakeProject(hostile, config_, /*trust=*/false);
  dir_.Write("hostile/.git", "gitdir: " + trusted + "/.git\n");
  RunResult r = Np(hostile, {"--", "sh", "-c", "cat $HOME/token; echo ran"});
  EXPECT_EQ(r.exit_code, 125) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("isolation-config-untrusted"));
  EXPECT_THAT(r.out, Not(HasSubstr("agent-login-token")));
  EXPECT_THAT(r.out, Not(HasSubstr("ran")));
  // Trusted in its own right, it gets a home of its own.
  ASSERT_EQ(Np(hostile, {"trust"}).exit_code, 0);
  RunResult own = Np(hostile, {"--", "sh", "-c", "cat $HOME/token 2>/dev/null; echo ran"});
  EXPECT_EQ(own.exit_code, 0) << own.err;
  EXPECT_EQ(own.out, "ran\n");
  // The trusted project still has its own.
  RunResult back = Np(trusted, {"--", "cat", "/home/np-exec/token"});
  EXPECT_EQ(back.exit_code, 0) << back.err;
  EXPECT_EQ(back.out, "agent-login-token\n");
}

// The same through a `.git` directory: one holding HEAD and a `commondir`
// that names the trusted repository (git then reads that one's config and
// objects), and a `.git` link to the trusted repository's git directory.
// Both were keyed by the trusted repository: status said trusted, and the
// spawn ran with the trusted project's home. Now each is a project of its
// own: untrusted, refused, and nothing of the trusted home reaches it.
TEST_P(StoreKeyTest, AGitDirectoryNamingAnotherRepositoryGetsNeitherItsTrustNorItsHome) {
  const std::string trusted = dir_.Path("trusted");
  ASSERT_NO_FATAL_FAILURE(MakeTrustedRepositoryWithAToken(trusted));
  const std::string trusted_config = ReadFile(trusted + "/.nubos-pilot/config.json");

  const std::string with_commondir = dir_.MakeDir("commondir");
  MakeProject(with_commondir, config_, /*trust=*/false);
  dir_.Write("commondir/.git/HEAD", "ref: refs/heads/main\n");
  dir_.Write("commondir/.git/commondir", trusted + "/.git\n");
  const std::string with_link = dir_.MakeDir("link");
  MakeProject(with_link, config_, /*trust=*/false);
  ASSERT_EQ(symlink((trusted + "/.git").c_str(), (with_link + "/.git").c_str()), 0);
  for (const std::string& hostile : {with_commondir, with_link}) {
    // status names the state: untrusted (it said trusted, with the other's key).
    RunResult status = Np(hostile, {"status", "--json"});
    const nlohmann::json out = nlohmann::json::parse(status.out, nullptr, false);
    ASSERT_TRUE(out.is_object() && out.contains("trust")) << hostile << status.out << status.err;
    EXPECT_EQ(out["trust"]["state"], "untrusted") << hostile;
    RunResult r = Np(hostile, {"--", "sh", "-c", "cat $HOME/token; echo ran"});
    EXPECT_EQ(r.exit_code, 125) << hostile << r.out << r.err;
    EXPECT_THAT(r.out, Not(HasSubstr("agent-login-token"))) << hostile;
    EXPECT_THAT(r.out, Not(HasSubstr("ran"))) << hostile;
  }
  // Trusted in its own right, the commondir one gets a home of its own.
  ASSERT_EQ(Np(with_commondir, {"trust"}).exit_code, 0);
  RunResult own = Np(with_commondir, {"--", "sh", "-c", "cat $HOME/token 2>/dev/null; echo ran"});
  EXPECT_EQ(own.exit_code, 0) << own.err;
  EXPECT_EQ(own.out, "ran\n");
  // The trusted project keeps its home, its config and its trust.
  RunResult back = Np(trusted, {"--", "cat", "/home/np-exec/token"});
  EXPECT_EQ(back.exit_code, 0) << back.err;
  EXPECT_EQ(back.out, "agent-login-token\n");
  EXPECT_EQ(ReadFile(trusted + "/.nubos-pilot/config.json"), trusted_config);
}

// The program inside removes the repository's `.git/HEAD` (writable, so
// that git works), which makes the `.git` read as no repository and so
// changes the project's store key, and makes a project below asking for the
// direct tier. Neither that project nor the repository's own next spawn runs
// on the host: the ratchet is kept under the project's path as well.
TEST_P(StoreKeyTest, ARepositoryMadeToReadAsNoneFromInsideKeepsItsRatchet) {
  const std::string repo = dir_.MakeDir("repo");
  MakeProject(repo, ContainerConfig(GetParam(), "np-test:local"), /*trust=*/false);
  dir_.Write("repo/.git/HEAD", "ref: refs/heads/main\n");
  dir_.MakeDir("repo/.git/objects");
  dir_.MakeDir("repo/.git/refs");
  ASSERT_EQ(Np(repo, {"trust"}).exit_code, 0);
  const std::string direct = R"({"isolation":{"tier":"direct"}})";
  RunResult inside = Np(repo, {"--", "sh", "-c",
                               "rm .git/HEAD && mkdir -p sub/.nubos-pilot && echo '" + direct +
                                   "' > sub/.nubos-pilot/config.json"});
  ASSERT_EQ(inside.exit_code, 0) << inside.err;
  struct stat st;
  ASSERT_NE(stat((repo + "/.git/HEAD").c_str(), &st), 0) << "the program could not remove HEAD";
  const std::string marker = dir_.Path("ran-on-the-host");
  RunResult nested = Np(repo + "/sub", {"--", "/bin/sh", "-c", "touch " + marker});
  EXPECT_NE(nested.exit_code, 0);
  EXPECT_THAT(nested.err, HasSubstr("isolation-tier-lowered")) << nested.err;
  EXPECT_NE(stat(marker.c_str(), &st), 0) << "the nested project's spawn ran on the host";
  dir_.Write("repo/.nubos-pilot/config.json", direct);
  RunResult again = Np(repo, {"--", "/bin/sh", "-c", "touch " + marker});
  EXPECT_THAT(again.err, HasSubstr("isolation-tier-lowered")) << again.err;
  EXPECT_NE(stat(marker.c_str(), &st), 0) << "the repository's own spawn ran on the host";
}

INSTANTIATE_TEST_SUITE_P(Runtimes, StoreKeyTest, ::testing::Values("docker", "podman", "bwrap"),
                         RuntimeName);

}  // namespace
}  // namespace np::testing
