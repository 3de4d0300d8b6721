// Issue 17 items 1, 2 and 4 on docker, podman and bubblewrap: a persistent
// agent home that survives between spawns of one project and never reaches
// another, seeded once from the operator's HOME; the caller resolvable by
// name inside (whoami, id -un, node's os.userInfo()); a program that cannot
// run inside named with a code and the fix (127); and a hostile program that
// plants links in its home to host files, after which `np-exec home --reset`
// and the re-seed leave every host file as it was, byte for byte.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"

namespace np::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kSeed[] = "{\"operator\":\"seed\"}\n";
constexpr char kVictim[] = "HOST FILE: NEVER WRITTEN BY NP-EXEC\n";
constexpr char kKey[] = "-----BEGIN OPENSSH PRIVATE KEY----- operator\n";

class AgentHomeTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    NP_REQUIRE_RUNTIME(runtime());
    home_ = dir_.MakeDir("operator-home");
    dir_.Write("operator-home/.claude.json", kSeed, 0600);
    state_ = dir_.MakeDir("state");
    project_a_ = dir_.MakeDir("a");
    project_b_ = dir_.MakeDir("b");
    victim_ = dir_.Write("host/victim.txt", kVictim, 0644);
    env_ = RuntimeEnv({"HOME=" + home_, "XDG_STATE_HOME=" + state_});
    for (const std::string& project : {project_a_, project_b_}) Configure(project);
  }

  const std::string& runtime() const { return GetParam(); }
  bool is_bwrap() const { return runtime() == "bwrap"; }

  // A persistent home seeded with .claude.json, trusted by this operator.
  void Configure(const std::string& project, const std::string& image = "np-test:local",
                 nlohmann::json extra = nlohmann::json::object()) {
    extra["home"] = "persistent";
    if (!extra.contains("home_seed")) extra["home_seed"] = {".claude.json"};
    MakeProject(project, ContainerConfig(runtime(), image, extra), /*trust=*/false);
    RunResult trusted = Np(project, {"trust"});
    ASSERT_EQ(trusted.exit_code, 0) << trusted.err;
  }

  RunResult Np(const std::string& project, const std::vector<std::string>& args,
               const std::vector<std::string>& env = {}) {
    std::vector<std::string> argv = {NpExecBin()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, Options(env.empty() ? env_ : env, 120000, project));
  }

  RunResult Sh(const std::string& project, const std::string& script) {
    return Np(project, {"--", "sh", "-c", script});
  }

  // The operator's key, and a sandbox of `planter` (configured here) that
  // links `link` (its own file) to it.
  void PlantKeyLink(const std::string& planter, const std::string& link) {
    dir_.Write("operator-home/.ssh/id_ed25519", kKey, 0600);
    Configure(planter);
    RunResult planted =
        Sh(planter, "ln -s '" + home_ + "/.ssh/id_ed25519' " + link + " && echo planted");
    ASSERT_EQ(planted.exit_code, 0) << planted.err;
    ASSERT_EQ(planted.out, "planted\n");
  }

  // A spawn refused with `code` before its program ran: neither the key nor
  // the program's "ran" printed, and the key where it was.
  void ExpectRefusedWithoutKey(const RunResult& r, const std::string& code) const {
    EXPECT_EQ(r.exit_code, 125) << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr(code));
    EXPECT_THAT(r.out, Not(HasSubstr("PRIVATE KEY")));
    EXPECT_THAT(r.out, Not(HasSubstr("ran")));
    EXPECT_EQ(ReadFile(home_ + "/.ssh/id_ed25519"), kKey);
  }

  // The home's host path, as `np-exec home --json` reports it.
  std::string HomeOf(const std::string& project) {
    RunResult r = Np(project, {"home", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json info = nlohmann::json::parse(r.out, nullptr, false);
    return info.is_object() && info.contains("path") ? info["path"].get<std::string>() : "";
  }

  TempDir dir_;
  std::string home_, state_, project_a_, project_b_, victim_;
  std::vector<std::string> env_;
};

TEST_P(AgentHomeTest, HomePersistsWithinAProjectAndNeverReachesAnother) {
  RunResult first = Sh(project_a_, "cat \"$HOME/.claude.json\"; echo logged-in > \"$HOME/login\"");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out, kSeed);
  RunResult second = Sh(project_a_, "cat \"$HOME/login\"; echo \"$HOME\"");
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.out, "logged-in\n/home/np-exec\n");
  RunResult other = Sh(project_b_, "cat \"$HOME/login\" 2>/dev/null; ls -A \"$HOME\"");
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_EQ(other.out, ".claude.json\n");

  // Outside both projects, the caller's, private; doctor shows it.
  const std::string home = HomeOf(project_a_);
  ASSERT_FALSE(home.empty());
  EXPECT_NE(home, HomeOf(project_b_));
  EXPECT_EQ(home.rfind(state_ + "/np-exec/homes/", 0), 0u) << home;
  struct stat st;
  ASSERT_EQ(lstat(home.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(st.st_uid, getuid());
  EXPECT_EQ(ReadFile(home + "/login"), "logged-in\n");
  RunResult doctor = Np(project_a_, {"doctor", "--json"});
  const nlohmann::json report = nlohmann::json::parse(doctor.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << doctor.out << doctor.err;
  EXPECT_EQ(report["home"]["mode"], "persistent");
  EXPECT_EQ(report["home"]["path"], home);
  EXPECT_GT(report["home"]["bytes"].get<uint64_t>(), 0u);

  // Reset: the next spawn starts over from the seed.
  RunResult reset = Np(project_a_, {"home", "--reset"});
  ASSERT_EQ(reset.exit_code, 0) << reset.err;
  RunResult fresh = Sh(project_a_, "ls -A \"$HOME\"");
  ASSERT_EQ(fresh.exit_code, 0) << fresh.err;
  EXPECT_EQ(fresh.out, ".claude.json\n");
}

TEST_P(AgentHomeTest, EphemeralHomeIsStillTheDefault) {
  MakeProject(project_b_, ContainerConfig(runtime(), "np-test:local"), /*trust=*/false);
  ASSERT_EQ(Np(project_b_, {"trust"}).exit_code, 0);
  ASSERT_EQ(Sh(project_b_, "echo x > \"$HOME/left\"").exit_code, 0);
  RunResult r = Sh(project_b_, "ls -A \"$HOME\"; echo end");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "end\n");
}

// The caller (here the uid the tests run as) has a passwd entry whose home
// is the sandbox's, and a group entry; by name, not only by number.
TEST_P(AgentHomeTest, CallerResolvesByNameInside) {
  RunResult r = Sh(project_a_,
                   "whoami; id -un; id -gn; "
                   "awk -F: -v u=\"$(id -u)\" '$3==u {print $6}' /etc/passwd; "
                   "if touch /etc/passwd 2>/dev/null; then echo writable; fi");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string name = getuid() == 0 ? "root" : "";
  std::vector<std::string> lines = absl::StrSplit(r.out, '\n');
  ASSERT_GE(lines.size(), 4u) << r.out;
  EXPECT_FALSE(lines[0].empty());
  if (!name.empty()) {
    EXPECT_EQ(lines[0], name);
  }
  EXPECT_EQ(lines[1], lines[0]);
  EXPECT_FALSE(lines[2].empty());
  EXPECT_EQ(lines[3], "/home/np-exec");
  EXPECT_THAT(r.out, Not(HasSubstr("writable")));
  // The spawn's view is gone with it (bubblewrap took it as data and made
  // none in the store).
  std::error_code none;
  const std::filesystem::path spawns = state_ + "/np-exec/spawns";
  ASSERT_EQ(std::filesystem::is_directory(spawns), runtime() != "bwrap") << spawns;
  if (runtime() != "bwrap") {
    EXPECT_TRUE(std::filesystem::is_empty(spawns, none)) << spawns;
  }

  // node's os.userInfo() reads the same entry (np-node:local has node; on
  // bubblewrap the host's /usr/bin/node runs).
  Configure(project_b_, "np-node:local");
  RunResult node = Np(project_b_, {"--", "node", "-e",
                                   "const u = require('os').userInfo();"
                                   "console.log(u.username + ' ' + u.homedir + ' ' + u.uid)"});
  ASSERT_EQ(node.exit_code, 0) << node.err;
  EXPECT_EQ(node.out, lines[0] + " /home/np-exec " + std::to_string(getuid()) + "\n");
}

// A program the sandbox cannot run is named with a code and the fix, 127.
TEST_P(AgentHomeTest, ProgramMissingInsideIsACodedError) {
  if (is_bwrap()) {
    // Found on the caller's PATH, outside what the sandbox shows.
    const std::string bin = dir_.MakeDir("operator-home/.npm-global/bin");
    const std::string tool =
        dir_.Write("operator-home/.npm-global/bin/np-agent-tool", "#!/bin/sh\necho tool-ran\n");
    ASSERT_EQ(chmod(tool.c_str(), 0755), 0);
    std::vector<std::string> env = env_;
    SetEnv(env, "PATH", bin + ":/usr/bin:/bin");
    RunResult r = Np(project_a_, {"--", "np-agent-tool"}, env);
    EXPECT_EQ(r.exit_code, 127) << r.err;
    EXPECT_THAT(r.err, HasSubstr("program-not-in-sandbox"));
    EXPECT_THAT(r.err, HasSubstr(tool));
    EXPECT_THAT(r.out, Not(HasSubstr("tool-ran")));
    // The fix it names: the directory mounted at its own path, and the same
    // name through the same PATH then runs.
    Configure(project_a_, "", {{"mounts", {{{"source", bin}, {"target", bin}}}}});
    RunResult fixed = Np(project_a_, {"--", "np-agent-tool"}, env);
    EXPECT_EQ(fixed.exit_code, 0) << fixed.err;
    EXPECT_EQ(fixed.out, "tool-ran\n");
    return;
  }
  // np-test:local has no node; the host has one.
  RunResult r = Np(project_a_, {"--", "node", "-e", "0"});
  EXPECT_EQ(r.exit_code, 127) << r.err;
  EXPECT_THAT(r.err, HasSubstr("program-not-in-image"));
  EXPECT_THAT(r.err, HasSubstr("np-test:local"));
  RunResult absolute = Np(project_a_, {"--", "/opt/np-no-such/agent"});
  EXPECT_EQ(absolute.exit_code, 127) << absolute.err;
  EXPECT_THAT(absolute.err, HasSubstr("program-not-in-image"));
  // A program that is there and exits 127 itself is not misreported.
  RunResult own = Sh(project_a_, "exit 127");
  EXPECT_EQ(own.exit_code, 127);
  EXPECT_THAT(own.err, Not(HasSubstr("program-not-in-image")));
}

// The program inside owns its home and plants links in it to host files.
// Neither the size walk, nor reset, nor the re-seed, nor the next spawn's
// seed check follows them: every host file stays byte for byte as it was.
TEST_P(AgentHomeTest, PlantedLinksInTheHomeNeverTouchTheHost) {
  const std::string victim_dir = dir_.MakeDir("host/victim-dir");
  dir_.Write("host/victim-dir/keep", "keep\n");
  // Mounted read-only so the links resolve inside too, as they would for a
  // host path the program can name.
  Configure(project_a_, "np-test:local",
            {{"mounts",
              {{{
                    "source",
                    dir_.Path("host"),
                },
                {"target", dir_.Path("host")}}}}});
  const std::string plant = "cd \"$HOME\" && rm -f .claude.json && ln -s '" + victim_ +
                            "' .claude.json && "
                            "ln -s '" +
                            victim_dir + "' dir-link && ln -s '" + home_ +
                            "/.claude.json' seed-link && "
                            "mkdir -p locked && ln -s '" +
                            victim_ +
                            "' locked/inner && chmod 500 locked && "
                            "mkfifo fifo && ls -A";
  RunResult planted = Sh(project_a_, plant);
  ASSERT_EQ(planted.exit_code, 0) << planted.err;
  EXPECT_THAT(planted.out, HasSubstr("dir-link"));
  // The next spawn: the home exists, so nothing is seeded through the link.
  RunResult again = Sh(project_a_, "ls -A \"$HOME\" | wc -l");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  RunResult doctor = Np(project_a_, {"doctor", "--json"});
  RunResult shown = Np(project_a_, {"home"});
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_EQ(ReadFile(victim_), kVictim);

  RunResult reset = Np(project_a_, {"home", "--reset"});
  ASSERT_EQ(reset.exit_code, 0) << reset.err;
  EXPECT_EQ(ReadFile(victim_), kVictim);
  EXPECT_EQ(ReadFile(victim_dir + "/keep"), "keep\n");
  EXPECT_EQ(ReadFile(home_ + "/.claude.json"), kSeed);
  struct stat st;
  ASSERT_EQ(stat(victim_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);

  // Re-seeded into a fresh home: a regular file with the operator's content.
  RunResult reseeded = Sh(project_a_,
                          "test -L \"$HOME/.claude.json\" && echo link; "
                          "cat \"$HOME/.claude.json\"; ls -A \"$HOME\"");
  ASSERT_EQ(reseeded.exit_code, 0) << reseeded.err;
  EXPECT_EQ(reseeded.out, std::string(kSeed) + ".claude.json\n");
  EXPECT_EQ(ReadFile(victim_), kVictim);
  EXPECT_EQ(ReadFile(victim_dir + "/keep"), "keep\n");
  EXPECT_EQ(ReadFile(home_ + "/.claude.json"), kSeed);
}

// Issue 26, item 7: one project's sandbox plants a link in its own folder to
// the operator's ~/.ssh key, under a harmless name; another project, trusted
// with a seed or a read-only mount of that name, would copy or mount the key
// (both were let through: realpath followed the link into HOME). Refused now:
// nothing ran, no home was made, and the key stayed where it was.
TEST_P(AgentHomeTest, ALinkPlantedInAnotherProjectNeverLeadsASeedOrAMountToAKey) {
  const std::string planter = dir_.MakeDir("operator-home/work/planter");
  PlantKeyLink(planter, "notes.txt");

  Configure(project_b_, "np-test:local",
            {{"home_seed", {".claude.json", "work/planter/notes.txt"}}});
  RunResult seeded = Sh(project_b_, "cat \"$HOME/work/planter/notes.txt\"; echo ran");
  ExpectRefusedWithoutKey(seeded, "agent-home-seed-refused");
  EXPECT_THAT(seeded.err, HasSubstr(planter));
  const std::string home_b = HomeOf(project_b_);
  ASSERT_FALSE(home_b.empty());
  struct stat st;
  EXPECT_NE(lstat(home_b.c_str(), &st), 0) << "no home was made for " << home_b;

  const std::string project_c = dir_.MakeDir("c");
  Configure(project_c, "np-test:local",
            {{"mounts", {{{"source", planter + "/notes.txt"}, {"target", "/notes"}}}}});
  ExpectRefusedWithoutKey(Sh(project_c, "cat /notes; echo ran"), "isolation-mount-source-unstable");
}

// A persistent home is its sandbox's to write, like its project: the
// planter's sandbox puts `notes -> ~/.ssh/id_ed25519` in its own HOME. The
// operator keeps a link to that home (`~/planter-home`); a seed or a mount
// named through it reaches the key although only the link in np-exec's
// state store leads there. Before, the seed was copied and the mount made
// (the key printed inside); now both are refused.
TEST_P(AgentHomeTest, ALinkPlantedInAPersistentHomeNeverLeadsASeedOrAMountToAKey) {
  const std::string planter = dir_.MakeDir("planter");
  PlantKeyLink(planter, "\"$HOME/notes\"");
  const std::string planter_home = HomeOf(planter);
  ASSERT_FALSE(planter_home.empty());
  ASSERT_EQ(symlink(planter_home.c_str(), (home_ + "/planter-home").c_str()), 0);

  Configure(project_b_, "np-test:local", {{"home_seed", {".claude.json", "planter-home/notes"}}});
  RunResult seeded = Sh(project_b_, "cat \"$HOME/planter-home/notes\"; echo ran");
  ExpectRefusedWithoutKey(seeded, "agent-home-seed-refused");
  EXPECT_THAT(seeded.err, HasSubstr(planter_home + "/notes"));

  const std::string project_c = dir_.MakeDir("c");
  Configure(project_c, "np-test:local",
            {{"mounts", {{{"source", home_ + "/planter-home/notes"}, {"target", "/notes"}}}}});
  ExpectRefusedWithoutKey(Sh(project_c, "cat /notes; echo ran"),
                          "isolation-mount-forbidden-source");
}

INSTANTIATE_TEST_SUITE_P(Runtimes, AgentHomeTest, ::testing::Values("docker", "podman", "bwrap"),
                         RuntimeName);

// A caller other than root: the name whoami prints inside is the host's name
// of uid 1000 (or np-exec's fallback when the host has none), with the
// sandbox's home. Docker through a private daemon whose socket uid 1000 may
// use, as in lifecycle_test.cc; rootful podman needs root.
class NonRootAccountTest : public ::testing::TestWithParam<std::string> {};

TEST_P(NonRootAccountTest, WhoamiNamesTheCaller) {
  const std::string runtime = GetParam();
  NP_REQUIRE_RUNTIME(runtime);
  if (geteuid() != 0) {
    if (InCi()) FAIL() << "CI runs the tests as root";
    GTEST_SKIP() << "needs root (setpriv to uid 1000)";
  }
  TempDir dir;
  const std::string np_exec = dir.Path("np-exec");
  std::filesystem::copy_file(NpExecBin(), np_exec);
  chmod(np_exec.c_str(), 0755);
  const std::string project = dir.MakeDir("project");
  MakeProject(project, ContainerConfig(runtime, "np-test:local", {{"home", "persistent"}}),
              /*trust=*/false);
  const std::string home = dir.MakeDir("home");
  const std::string state = dir.MakeDir("state");
  for (const std::string& path : {project, home, state}) ChownTree(path, 1000, 1000);
  std::vector<std::string> env = RuntimeEnv({"HOME=" + home, "XDG_STATE_HOME=" + state});
  std::unique_ptr<PrivateDockerd> daemon;
  if (runtime == "docker") {
    ASSERT_EQ(StartDockerdForUser1000(dir.MakeDir("d"), &daemon, env), "");
  }
  ASSERT_EQ(RunAsUser1000(np_exec, {"trust"}, env, project).exit_code, 0);
  RunResult r = RunAsUser1000(
      np_exec, {"--", "sh", "-c", "whoami; id -un; id -u; echo $HOME; touch $HOME/ok && echo ok"},
      env, project);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string passwd = ReadFile("/etc/passwd");
  std::string expected = "np-exec";
  for (absl::string_view line : absl::StrSplit(passwd, '\n')) {
    std::vector<std::string> fields = absl::StrSplit(line, ':');
    if (fields.size() >= 3 && fields[2] == "1000") {
      expected = fields[0];
      break;
    }
  }
  EXPECT_EQ(r.out, expected + "\n" + expected + "\n1000\n/home/np-exec\nok\n");
  if (daemon) daemon->Stop();
}

INSTANTIATE_TEST_SUITE_P(Runtimes, NonRootAccountTest, ::testing::Values("docker", "bwrap"),
                         RuntimeName);

}  // namespace
}  // namespace np::testing
