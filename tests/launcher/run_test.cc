// The run path of the built np-exec: direct and worktree exec in place, exit
// statuses, the container tier through a fake runtime, and the audit log.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/launcher/fakes.h"
#include "tests/support/ci.h"

namespace np::testing {
namespace {

// `--mount` of a spawn's account view (passwd, group, gitconfig): the run's
// and a printed plan's live in directories of their own.
bool IsAccountViewMount(const std::vector<std::string>& args, size_t i) {
  return args[i] == "--mount" && i + 1 < args.size() &&
         args[i + 1].find("/spawns/") != std::string::npos;
}

// The account view's mount without its per-spawn directory: what it binds
// where.
std::string AccountViewMount(const std::string& spec) {
  const size_t file = spec.rfind('/', spec.find(",target="));
  return "<account-view>" + spec.substr(file);
}

using nlohmann::json;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

// Starts np-exec with `args` in the lab's project, waits, and returns
// {pid, exit status, stdout}.
// Removes from `ran` the mount-check --expect triples of targets `planned`
// has none for: the placeholders a run pins once it made them
// (source_pins.h). Returns how many there were.
size_t DropPlaceholderChecks(std::vector<std::string>& ran,
                             const std::vector<std::string>& planned) {
  std::vector<std::string> targets;
  for (size_t i = 0; i + 1 < planned.size(); ++i) {
    if (planned[i] == "--expect") targets.push_back(planned[i + 1]);
  }
  size_t dropped = 0;
  for (size_t i = 0; i + 2 < ran.size();) {
    if (ran[i] == "--expect" &&
        std::find(targets.begin(), targets.end(), ran[i + 1]) == targets.end()) {
      ran.erase(ran.begin() + static_cast<long>(i), ran.begin() + static_cast<long>(i) + 3);
      ++dropped;
    } else {
      ++i;
    }
  }
  return dropped;
}

struct Started {
  pid_t pid;
  int status;
  std::string out;
  std::string err;
};
Started StartAndWait(const Lab& lab, const std::vector<std::string>& args,
                     const std::vector<std::string>& env) {
  std::vector<std::string> argv = {NpExecBin()};
  argv.insert(argv.end(), args.begin(), args.end());
  RunOptions options;
  options.cwd = lab.project();
  options.env = env;
  const std::string out = lab.tmp().Path("started.out");
  pid_t pid = StartProcess(argv, options, out, lab.tmp().Path("started.err"));
  int status = WaitProcess(pid, 30000);
  return {pid, status, ReadFile(out), ReadFile(lab.tmp().Path("started.err"))};
}

// ---------------------------------------------------------------- direct

TEST(DirectRunTest, ExecsInPlace) {
  Lab lab;
  Started s = StartAndWait(lab, {"--", "sh", "-c", "echo $$"}, lab.Env());
  ASSERT_EQ(s.status, 0);
  EXPECT_EQ(s.out, std::to_string(s.pid) + "\n")
      << "the program's pid is the pid of the np-exec process the caller spawned";
}

TEST(DirectRunTest, WorktreeAlsoExecsInPlace) {
  Lab lab;
  lab.Config(R"({"isolation":{"tier":"worktree"}})");
  Started s = StartAndWait(lab, {"--", "sh", "-c", "echo $$"}, lab.Env());
  ASSERT_EQ(s.status, 0);
  EXPECT_EQ(s.out, std::to_string(s.pid) + "\n");
}

TEST(DirectRunTest, ExitStatusPassesThrough) {
  Lab lab;
  for (int code : {0, 1, 7, 42, 124, 125, 126, 127, 255}) {
    RunResult r = lab.Run({"--", "sh", "-c", "exit " + std::to_string(code)}, lab.Env());
    EXPECT_EQ(r.exit_code, code);
    EXPECT_TRUE(r.err.empty()) << r.err;
  }
}

TEST(DirectRunTest, OutputAndInputPassThrough) {
  Lab lab;
  std::vector<std::string> argv = {NpExecBin(), "--", "sh", "-c",
                                   "cat; echo to-out; echo to-err >&2"};
  RunOptions options;
  options.cwd = lab.project();
  options.env = lab.Env();
  options.stdin_data = "from-stdin\n";
  RunResult r = RunProcess(argv, options);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "from-stdin\nto-out\n");
  EXPECT_EQ(r.err, "to-err\n");
}

TEST(DirectRunTest, SignalBecomes128PlusN) {
  Lab lab;
  RunResult term = lab.Run({"--", "sh", "-c", "kill -TERM $$"}, lab.Env());
  EXPECT_EQ(term.exit_code, 128 + SIGTERM);
  RunResult kill9 = lab.Run({"--", "sh", "-c", "kill -KILL $$"}, lab.Env());
  EXPECT_EQ(kill9.exit_code, 128 + SIGKILL);
}

TEST(DirectRunTest, ArgumentsArriveIntact) {
  Lab lab;
  RunResult r =
      lab.Run({"--", "sh", "-c", "printf '[%s]' \"$@\"", "x", "a b", "", "--help", "*"}, lab.Env());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "[a b][][--help][*]");
}

