// np-exec beside nubos-pilot's reference isolation CLI (`lib/isolation.cjs`
// and `bin/np-tools/isolation.cjs` at nubos-pilot 1.5.0), case by case.
//
// Each row states what the reference does with an input (read from its
// source: its error code, or what it accepts the input as) and what np-exec
// does; the test runs np-exec, the built binary, on that input in a fresh
// project with a usable fake container runtime, and asserts np-exec's column.
// A row whose two columns agree is behaviour np-exec keeps. A row whose
// columns differ is a deliberate departure and must name its line in
// docs/departures.md by a short phrase, which must appear there exactly once. The reference is
// not run here (it needs Node and is not vendored); its column is a statement
// checked against its source when the row was written.

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/launcher/fakes.h"

namespace np::testing {
namespace {

using nlohmann::json;
using ::testing::Contains;

// An outcome: an error code, or kAccepts (exit 0, nothing on stderr's last
// line but what the verb prints).
constexpr char kAccepts[] = "accepts";

struct Row {
  std::string name;
  // proj/.nubos-pilot/config.json; "@P" is the project's path, "@T" the
  // test's temporary directory (holding outside/ and proj/data/). Empty: none.
  std::string config;
  std::vector<std::string> args;
  std::string reference;  // The reference's code, or kAccepts (with how, in `how`).
  std::string np_exec;    // np-exec's code, or kAccepts.
  std::string readme;     // A departure's phrase in docs/departures.md; empty when kept.
  std::string how = "";   // What the reference makes of an input it accepts.
};

bool Departs(const Row& row) { return row.reference != row.np_exec; }

std::ostream& operator<<(std::ostream& os, const Row& row) { return os << row.name; }

// A container-tier config with `container` as isolation.container.
std::string Container(const std::string& container) {
  return R"({"isolation":{"tier":"container","container":)" + container + "}}";
}

// One mount under the container tier.
std::string Mount(const std::string& mount) { return Container(R"({"mounts":[)" + mount + "]}"); }

const std::vector<std::string> kWrap = {"wrap", "--", "node", "x.cjs"};

const std::vector<Row>& Rows() {
  static const auto* rows = new std::vector<Row>{
      // ---------------------------------------------- tier: kept
      {"TierSeven", R"({"isolation":{"tier":7}})", kWrap, "isolation-invalid-tier",
       "isolation-invalid-tier", ""},
      {"TierUnknownName", R"({"isolation":{"tier":"sandbox"}})", kWrap, "isolation-invalid-tier",
       "isolation-invalid-tier", ""},
      {"TierNullIsDirect", R"({"isolation":{"tier":null}})", kWrap, kAccepts, kAccepts, "",
       "direct: {wrapped:false}"},
      // ---------------------------------------------- mounts: kept
      {"MountNotAnObject", Mount(R"("@P/data")"), kWrap, "isolation-bad-mount",
       "isolation-bad-mount", ""},
      {"MountNull", Mount("null"), kWrap, "isolation-bad-mount", "isolation-bad-mount", ""},
      {"MountWithoutSource", Mount(R"({"target":"/data"})"), kWrap, "isolation-mount-no-source",
       "isolation-mount-no-source", ""},
      {"MountBlankSource", Mount(R"({"source":"  ","target":"/data"})"), kWrap,
       "isolation-mount-no-source", "isolation-mount-no-source", ""},
      {"MountSourceNumber", Mount(R"({"source":5,"target":"/data"})"), kWrap,
       "isolation-mount-no-source", "isolation-mount-no-source", ""},
      {"MountWithoutTarget", Mount(R"({"source":"@P/data"})"), kWrap, "isolation-mount-bad-target",
       "isolation-mount-bad-target", ""},
      {"MountTargetRelative", Mount(R"({"source":"@P/data","target":"data"})"), kWrap,
       "isolation-mount-bad-target", "isolation-mount-bad-target", ""},
      {"MountModeRwx", Mount(R"({"source":"@P/data","target":"/data","mode":"rwx"})"), kWrap,
       "isolation-mount-bad-mode", "isolation-mount-bad-mode", ""},
      {"MountColonInTarget", Mount(R"({"source":"@P/data","target":"/data:rw"})"), kWrap,
       "isolation-mount-colon-in-path", "isolation-mount-colon-in-path", ""},
      {"MountColonInSource", Mount(R"({"source":"@P/da:ta","target":"/data"})"), kWrap,
       "isolation-mount-colon-in-path", "isolation-mount-colon-in-path", ""},
      {"MountWritableOutsideProject",
       Mount(R"({"source":"@T/outside","target":"/out","mode":"rw"})"), kWrap,
       "isolation-mount-writable-outside-project", "isolation-mount-writable-outside-project", ""},
      {"MountDockerSocket", Mount(R"({"source":"/var/run/docker.sock","target":"/s"})"), kWrap,
       "isolation-mount-forbidden-source", "isolation-mount-forbidden-source", ""},
      {"MountProc", Mount(R"({"source":"/proc","target":"/p"})"), kWrap,
       "isolation-mount-forbidden-source", "isolation-mount-forbidden-source", ""},
      {"MountModeDefaultsToRo", Mount(R"({"source":"@T/outside","target":"/data"})"), kWrap,
       kAccepts, kAccepts, "", "read-only"},
      // ---------------------------------------------- mount inside the project: refused
      {"MountInsideTheProject", Mount(R"({"source":"@P/data","target":"/data"})"), kWrap, kAccepts,
       "isolation-mount-source-unstable", "A mount source inside a project", "read-only"},
      // ---------------------------------------------- other values: kept
      {"NetworkUnknown", Container(R"({"network":"nat"})"), kWrap, "isolation-invalid-network",
       "isolation-invalid-network", ""},
      {"ImageEmpty", Container(R"({"image":""})"), kWrap, "isolation-no-image",
       "isolation-no-image", ""},
      // The reference drops a falsy limit; np-exec passes --memory=0, which
      // docker reads as no limit: the same container.
      {"MemoryZero", Container(R"({"memory":0})"), kWrap, kAccepts, kAccepts, "", "no --memory"},
      {"LimitsAsNumbers", Container(R"({"memory":2147483648,"cpus":2})"), kWrap, kAccepts, kAccepts,
       "", "--memory 2147483648 --cpus 2"},
      // ---------------------------------------------- command line: kept
      {"WrapWithoutDashDash",
       "",
       {"wrap", "node"},
       "isolation-wrap-no-command",
       "isolation-wrap-no-command",
       ""},
      {"WrapWithoutDashDashAfterOptions",
       "",
       {"wrap", "--env", "FOO", "node"},
       "isolation-wrap-no-command",
       "isolation-wrap-no-command",
       ""},
      {"WrapNothingAfterDashDash",
       "",
       {"wrap", "--"},
       "isolation-wrap-no-command",
       "isolation-wrap-no-command",
       ""},
      {"DescribeEmpty",
       "",
       {"describe", ""},
       "isolation-missing-tier",
       "isolation-missing-tier",
       ""},
      {"DescribeNothing", "", {"describe"}, "isolation-missing-tier", "isolation-missing-tier", ""},
      {"DescribeUnknown",
       "",
       {"describe", "sandbox"},
       "isolation-unknown-tier",
       "isolation-unknown-tier",
       ""},
      {"EnvTrimmed",
       Container("{}"),
       {"wrap", "--env", " FOO , BAR ", "--", "node"},
       kAccepts,
       kAccepts,
       "",
       "-e FOO -e BAR"},
      {"EnvEmptyItemsDropped",
       Container("{}"),
       {"wrap", "--env", "FOO,,BAR", "--", "node"},
       kAccepts,
       kAccepts,
       "",
       "-e FOO -e BAR"},
      {"EnvMalformedAfterTrimming",
       Container("{}"),
       {"wrap", "--env", " A B ", "--", "node"},
       "isolation-bad-env-name",
       "isolation-bad-env-name",
       ""},
      // ---------------------------------------------- departures
      {"UnknownKeyUnderIsolation", R"({"isolation":{"tire":"container"}})", kWrap, kAccepts,
       "isolation-unknown-key", "An unknown key under `isolation` is refused",
       "a schema warning; the tier stays direct"},
      {"ValueCheckedOnEveryTier", R"({"isolation":{"container":{"network":"nat"}}})", kWrap,
       kAccepts, "isolation-invalid-network", "A value checked on every tier",
       "direct: the container block is never read"},
      {"EnvNameCheckedOnEveryTier",
       "",
       {"wrap", "--env", "A=1", "--", "node"},
       kAccepts,
       "isolation-bad-env-name",
       "A value checked on every tier",
       "direct: --env is never read"},
      {"MountModeNull", Mount(R"({"source":"@P/data","target":"/data","mode":null})"), kWrap,
       kAccepts, "isolation-mount-bad-mode", "A mount mode of `null`", "read-only"},
      {"MountModeEmpty", Mount(R"({"source":"@P/data","target":"/data","mode":""})"), kWrap,
       kAccepts, "isolation-mount-bad-mode", "A mount mode of `null`", "read-only"},
      {"MountSourceRelative", Mount(R"({"source":"data","target":"/data"})"), kWrap, kAccepts,
       "isolation-mount-bad-source", "A relative mount source is refused",
       "resolved against the working directory"},
      {"MountTargetRoot", Mount(R"({"source":"@P/data","target":"/"})"), kWrap, kAccepts,
       "isolation-mount-bad-target", "A mount target of `/`", "-v SOURCE:/:ro"},
      {"MountTargetComma", Mount(R"({"source":"@P/data","target":"/a,b"})"), kWrap, kAccepts,
       "isolation-mount-bad-target", "A mount target of `/`", "-v SOURCE:/a,b:ro"},
      {"MountTargetUnderProc", Mount(R"({"source":"@P/data","target":"/proc/x"})"), kWrap, kAccepts,
       "isolation-mount-bad-target", "A mount target of `/`", "-v SOURCE:/proc/x:ro"},
      {"MountsNotAnArray", Container(R"({"mounts":"@P/data"})"), kWrap, kAccepts,
       "isolation-invalid-value", "`mounts` that is not an array is refused", "no mounts"},
      {"CpusZero", Container(R"({"cpus":0})"), kWrap, kAccepts, "isolation-invalid-value",
       "A `cpus` of `0`", "no --cpus"},
      {"MemoryEmpty", Container(R"({"memory":""})"), kWrap, kAccepts, "isolation-invalid-value",
       "A `cpus` of `0`", "no --memory"},
      {"CpusWords", Container(R"({"cpus":"two"})"), kWrap, kAccepts, "isolation-invalid-value",
       "A `cpus` of `0`", "--cpus two"},
      {"UserNumber", Container(R"({"user":1000})"), kWrap, kAccepts, "isolation-invalid-value",
       "`user` must be `null`", "--user 1000"},
      {"WorktreeIsolationString", R"({"workflow":{"worktree_isolation":"true"}})", kWrap, kAccepts,
       "isolation-invalid-value", "`workflow.worktree_isolation` must be a boolean", "false"},
      {"WrapUnknownOption",
       "",
       {"wrap", "--bogus", "--", "node"},
       kAccepts,
       "usage",
       "`wrap` refuses an option it does not know",
       "the option is ignored"},
      {"WrapEmptyProgram",
       "",
       {"wrap", "--", ""},
       kAccepts,
       "isolation-wrap-no-command",
       "`wrap -- \"\"` is `isolation-wrap-no-command`",
       "bin \"\""},
      {"EnvHome",
       Container("{}"),
       {"wrap", "--env", "HOME", "--", "node"},
       kAccepts,
       "isolation-bad-env-name",
       "`HOME` cannot be forwarded",
       "-e HOME"},
  };
  return *rows;
}

class ReferenceCompatTest : public ::testing::TestWithParam<Row> {
 protected:
  // The world of one row: a project with proj/data and an outside/ folder, a
  // fake docker and a fake engine answering for it.
  RunResult Run(const Row& row, const std::vector<std::string>& extra_env = {}) {
    lab_.tmp().MakeDir("proj/data");
    lab_.tmp().MakeDir("outside");
    if (!row.config.empty()) {
      lab_.Config(
          absl::StrReplaceAll(row.config, {{"@P", lab_.project()}, {"@T", lab_.tmp().path()}}));
    }
    lab_.FakeDocker();
    std::vector<std::string> env = lab_.Env(engine_.docker_host());
    for (const std::string& entry : extra_env) {
      SetEnv(env, entry.substr(0, entry.find('=')), entry.substr(entry.find('=') + 1));
    }
    return lab_.Run(row.args, env);
  }