TEST(DirectRunTest, NotExecutableIs126) {
  Lab lab;
  const std::string file = lab.tmp().Write("proj/data.txt", "#!/bin/sh\necho ran\n", 0644);
  RunResult r = lab.Run({"--", file}, lab.Env());
  EXPECT_EQ(r.exit_code, 126);
  EXPECT_EQ(ErrorCodeOf(r.err), "program-not-executable");
  EXPECT_TRUE(r.out.empty());
  // Also when it is found on PATH.
  lab.tmp().Write("bin/plain", "#!/bin/sh\necho ran\n", 0644);
  RunResult on_path = lab.Run({"--", "plain"}, lab.Env());
  EXPECT_EQ(on_path.exit_code, 126);
  EXPECT_EQ(ErrorCodeOf(on_path.err), "program-not-executable");
}

TEST(DirectRunTest, NotFoundIs127) {
  Lab lab;
  RunResult r = lab.Run({"--", "no-such-program-xyz"}, lab.Env());
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_EQ(ErrorCodeOf(r.err), "program-not-found");
  RunResult path = lab.Run({"--", lab.tmp().Path("nope/prog")}, lab.Env());
  EXPECT_EQ(path.exit_code, 127);
  EXPECT_EQ(ErrorCodeOf(path.err), "program-not-found");
}

TEST(DirectRunTest, UsageErrorIs125) {
  Lab lab;
  RunResult r = lab.Run({"--bogus-option", "sh"}, lab.Env());
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_EQ(ErrorCodeOf(r.err), "usage");
}

TEST(DirectRunTest, ScriptModeRunsNode) {
  Lab lab;
  WriteExecutable(lab.tmp().Path("bin/node"),
                  "#!/bin/sh\nprintf 'node-fake'; printf ' [%s]' \"$@\"; echo\n");
  lab.tmp().Write("proj/tool.cjs", "console.log(1)\n");
  RunResult r = lab.Run({"tool.cjs", "a", "b c"}, lab.Env());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "node-fake [tool.cjs] [a] [b c]\n");
  for (const char* script : {"t.js", "t.mjs"}) {
    RunResult other = lab.Run({script}, lab.Env());
    EXPECT_EQ(other.out, std::string("node-fake [") + script + "]\n");
  }
}

TEST(DirectRunTest, OutsideAProjectRunsOnTheDefaultTier) {
  Lab lab;
  RunResult r = lab.Run({"--", "sh", "-c", "echo outside"}, lab.Env(), lab.tmp().Path("bin"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "outside\n");
}

// ---------------------------------------------------------------- audit (direct)

TEST(AuditLogTest, DirectRunAndRefusal) {
  Lab lab;
  std::vector<std::string> env = lab.Env();
  SetEnv(env, "SECRET_TOKEN", "s3cr3t-value-77");
  ASSERT_EQ(lab.Run({"--env", "SECRET_TOKEN", "--", "true", "s3cr3t-arg"}, env).exit_code, 0);
  ASSERT_EQ(lab.Run({"--", "no-such-program-xyz"}, env).exit_code, 127);
  const std::string text = ReadFile(lab.audit_log());
  EXPECT_THAT(text, Not(HasSubstr("s3cr3t-value-77")));
  EXPECT_THAT(text, Not(HasSubstr("s3cr3t-arg"))) << "argv is recorded as a digest";
  std::vector<json> lines = ReadJsonLines(lab.audit_log());
  ASSERT_EQ(lines.size(), 2u) << text;
  const json& run = lines[0];
  EXPECT_EQ(run["decision"], "run");
  EXPECT_EQ(run["tier"], "direct");
  EXPECT_EQ(run["effective_from"], "default");
  EXPECT_EQ(run["program"], "true");
  EXPECT_EQ(run["path"], lab.tools() + "/true");
  EXPECT_THAT(run["argv_digest"].get<std::string>(), ::testing::StartsWith("sha256:"));
  EXPECT_TRUE(run["pid"].is_number());
  EXPECT_TRUE(run["time"].is_string());
  const json& refused = lines[1];
  EXPECT_EQ(refused["decision"], "refused");
  EXPECT_EQ(refused["code"], "program-not-found");
  EXPECT_EQ(refused["program"], "no-such-program-xyz");
  struct stat st;
  ASSERT_EQ(stat(lab.audit_log().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(AuditLogTest, UnwritableLogIsReportedAndTheSpawnGoesOn) {
  Lab lab;
  // The audit "directory" is a file: nothing can be appended below it.
  lab.tmp().Write("proj/.nubos-pilot/audit", "not a directory");
  RunResult r = lab.Run({"--", "sh", "-c", "echo ran"}, lab.Env());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "ran\n");
  EXPECT_EQ(ErrorCodeOf(r.err), "audit-log-unwritable") << r.err;
}

TEST(AuditLogTest, SymlinkedAuditDirectoryIsNotFollowed) {
  Lab lab;
  const std::string elsewhere = lab.tmp().MakeDir("elsewhere");
  ASSERT_EQ(symlink(elsewhere.c_str(), (lab.project() + "/.nubos-pilot/audit").c_str()), 0);
  RunResult r = lab.Run({"--", "true"}, lab.Env());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(ErrorCodeOf(r.err), "audit-log-unwritable") << r.err;
  EXPECT_FALSE(FileExists(elsewhere + "/np-exec.jsonl"));
}

// Issue 15, item 8: a FIFO in the log's place hung every later spawn (in
// open), and SIGTERM did not end np-exec then. Now it is a warning, at once.
TEST(AuditLogTest, AFifoInPlaceOfTheLogNeverBlocks) {
  Lab lab;
  lab.tmp().MakeDir("proj/.nubos-pilot/audit");
  ASSERT_EQ(mkfifo(lab.audit_log().c_str(), 0600), 0);
  RunOptions options;
  options.env = lab.Env();
  options.cwd = lab.project();
  options.timeout_ms = 10000;
  RunResult r = RunProcess({NpExecBin(), "--", "sh", "-c", "echo ran"}, options);
  EXPECT_FALSE(r.timed_out) << "np-exec blocked on the FIFO";
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "ran\n");
  EXPECT_EQ(ErrorCodeOf(r.err), "audit-log-unwritable") << r.err;
  // A refusal is logged through the same open: it must not block either.
  RunResult refused = RunProcess({NpExecBin(), "--", "/no/such/program"}, options);
  EXPECT_FALSE(refused.timed_out);
  EXPECT_EQ(refused.exit_code, 127);
  // doctor reads the log's last refusal without blocking.
  RunResult doctor = RunProcess({NpExecBin(), "doctor", "--json"}, options);
  EXPECT_FALSE(doctor.timed_out);
}

TEST(AuditLogTest, ALogOwnedBySomeoneElseIsNotAppendedTo) {
  if (geteuid() != 0) NP_NEEDS("needs root to give the log another owner");
  Lab lab;
  lab.tmp().Write("proj/.nubos-pilot/audit/np-exec.jsonl", "theirs\n", 0600);
  ASSERT_EQ(chown(lab.audit_log().c_str(), 65534, 65534), 0);
  RunResult r = lab.Run({"--", "true"}, lab.Env());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(ErrorCodeOf(r.err), "audit-log-unwritable") << r.err;
  EXPECT_EQ(ReadFile(lab.audit_log()), "theirs\n");
}

// Issue 15, item 9: a .nubos-pilot that is a symlink out of the project is
// followed neither for the config nor for the log: the spawn is refused
// (config-not-a-file), nothing runs, and the refusal, which the project's log
// cannot take, is in the operator's state store.
TEST(AuditLogTest, ASymlinkedStateDirectoryIsNotFollowed) {
  Lab lab;
  const std::string elsewhere = lab.tmp().MakeDir("elsewhere");
  lab.tmp().MakeDir("elsewhere/audit");
  lab.tmp().Write("elsewhere/config.json", R"({"isolation":{"tier":"direct"}})");
  ASSERT_EQ(system(("rm -rf '" + lab.project() + "/.nubos-pilot'").c_str()), 0);
  ASSERT_EQ(symlink(elsewhere.c_str(), (lab.project() + "/.nubos-pilot").c_str()), 0);
  const std::string state = lab.tmp().MakeDir("state");
  std::vector<std::string> env = lab.Env();
  env.push_back("XDG_STATE_HOME=" + state);
  const std::string ran = lab.tmp().Path("ran");
  RunResult r = lab.Run({"--", "/usr/bin/touch", ran}, env);
  EXPECT_EQ(ErrorCodeOf(r.err), "config-not-a-file") << r.err;
  EXPECT_NE(r.exit_code, 0);
  EXPECT_FALSE(FileExists(ran));
  EXPECT_FALSE(FileExists(elsewhere + "/audit/np-exec.jsonl"));
  const std::string kept = ReadFile(state + "/np-exec/refusals.jsonl");
  nlohmann::json line = nlohmann::json::parse(kept.substr(0, kept.find('\n')), nullptr, false);
  ASSERT_TRUE(line.is_object()) << kept;
  EXPECT_EQ(line["decision"], "refused");
  EXPECT_EQ(line["code"], "config-not-a-file");
  EXPECT_EQ(line["project"], lab.project());
}

// The same for a config.json that is a link, even to a file inside the
// project.
TEST(AuditLogTest, ASymlinkedConfigIsRefused) {
  Lab lab;
  lab.tmp().Write("proj/other.json", R"({"isolation":{"tier":"direct"}})");
  const std::string config = lab.project() + "/.nubos-pilot/config.json";
  unlink(config.c_str());  // The lab may have written one.
  ASSERT_EQ(symlink("../other.json", config.c_str()), 0);
  RunResult r = lab.Run({"--", "true"}, lab.Env());
  EXPECT_EQ(ErrorCodeOf(r.err), "config-not-a-file") << r.err;
  EXPECT_NE(r.exit_code, 0);
}

// ---------------------------------------------------------------- trust

// Issue 14: a project file that widens the container tier runs only once the
// operator trusts that exact content; a later edit needs trust again; a
// project that ran on the container tier cannot silently ask for less.
class TrustRunTest : public ::testing::Test {
 protected:
  TrustRunTest() : engine_(lab_.tmp().Path("engine.sock")) {
    lab_.FakeDocker();
    env_ = lab_.Env(engine_.docker_host());
  }
  // Writes the config without the operator's trust.
  void Write(const std::string& text) { lab_.tmp().Write("proj/.nubos-pilot/config.json", text); }
  RunResult Run() { return lab_.Run({"--", lab_.sentinel_program()}, env_); }
  RunResult Trust(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"trust"};
    args.insert(args.end(), extra.begin(), extra.end());
    return lab_.Run(args, env_);
  }

  Lab lab_;
  FakeEngine engine_;
  std::vector<std::string> env_;
};

TEST_F(TrustRunTest, AWideningConfigRunsOnlyOnceTrustedAndEveryEditNeedsTrustAgain) {
  Write(R"({"isolation":{"tier":"container","container":{"network":"host"}}})");
  RunResult refused = Run();
  EXPECT_EQ(refused.exit_code, 125);
  EXPECT_EQ(ErrorCodeOf(refused.err), "isolation-config-untrusted") << refused.err;
  EXPECT_FALSE(lab_.Invoked());
  EXPECT_THAT(lab_.Run({"status", "--json"}, env_).out, HasSubstr("\"untrusted\""));

  RunResult trusted = Trust();
  ASSERT_EQ(trusted.exit_code, 0) << trusted.err;
  EXPECT_THAT(trusted.out, HasSubstr("isolation.container.network"));
  EXPECT_EQ(Run().exit_code, 0);
  EXPECT_TRUE(lab_.Invoked());
  EXPECT_THAT(lab_.Run({"trust", "--show", "--json"}, env_).out, HasSubstr("sha256"));

  // Any edit of np-exec's part: refused again, as "changed".
  Write(R"({"isolation":{"tier":"container","container":{"network":"bridge"}}})");
  RunResult changed = Run();
  EXPECT_EQ(ErrorCodeOf(changed.err), "isolation-config-untrusted") << changed.err;
  EXPECT_THAT(lab_.Run({"status", "--json"}, env_).out, HasSubstr("\"changed\""));
  // Keys of nubos-pilot's own change freely.
  Write(R"({"isolation":{"tier":"container","container":{"network":"host"}},"other":1})");
  EXPECT_EQ(Run().exit_code, 0);

  ASSERT_EQ(Trust({"--revoke"}).exit_code, 0);
  EXPECT_EQ(ErrorCodeOf(Run().err), "isolation-config-untrusted");
}

TEST_F(TrustRunTest, TheRatchetRefusesALoweredOrDeletedConfigUntilTrusted) {
  Write(R"({"isolation":{"tier":"container"}})");
  ASSERT_EQ(Run().exit_code, 0);  // Defaults widen nothing: no trust needed.
  for (const std::string& lowered :
       {std::string(R"({"isolation":{"tier":"direct"}})"), std::string("{}")}) {
    Write(lowered);
    RunResult r = Run();
    EXPECT_EQ(r.exit_code, 125) << lowered;
    EXPECT_EQ(ErrorCodeOf(r.err), "isolation-tier-lowered") << lowered << r.err;
    EXPECT_FALSE(FileExists(lab_.sentinel())) << "nothing may run";
  }
  ASSERT_EQ(unlink((lab_.project() + "/.nubos-pilot/config.json").c_str()), 0);
  EXPECT_EQ(ErrorCodeOf(Run().err), "isolation-tier-lowered");
  EXPECT_THAT(lab_.Run({"status", "--json"}, env_).out, HasSubstr("\"lowered\""));
  // The operator accepts the lower tier explicitly.
  Write(R"({"isolation":{"tier":"direct"}})");
  ASSERT_EQ(Trust().exit_code, 0);
  RunResult accepted = Run();
  EXPECT_EQ(accepted.exit_code, 0) << accepted.err;
  EXPECT_TRUE(FileExists(lab_.sentinel()));
}

// The program inside a container project makes `sub/.nubos-pilot/` with a
// direct config; np-exec started from below sub/ finds that nested project
// first. It may not run below the enclosing project's ratchet.
TEST_F(TrustRunTest, ANestedProjectCannotAskForLessThanTheOneAroundIt) {
  Write(R"({"isolation":{"tier":"container"}})");
  ASSERT_EQ(Run().exit_code, 0);
  lab_.tmp().Write("proj/sub/.nubos-pilot/config.json", R"({"isolation":{"tier":"direct"}})");
  RunResult r = lab_.Run({"--", lab_.sentinel_program()}, env_, lab_.project() + "/sub");
  EXPECT_EQ(r.exit_code, 125) << r.err;
  EXPECT_EQ(ErrorCodeOf(r.err), "isolation-tier-lowered") << r.err;
  EXPECT_FALSE(FileExists(lab_.sentinel()));
  // The operator can accept it, in that project, explicitly.
  RunResult trusted = lab_.Run({"trust"}, env_, lab_.project() + "/sub");
  ASSERT_EQ(trusted.exit_code, 0) << trusted.err;
  EXPECT_EQ(lab_.Run({"--", lab_.sentinel_program()}, env_, lab_.project() + "/sub").exit_code, 0);
}

// Concurrent spawns of one project update its record under the lock:
// nothing lost, nothing torn.
TEST_F(TrustRunTest, ConcurrentSpawnsKeepOneWholeRecord) {
  Write(R"({"isolation":{"tier":"container"}})");
  std::vector<pid_t> children;
  for (int i = 0; i < 8; ++i) {
    pid_t pid = fork();
    if (pid == 0) {
      RunResult r = Run();
      _exit(r.exit_code == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  RunResult show = lab_.Run({"trust", "--show", "--json"}, env_);
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_THAT(show.out, HasSubstr("container"));
  Write(R"({"isolation":{"tier":"direct"}})");
  EXPECT_EQ(ErrorCodeOf(Run().err), "isolation-tier-lowered");
}

// ---------------------------------------------------------------- container

class ContainerRunTest : public ::testing::Test {
 protected:
  ContainerRunTest() : engine_(lab_.tmp().Path("engine.sock")) {
    lab_.Config(R"({"isolation":{"tier":"container","container":{"env":["CONF_VAR"]}}})");
    env_ = lab_.Env(engine_.docker_host());
    SetEnv(env_, "API_KEY", "value-of-api-key-123");
    SetEnv(env_, "CONF_VAR", "value-of-conf-var-456");
  }

  // Drops the values that differ between two plans of the same spawn: the
  // unique --name, and the owner label that only a supervised run carries.
  static std::vector<std::string> Comparable(std::vector<std::string> args) {
    std::vector<std::string> out;
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i] == "--name" && i + 1 < args.size()) {
        out.push_back("--name");
        out.push_back("<unique>");
        ++i;
        continue;
      }
      if (args[i] == "--label" && i + 1 < args.size() &&
          args[i + 1].rfind("dev.nubos.np-exec.owner=", 0) == 0) {
        ++i;
        continue;
      }
      if (IsAccountViewMount(args, i)) {
        out.insert(out.end(), {"--mount", AccountViewMount(args[i + 1])});
        ++i;
        continue;
      }
      out.push_back(args[i]);
    }
    return out;
  }

  Lab lab_;
  FakeEngine engine_;
  std::vector<std::string> env_;
};

TEST_F(ContainerRunTest, RunsExactlyTheArgvCoreBuilt) {
  lab_.FakeDocker();
  RunResult wrap = lab_.Run({"wrap", "--env", "API_KEY", "--", "node", "x.cjs", "a b"}, env_);
  ASSERT_EQ(wrap.exit_code, 0) << wrap.err;
  std::vector<std::string> printed = ParseJson(wrap.out)["args"].get<std::vector<std::string>>();
  // After sandbox-exec's own options and the runtime's path: the runtime's argv.
  auto dashes = std::find(printed.begin(), printed.end(), "--");
  ASSERT_NE(dashes, printed.end());
  ASSERT_NE(dashes + 1, printed.end());
  std::vector<std::string> planned(dashes + 2, printed.end());

  RunResult r = lab_.Run({"--env", "API_KEY", "--", "node", "x.cjs", "a b"}, env_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> ran = ReadNulSeparated(lab_.fakes() + "/docker.argv");
  // The run pins the placeholders it made (source_pins.h): one more
  // mount-check --expect each, which a printed plan gets from sandbox-exec.
  const size_t placeholder_checks = DropPlaceholderChecks(ran, planned);
  EXPECT_GT(placeholder_checks, 0u);
  EXPECT_EQ(Comparable(ran), Comparable(planned));
  // The run carries an owner label that wrap does not; both bind the
  // caller's account view (their own directories); everything else is equal.
  EXPECT_EQ(ran.size(), planned.size() + 2);
  EXPECT_THAT(ran, Contains(::testing::EndsWith("target=/etc/passwd,readonly")));
  EXPECT_THAT(planned, Contains(::testing::EndsWith("target=/etc/passwd,readonly")));
  EXPECT_THAT(ran, Contains(::testing::StartsWith("dev.nubos.np-exec.owner=")));
  // Exactly one invocation: no probe through the client, no retry.
  EXPECT_EQ(ReadFile(lab_.fakes() + "/docker.calls").find('\n'),
            ReadFile(lab_.fakes() + "/docker.calls").size() - 1);
}

TEST_F(ContainerRunTest, EnvIsForwardedByNameOnly) {
  lab_.FakeDocker();
  RunResult r = lab_.Run({"--env", "API_KEY", "--", "node"}, env_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> ran = ReadNulSeparated(lab_.fakes() + "/docker.argv");
  for (const std::string& arg : ran) {
    EXPECT_THAT(arg, Not(HasSubstr("value-of-api-key-123")));
    EXPECT_THAT(arg, Not(HasSubstr("value-of-conf-var-456")));
  }
  for (const char* name : {"API_KEY", "CONF_VAR"}) {
    auto it = std::find(ran.begin(), ran.end(), name);
    ASSERT_NE(it, ran.end()) << name;
    ASSERT_NE(it, ran.begin());
    EXPECT_EQ(*(it - 1), "-e") << name;
  }
  std::vector<std::string> seen_env = ReadNulSeparated(lab_.fakes() + "/docker.env");
  EXPECT_THAT(seen_env, Contains("API_KEY=value-of-api-key-123"));
  EXPECT_THAT(seen_env, Contains("CONF_VAR=value-of-conf-var-456"));
}

TEST_F(ContainerRunTest, RuntimeStatusAndOutputPassThrough) {
  FakeRuntimeOptions options;
  options.run_exit = 7;
  lab_.FakeDocker(options);
  RunResult r = lab_.Run({"--", "node"}, env_);
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.out, "fake-run-output\n");
  EXPECT_THAT(r.err, HasSubstr("fake-run-stderr"));
}

TEST_F(ContainerRunTest, ScriptModeRunsNodeInTheContainer) {
  lab_.FakeDocker();
  RunResult r = lab_.Run({"tool.cjs", "a"}, env_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> ran = ReadNulSeparated(lab_.fakes() + "/docker.argv");
  // The image, np-exec's mount check (core/mount_pins.h), then the program.
  const auto image = std::find(ran.begin(), ran.end(), "node:22-bookworm-slim");
  ASSERT_LT(image + 2, ran.end());
  EXPECT_EQ(*(image + 1), "/run/np-exec/np-exec");
  EXPECT_EQ(*(image + 2), "mount-check");
  EXPECT_EQ(std::vector<std::string>(ran.end() - 4, ran.end()),
            (std::vector<std::string>{"--", "node", "tool.cjs", "a"}));
}

// The image is not asked for before the client starts (issue 19): the
// client's own failure (125 under --pull=never, as the real one exits) makes
// np-exec ask the engine, and a missing image is np-exec's clear error.
TEST_F(ContainerRunTest, MissingImageIsTheClearErrorAfterTheClientFails) {
  FakeRuntimeOptions options;
  options.run_exit = 125;
  options.run_stderr = "docker: Error response from daemon: No such image: node:22-bookworm-slim";
  lab_.FakeDocker(options);
  engine_.set_image_present(false);
  RunResult r = lab_.Run({"--", lab_.sentinel_program()}, env_);
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_EQ(ErrorCodeOf(r.err), "isolation-image-missing");
  EXPECT_FALSE(FileExists(lab_.sentinel()));
  std::vector<std::string> ran = ReadNulSeparated(lab_.fakes() + "/docker.argv");
  EXPECT_THAT(ran, Contains("--pull=never"));
  // No extra round trip before the client: the probe is the image's entry
  // (a 404 that names no engine, as this fake's does not, falls back to the
  // ping and /version), then the image again only after the failure.
  std::vector<std::string> requests = engine_.requests();
  ASSERT_FALSE(requests.empty());
  EXPECT_EQ(requests.front(), "GET /images/node:22-bookworm-slim/json");
  EXPECT_EQ(requests.back(), "GET /images/node:22-bookworm-slim/json");
  EXPECT_EQ(std::count(requests.begin(), requests.end(), requests.back()), 2);
}

// The spawn's probe is one request, the image's own entry (which names the
// image's content ID for the account view's cache): no ping, no /version,
// no image check before or after a successful run.
TEST_F(ContainerRunTest, OneEngineRoundTripBeforeASuccessfulRun) {
  lab_.FakeDocker();
  RunResult r = lab_.Run({"--", "node"}, env_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> requests = engine_.requests();
  EXPECT_EQ(std::count(requests.begin(), requests.end(), "GET /images/node:22-bookworm-slim/json"),
            1);
  EXPECT_THAT(requests, Not(Contains("GET /_ping")));
  EXPECT_THAT(requests, Not(Contains("GET /version")));
  // This fake's ID is no sha256 ID: no copy-out (nothing could remember it).
  EXPECT_THAT(ReadFile(lab_.fakes() + "/docker.calls"), Not(HasSubstr("create")));
}

// A program of the container's own that exits 125 is its status, not an
// error of np-exec's: the image is there.
TEST_F(ContainerRunTest, AProgramsOwn125PassesThrough) {
  FakeRuntimeOptions options;
  options.run_exit = 125;
  lab_.FakeDocker(options);
  RunResult r = lab_.Run({"--", "node"}, env_);
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_EQ(ErrorCodeOf(r.err), "");
}

// Issue 15, item 1: the engine's own state directory, as the engine reports
// it, is a forbidden source too (asked only when the config has mounts).
TEST_F(ContainerRunTest, TheEnginesReportedRootDirIsAForbiddenSource) {
  lab_.FakeDocker();
  const std::string root = lab_.tmp().MakeDir("engine-root");
  engine_.set_root_dir(root);
  lab_.Config(R"({"isolation":{"tier":"container","container":{"mounts":[{"source":")" + root +
              R"(/containers","target":"/c"}]}}})");
  lab_.tmp().MakeDir("engine-root/containers");
  RunResult r = lab_.Run({"--", lab_.sentinel_program()}, env_);
  EXPECT_EQ(r.exit_code, 125) << r.err;
  EXPECT_EQ(ErrorCodeOf(r.err), "isolation-mount-forbidden-source") << r.err;
  EXPECT_FALSE(lab_.Invoked());
  EXPECT_FALSE(FileExists(lab_.sentinel()));
}