  Lab lab_;
  FakeEngine engine_{lab_.tmp().Path("engine.sock")};
};

TEST_P(ReferenceCompatTest, NpExecDoesWhatItsColumnSays) {
  const Row& row = GetParam();
  RunResult r = Run(row);
  EXPECT_FALSE(r.timed_out);
  if (row.np_exec == kAccepts) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(ErrorCodeOf(r.err), "") << r.err;
  } else {
    EXPECT_EQ(ErrorCodeOf(r.err), row.np_exec) << r.err;
    EXPECT_EQ(r.exit_code, 1) << "verbs exit 1, as the reference's do: " << r.err;
    EXPECT_EQ(r.out, "") << "no plan is printed for a refused input";
  }
  EXPECT_FALSE(lab_.Invoked("docker")) << "wrap and describe run nothing";
}

// Asked for JSON (as a workflow that parses errors does), a refusal is the
// reference's envelope exactly: one line, {code, message, details}, no more.
TEST_P(ReferenceCompatTest, ARefusalInJsonIsTheReferencesEnvelope) {
  const Row& row = GetParam();
  if (row.np_exec == kAccepts) return;
  RunResult r = Run(row, {"NP_EXEC_ERROR_FORMAT=json"});
  ASSERT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  const json envelope = LastEnvelope(r.err);
  ASSERT_TRUE(envelope.is_object()) << r.err;
  EXPECT_EQ(envelope.size(), 3u) << r.err;
  EXPECT_EQ(envelope["code"], row.np_exec);
  EXPECT_TRUE(envelope["message"].is_string());
  EXPECT_TRUE(envelope.contains("details"));
}

// Where np-exec keeps the reference's decision, the rows are all kept and
// need no line; each departure names one, and docs/departures.md holds it once.
TEST_P(ReferenceCompatTest, EachDepartureIsDocumented) {
  const Row& row = GetParam();
  if (!Departs(row)) {
    EXPECT_EQ(row.readme, "") << "a kept behaviour needs no departure line";
    return;
  }
  ASSERT_FALSE(row.readme.empty()) << "a departure must name its line in docs/departures.md";
  const std::string readme = ReadFile(SourceDir() + "/docs/departures.md");
  size_t count = 0;
  for (size_t at = readme.find(row.readme); at != std::string::npos;
       at = readme.find(row.readme, at + 1)) {
    ++count;
  }
  EXPECT_EQ(count, 1u) << "docs/departures.md must hold \"" << row.readme << "\" exactly once";
}

INSTANTIATE_TEST_SUITE_P(Rows, ReferenceCompatTest, ::testing::ValuesIn(Rows()),
                         [](const ::testing::TestParamInfo<Row>& param) {
                           return param.param.name;
                         });

// What the kept rows that accept their input print, in detail.

std::vector<std::string> WrapArgs(const RunResult& r) {
  json out = ParseJson(r.out);
  if (!out.contains("args")) return {};
  return out["args"].get<std::vector<std::string>>();
}

TEST(ReferenceCompatDetailTest, TierNullIsDirectFromTheDefault) {
  Lab lab;
  lab.Config(R"({"isolation":{"tier":null}})");
  RunResult status = lab.Run({"status", "--json"}, lab.Env());
  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_EQ(ParseJson(status.out)["tier"], "direct");
  EXPECT_EQ(ParseJson(status.out)["effective_from"], "default");
  RunResult wrap = lab.Run(kWrap, lab.Env());
  ASSERT_EQ(wrap.exit_code, 0) << wrap.err;
  EXPECT_EQ(ParseJson(wrap.out)["wrapped"], false);
  // And the run path runs the program in place.
  RunResult run = lab.Run({"--", lab.sentinel_program()}, lab.Env());
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(FileExists(lab.sentinel()));
}

TEST(ReferenceCompatDetailTest, EnvIsTrimmedAndEmptyItemsDropped) {
  Lab lab;
  lab.Config(R"({"isolation":{"tier":"container"}})");
  lab.FakeDocker();
  FakeEngine engine(lab.tmp().Path("engine.sock"));
  for (const char* list : {" FOO , BAR ", "FOO,,BAR", ",FOO, ,BAR,"}) {
    RunResult r = lab.Run({"wrap", "--env", list, "--", "node"}, lab.Env(engine.docker_host()));
    ASSERT_EQ(r.exit_code, 0) << list << ": " << r.err;
    std::vector<std::string> args = WrapArgs(r);
    auto foo = std::find(args.begin(), args.end(), "FOO");
    ASSERT_NE(foo, args.end()) << list;
    EXPECT_EQ(*(foo - 1), "-e");
    ASSERT_NE(foo + 2, args.end());
    EXPECT_EQ(*(foo + 1), "-e");
    EXPECT_EQ(*(foo + 2), "BAR");
    for (const std::string& arg : args) {
      EXPECT_EQ(arg.find(' '), std::string::npos) << "untrimmed: [" << arg << "]";
    }
  }
  // The run path takes the same list.
  RunResult run = lab.Run({"--env", " FOO , BAR ", "--", "node"}, lab.Env(engine.docker_host()));
  EXPECT_EQ(ErrorCodeOf(run.err), "") << run.err;
  std::vector<std::string> ran = ReadNulSeparated(lab.fakes() + "/docker.argv");
  EXPECT_THAT(ran, Contains("FOO"));
  EXPECT_THAT(ran, Contains("BAR"));
}

TEST(ReferenceCompatDetailTest, NumbersAreEchoedAsTheNumbersTheyWere) {
  Lab lab;
  lab.Config(R"({"isolation":{"tier":"container","container":{"memory":2147483648,"cpus":2}}})");
  lab.FakeDocker();
  FakeEngine engine(lab.tmp().Path("engine.sock"));
  RunResult status = lab.Run({"status", "--json"}, lab.Env(engine.docker_host()));
  ASSERT_EQ(status.exit_code, 0) << status.err;
  json container = ParseJson(status.out)["container"];
  ASSERT_TRUE(container["memory"].is_number_integer()) << container.dump();
  EXPECT_EQ(container["memory"].get<int64_t>(), 2147483648);
  ASSERT_TRUE(container["cpus"].is_number_integer()) << container.dump();
  EXPECT_EQ(container["cpus"].get<int64_t>(), 2);
  EXPECT_NE(status.out.find("2147483648"), std::string::npos);
  EXPECT_EQ(status.out.find("\"2147483648\""), std::string::npos) << "echoed as a string";
  // The argv still gets the text.
  std::vector<std::string> args =
      WrapArgs(lab.Run({"wrap", "--", "node"}, lab.Env(engine.docker_host())));
  EXPECT_THAT(args, Contains("--memory=2147483648"));
  EXPECT_THAT(args, Contains("--cpus=2"));
  // Strings stay strings.
  lab.Config(R"({"isolation":{"tier":"container","container":{"memory":"2g","cpus":"1.5"}}})");
  json strings =
      ParseJson(lab.Run({"status", "--json"}, lab.Env(engine.docker_host())).out)["container"];
  EXPECT_EQ(strings["memory"], "2g");
  EXPECT_EQ(strings["cpus"], "1.5");
}

}  // namespace
}  // namespace np::testing