TEST_F(ContainerRunTest, AuditLogRecordsRunExitAndRefusal) {
  lab_.FakeDocker();
  ASSERT_EQ(lab_.Run({"--env", "API_KEY", "--", "node", "x.cjs"}, env_).exit_code, 0);
  engine_.set_image_present(false);
  FakeRuntimeOptions failing;
  failing.run_exit = 125;  // As the client exits under --pull=never.
  lab_.FakeDocker(failing);
  ASSERT_EQ(lab_.Run({"--", "node"}, env_).exit_code, 125);
  const std::string text = ReadFile(lab_.audit_log());
  EXPECT_THAT(text, Not(HasSubstr("value-of-api-key-123")));
  EXPECT_THAT(text, Not(HasSubstr("value-of-conf-var-456")));
  std::vector<json> lines = ReadJsonLines(lab_.audit_log());
  ASSERT_EQ(lines.size(), 4u) << text;
  const json& run = lines[0];
  EXPECT_EQ(run["decision"], "run");
  EXPECT_EQ(run["tier"], "container");
  EXPECT_EQ(run["effective_from"], "config");
  EXPECT_EQ(run["runtime"], "docker");
  EXPECT_EQ(run["image"], "node:22-bookworm-slim");
  EXPECT_EQ(run["env"], json({"CONF_VAR", "API_KEY"}));
  ASSERT_TRUE(run["mounts"].is_array());
  EXPECT_EQ(run["mounts"][0]["source"], lab_.project());
  EXPECT_EQ(run["mounts"][0]["mode"], "rw");
  EXPECT_THAT(run["container"].get<std::string>(), ::testing::StartsWith("np-exec-"));
  const json& exit = lines[1];
  EXPECT_EQ(exit["event"], "exit");
  EXPECT_EQ(exit["exit_status"], 0);
  EXPECT_TRUE(exit["duration_ms"].is_number());
  // The client was started (its run line), then failed on the image: the
  // run ends in its exit line with np-exec's status and code, never a
  // refusal after a run.
  EXPECT_EQ(lines[2]["decision"], "run");
  const json& failed = lines[3];
  EXPECT_FALSE(failed.contains("decision")) << failed.dump();
  EXPECT_EQ(failed["event"], "exit");
  EXPECT_EQ(failed["exit_status"], 125);
  EXPECT_EQ(failed["code"], "isolation-image-missing");
  EXPECT_EQ(failed["container"], lines[2]["container"]);
  for (const json& line : lines) EXPECT_NE(line.value("decision", ""), "refused") << line.dump();
}

// podman through its API socket (CONTAINER_HOST), with the same argv contract.
TEST(PodmanRunTest, RunsExactlyTheArgvCoreBuilt) {
  Lab lab;
  lab.Config(R"({"isolation":{"tier":"container","container":{"runtime":"podman"}}})");
  WriteFakeRuntime(lab.fakes(), "podman");
  FakeEngine engine(lab.tmp().Path("podman.sock"));
  std::vector<std::string> env = lab.Env();
  SetEnv(env, "CONTAINER_HOST", engine.docker_host());
  SetEnv(env, "API_KEY", "podman-secret-value");
  RunResult wrap = lab.Run({"wrap", "--env", "API_KEY", "--", "node", "x.cjs"}, env);
  ASSERT_EQ(wrap.exit_code, 0) << wrap.err;
  json plan = ParseJson(wrap.out);
  EXPECT_EQ(plan["bin"], NpExecBin());
  RunResult r = lab.Run({"--env", "API_KEY", "--", "node", "x.cjs"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> ran = ReadNulSeparated(lab.fakes() + "/podman.argv");
  const std::vector<std::string> printed = plan["args"].get<std::vector<std::string>>();
  auto dashes = std::find(printed.begin(), printed.end(), "--");
  ASSERT_NE(dashes, printed.end());
  ASSERT_NE(dashes + 1, printed.end());
  EXPECT_EQ(*(dashes + 1), lab.fakes() + "/podman");
  std::vector<std::string> planned(dashes + 2, printed.end());
  auto strip = [](std::vector<std::string> args) {
    std::vector<std::string> out;
    for (size_t i = 0; i < args.size(); ++i) {
      // A forwarded value goes in as a podman secret (podman_secrets.h).
      if (args[i] == "--secret" && i + 1 < args.size()) {
        const size_t target = args[i + 1].find(",target=");
        out.insert(out.end(), {"-e", args[i + 1].substr(target + 8)});
        ++i;
        continue;
      }
      if (IsAccountViewMount(args, i)) {
        out.insert(out.end(), {"--mount", AccountViewMount(args[i + 1])});
        ++i;
        continue;
      }
      if (args[i] == "--name" || (args[i] == "--label" && i + 1 < args.size() &&
                                  args[i + 1].rfind("dev.nubos.np-exec.owner=", 0) == 0)) {
        ++i;
        continue;
      }
      out.push_back(args[i]);
    }
    return out;
  };
  EXPECT_GT(DropPlaceholderChecks(ran, planned), 0u);
  EXPECT_EQ(strip(ran), strip(planned));
  EXPECT_THAT(ReadNulSeparated(lab.fakes() + "/podman.env"),
              Contains("API_KEY=podman-secret-value"));
  for (const std::string& arg : ran) EXPECT_THAT(arg, Not(HasSubstr("podman-secret-value")));
  EXPECT_THAT(ran, Contains(::testing::EndsWith(",type=env,target=API_KEY")));
  const std::string calls = ReadFile(lab.fakes() + "/podman.calls");
  EXPECT_THAT(calls, HasSubstr("secret create --env "));
  EXPECT_THAT(calls, HasSubstr("-env-0 API_KEY\n"));
  EXPECT_THAT(calls, HasSubstr("secret rm "));
  EXPECT_FALSE(lab.Invoked("docker"));
}

// A fake bubblewrap: records its argv and environment, reports the sandbox set
// up on --info-fd when `report` is true (as the real one does once its
// namespaces exist), prints its parent's pid, then runs the program after --.
std::string WriteFakeBwrap(const Lab& lab, bool report) {
  const std::string rec = lab.fakes() + "/bwrap";
  WriteExecutable(rec,
                  "#!/bin/sh\n"
                  ": > '" +
                      rec +
                      ".argv'\n"
                      "for a in \"$@\"; do printf '%s\\0' \"$a\" >> '" +
                      rec +
                      ".argv'; done\n"
                      "/usr/bin/env -0 > '" +
                      rec +
                      ".env'\n"
                      "fd=''\n"
                      "while [ $# -gt 0 ]; do\n"
                      "  case $1 in --info-fd) fd=$2; shift ;; --) shift; break ;; esac\n"
                      "  shift\n"
                      "done\n" +
                      std::string(report ? "echo '{\"child-pid\": 2}' > /proc/self/fd/$fd\n"
                                         : "echo 'bwrap: Creating new namespace failed' >&2\n"
                                           "exit 1\n") +
                      "echo \"parent $PPID\"\n"
                      "\"$@\"\n");
  return rec;
}

// bubblewrap runs as np-exec's child (so np-exec can refuse a sandbox that
// never came up) with an environment np-exec built: values of forwarded
// variables reach it through the environment, never the argv.
TEST(BwrapRunTest, SupervisesBubblewrapWithValuesOnlyInItsEnvironment) {
  Lab lab;
  lab.Config(
      R"({"isolation":{"tier":"container","container":{"runtime":"bwrap","env":["API_KEY"]}}})");
  const std::string rec = WriteFakeBwrap(lab, /*report=*/true);
  std::vector<std::string> env = lab.Env();
  SetEnv(env, "API_KEY", "bwrap-secret-value");
  SetEnv(env, "OTHER_SECRET", "not-forwarded-value");
  Started s = StartAndWait(lab, {"--", "sh", "-c", "exit 7"}, env);
  EXPECT_EQ(s.status, 7) << "the program's status passes through" << s.err;
  EXPECT_THAT(s.out, HasSubstr("parent " + std::to_string(s.pid) + "\n"))
      << "bubblewrap is np-exec's child";
  std::vector<std::string> argv = ReadNulSeparated(rec + ".argv");
  ASSERT_GE(argv.size(), 4u);
  EXPECT_EQ(std::vector<std::string>(argv.end() - 4, argv.end()),
            (std::vector<std::string>{"--", "sh", "-c", "exit 7"}));
  EXPECT_EQ(argv[0], "--info-fd");
  // The placeholders' watchdog learns the sandbox's end through it.
  EXPECT_EQ(argv[2], "--sync-fd");
  EXPECT_THAT(argv, Contains("--unshare-net"));
  EXPECT_THAT(argv, Contains("--die-with-parent"));
  for (const std::string& arg : argv) EXPECT_THAT(arg, Not(HasSubstr("bwrap-secret-value")));
  std::vector<std::string> seen = ReadNulSeparated(rec + ".env");
  EXPECT_THAT(seen, Contains("API_KEY=bwrap-secret-value"));
  for (const std::string& var : seen) EXPECT_THAT(var, Not(HasSubstr("not-forwarded-value")));
}

// A sandbox that never reports itself set up never ran the program: refused
// like an unusable runtime, never run some other way.
TEST(BwrapRunTest, SandboxThatNeverComesUpIsRefused) {
  Lab lab;
  lab.Config(R"({"isolation":{"tier":"container","container":{"runtime":"bwrap"}}})");
  WriteFakeBwrap(lab, /*report=*/false);
  // In the project, so the sandbox would show it (outside it is 127 first).
  const std::string program = WriteSentinelProgram(lab.project() + "/sentinel", lab.sentinel());
  Started s = StartAndWait(lab, {"--", program}, lab.Env());
  EXPECT_EQ(s.status, 69);
  EXPECT_FALSE(FileExists(lab.sentinel()));
}

}  // namespace
}  // namespace np::testing
