// The egress allowlist end to end (issue 16 item 1), on docker, podman and
// bubblewrap: a program in the sandbox reaches exactly the listed
// host:port through np-exec's per-spawn proxy and nothing else.
//
// The upstream is a loopback HTTP server in this test process
// (tests/egress/loopback.h), listed as the literal 127.0.0.1:PORT. Inside,
// busybox (the image's, or the host's /usr/bin/busybox on bubblewrap) is the
// client: `wget` with http_proxy for plain HTTP, and `nc` to the bridge for a
// raw CONNECT and for requests the proxy must refuse. Each run checks from
// inside what the argv promised, then the host: the audit lines and the
// socket directory (under a private XDG_RUNTIME_DIR) gone, also after a
// SIGKILL of np-exec. A scratch image holding only a static busybox named
// `wget` (no shell, no libc) shows the bridge starts in any image.
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"
#include "tests/egress/loopback.h"

namespace np::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Entries of a directory, without . and ..
std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(d);
  return names;
}

class EgressTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    NP_REQUIRE_RUNTIME(runtime());
    project_ = dir_.MakeDir("project");
    run_dir_ = dir_.MakeDir("run");
    chmod(run_dir_.c_str(), 0700);
    other_port_ = UnusedPort();
    Configure({absl::StrCat("127.0.0.1:", server_.port()),
               absl::StrCat("localhost:", named_server_.port())},
              "np-test:local");
  }
  void TearDown() override {
    for (const std::string& image : built_images_) RunRuntime(runtime(), {"rmi", "-f", image});
  }
  const std::string& runtime() const { return GetParam(); }

  void Configure(const std::vector<std::string>& hosts, const std::string& image) {
    MakeProject(project_, ContainerConfig(runtime(), image,
                                          {{"network", "allowlist"}, {"allow_hosts", hosts}}));
  }

  std::vector<std::string> Env() const {
    return RuntimeEnv({absl::StrCat("XDG_RUNTIME_DIR=", run_dir_)});
  }

  // Runs a busybox shell script inside the sandbox.
  RunResult RunScript(const std::string& script) {
    return RunProcess({NpExecBin(), "--", "busybox", "sh", "-c", script},
                      Options(Env(), 120000, project_));
  }

  // A raw request sent to the bridge with busybox nc; prints the reply.
  static std::string RawToBridge(const std::string& request) {
    return absl::StrCat("printf '", request, "' | busybox nc 127.0.0.1 3128; echo '<<end>>'; ");
  }

  std::vector<nlohmann::json> EgressLines() {
    int bad = 0;
    std::vector<nlohmann::json> lines;
    for (const nlohmann::json& line : ReadAuditLog(project_, &bad)) {
      if (line.is_object() && line.value("event", "") == "egress") lines.push_back(line);
    }
    EXPECT_EQ(bad, 0);
    return lines;
  }

  TempDir dir_;
  std::string project_;
  std::string run_dir_;
  LoopbackHttpServer server_;        // listed as the literal 127.0.0.1:PORT
  LoopbackHttpServer named_server_;  // listed only by the name localhost
  uint16_t other_port_ = 0;
  std::vector<std::string> built_images_;
};

TEST_P(EgressTest, ListedLiteralIsReachedByPlainHttpAndConnect) {
  const std::string target = absl::StrCat("127.0.0.1:", server_.port());
  const std::string script = absl::StrCat(
      "echo \"env: $HTTPS_PROXY $HTTP_PROXY $https_proxy $http_proxy $NODE_USE_ENV_PROXY\"; ",
      "busybox wget -q -O - http://", target, "/plain-through-proxy; echo; ", "(printf 'CONNECT ",
      target, " HTTP/1.1\\r\\nHost: ", target,
      "\\r\\n\\r\\n'; sleep 1; printf 'GET /in-the-tunnel HTTP/1.1\\r\\nHost: ", target,
      "\\r\\nConnection: close\\r\\n\\r\\n'; sleep 2) | busybox nc 127.0.0.1 3128");
  RunResult r = RunScript(script);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_THAT(r.out, HasSubstr("env: http://127.0.0.1:3128 http://127.0.0.1:3128 "
                               "http://127.0.0.1:3128 http://127.0.0.1:3128 1"));
  EXPECT_THAT(r.out, HasSubstr("upstream saw GET /plain-through-proxy HTTP/1.1"));
  EXPECT_THAT(r.out, HasSubstr("HTTP/1.1 200 Connection established"));
  EXPECT_THAT(r.out, HasSubstr("upstream saw GET /in-the-tunnel HTTP/1.1"));

  // One audit line per connection attempt, both allowed, with bytes counted.
  std::vector<nlohmann::json> lines = EgressLines();
  ASSERT_EQ(lines.size(), 2u) << r.out;
  for (const nlohmann::json& line : lines) {
    EXPECT_EQ(line["egress"]["allowed"], true) << line.dump();
    EXPECT_EQ(line["egress"]["host"], "127.0.0.1");
    EXPECT_EQ(line["egress"]["port"], server_.port());
    EXPECT_EQ(line["egress"]["address"], "127.0.0.1");
    EXPECT_GT(line["egress"]["bytes_down"].get<uint64_t>(), 0u);
  }
  EXPECT_EQ(lines[0]["egress"]["method"], "GET");
  EXPECT_EQ(lines[1]["egress"]["method"], "CONNECT");
  // The private socket directory is gone.
  EXPECT_TRUE(Entries(run_dir_).empty()) << ::testing::PrintToString(Entries(run_dir_));
}

TEST_P(EgressTest, UnlistedPortHostAndLoopbackNameAreRefusedWith403) {
  const std::string script =
      absl::StrCat(RawToBridge(absl::StrCat("GET http://127.0.0.1:", other_port_,
                                            "/ HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")),
                   RawToBridge(absl::StrCat("CONNECT unlisted.example:443 HTTP/1.1\\r\\nHost: "
                                            "unlisted.example\\r\\n\\r\\n")),
                   // Listed by name only: localhost resolves into loopback, which only a
                   // literal entry may open.
                   RawToBridge(absl::StrCat("CONNECT localhost:", named_server_.port(),
                                            " HTTP/1.1\\r\\nHost: localhost\\r\\n\\r\\n")),
                   // The metadata endpoint, by literal.
                   RawToBridge("CONNECT 169.254.169.254:80 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n"));
  RunResult r = RunScript(script);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  std::vector<std::string> replies = absl::StrSplit(r.out, "<<end>>");
  ASSERT_GE(replies.size(), 4u) << r.out;
  const char* codes[] = {"egress-port-not-allowed", "egress-host-not-allowed",
                         "egress-address-refused", "egress-host-not-allowed"};
  for (int i = 0; i < 4; ++i) {
    EXPECT_THAT(replies[i], HasSubstr("HTTP/1.1 403 Forbidden")) << i << ": " << replies[i];
    EXPECT_THAT(replies[i], HasSubstr(codes[i])) << i << ": " << replies[i];
  }
  EXPECT_EQ(server_.connections(), 0);
  EXPECT_EQ(named_server_.connections(), 0);
  std::vector<nlohmann::json> lines = EgressLines();
  ASSERT_EQ(lines.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(lines[i]["egress"]["allowed"], false) << lines[i].dump();
    EXPECT_EQ(lines[i]["egress"]["reason_code"], codes[i]) << lines[i].dump();
  }
}

// Issue 26, item 7: the SSRF set, until now run on bubblewrap only, from
// inside a sandbox on each runtime. Every request names a loopback server by
// a spelling the allowlist does not list (another port, another form of the
// address, a name that resolves into loopback, the engine's gateway, a second
// request after an allowed one); none may reach an unlisted port, and each
// is refused with its code and audited as refused.
TEST_P(EgressTest, TheSsrfSetReachesNothingTheAllowlistDoesNotName) {
  const std::string listed = absl::StrCat(server_.port());
  const std::string other = absl::StrCat(named_server_.port());
  struct Attempt {
    std::string request;
    std::string code;
  };
  const std::vector<Attempt> attempts = {
      // Loose IPv4 spellings of 127.0.0.1 that inet_aton would accept.
      {absl::StrCat("CONNECT 127.1:", listed, " HTTP/1.1\\r\\n\\r\\n"), "egress-bad-host"},
      {absl::StrCat("CONNECT 2130706433:", listed, " HTTP/1.1\\r\\n\\r\\n"), "egress-bad-host"},
      {absl::StrCat("CONNECT 0x7f000001:", listed, " HTTP/1.1\\r\\n\\r\\n"), "egress-bad-host"},
      {absl::StrCat("CONNECT 0177.0.0.1:", listed, " HTTP/1.1\\r\\n\\r\\n"), "egress-bad-host"},
      // The any-address and IPv6 forms of loopback on the server only a name lists.
      {absl::StrCat("CONNECT 0.0.0.0:", other, " HTTP/1.1\\r\\n\\r\\n"), "egress-host-not-allowed"},
      {absl::StrCat("CONNECT [::ffff:127.0.0.1]:", other, " HTTP/1.1\\r\\n\\r\\n"),
       "egress-port-not-allowed"},
      {absl::StrCat("CONNECT [::1]:", other, " HTTP/1.1\\r\\n\\r\\n"), "egress-host-not-allowed"},
      // The listed name, spelled otherwise, still resolves into loopback.
      {absl::StrCat("CONNECT LOCALHOST:", other, " HTTP/1.1\\r\\n\\r\\n"),
       "egress-address-refused"},
      {absl::StrCat("CONNECT localhost.:", other, " HTTP/1.1\\r\\n\\r\\n"),
       "egress-address-refused"},
      // The target is the request line's, whatever the Host header or userinfo says.
      {absl::StrCat("GET http://127.0.0.1:", other, "/ HTTP/1.1\\r\\nHost: 127.0.0.1:", listed,
                    "\\r\\n\\r\\n"),
       "egress-port-not-allowed"},
      {absl::StrCat("GET http://127.0.0.1:", listed, "@127.0.0.1:", other,
                    "/ HTTP/1.1\\r\\n\\r\\n"),
       "proxy-bad-target"},
      // The engine's gateway and host names for the host.
      {absl::StrCat("CONNECT 172.17.0.1:", listed, " HTTP/1.1\\r\\n\\r\\n"),
       "egress-host-not-allowed"},
      {absl::StrCat("CONNECT host.docker.internal:", listed, " HTTP/1.1\\r\\n\\r\\n"),
       "egress-host-not-allowed"},
      {absl::StrCat("CONNECT host.containers.internal:", listed, " HTTP/1.1\\r\\n\\r\\n"),
       "egress-host-not-allowed"},
  };
  std::string script;
  for (const Attempt& attempt : attempts) script += RawToBridge(attempt.request);
  // An allowed request with a second one behind it on the same connection,
  // to the port only a name lists: the second goes nowhere.
  script += RawToBridge(absl::StrCat("GET http://127.0.0.1:", listed,
                                     "/first HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n"
                                     "GET http://127.0.0.1:",
                                     other, "/second HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n"));
  RunResult r = RunScript(script);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  std::vector<std::string> replies = absl::StrSplit(r.out, "<<end>>");
  ASSERT_GE(replies.size(), attempts.size() + 1) << r.out;
  for (size_t i = 0; i < attempts.size(); ++i) {
    EXPECT_THAT(replies[i], HasSubstr("HTTP/1.1 40")) << attempts[i].request << ": " << replies[i];
    EXPECT_THAT(replies[i], HasSubstr("X-Np-Exec-Egress: " + attempts[i].code))
        << attempts[i].request << ": " << replies[i];
  }
  EXPECT_THAT(replies[attempts.size()], HasSubstr("upstream saw GET /first HTTP/1.1"));
  EXPECT_THAT(replies[attempts.size()], Not(HasSubstr("/second")));
  // On the host: the server only a name lists saw nothing, the listed one
  // only the allowed request.
  EXPECT_EQ(named_server_.connections(), 0);
  EXPECT_EQ(server_.connections(), 1);
  EXPECT_THAT(server_.heads(), ::testing::ElementsAre(HasSubstr("GET /first HTTP/1.1")));
  std::vector<nlohmann::json> lines = EgressLines();
  ASSERT_EQ(lines.size(), attempts.size() + 1);
  for (size_t i = 0; i < attempts.size(); ++i) {
    EXPECT_EQ(lines[i]["egress"]["allowed"], false) << lines[i].dump();
    EXPECT_EQ(lines[i]["egress"]["reason_code"], attempts[i].code) << lines[i].dump();
  }
  EXPECT_EQ(lines.back()["egress"]["allowed"], true) << lines.back().dump();
}

// A refusal is visible live: one line on np-exec's stderr per refused
// host:port, before the program sees its connection end, naming the host,
// the key and the list to paste; a second attempt on the same host:port adds
// no line.
TEST_P(EgressTest, ARefusedHostIsOneLiveLineOnStderrNamingTheKeyToAddItTo) {
  const std::string script = absl::StrCat(
      RawToBridge("CONNECT unlisted.example:443 HTTP/1.1\\r\\nHost: unlisted.example\\r\\n\\r\\n"),
      "echo after-first-refusal >&2; ",
      RawToBridge("CONNECT unlisted.example:443 HTTP/1.1\\r\\nHost: unlisted.example\\r\\n\\r\\n"),
      RawToBridge(absl::StrCat("GET http://127.0.0.1:", other_port_,
                               "/ HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")),
      "echo done >&2");
  RunResult r = RunScript(script);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const std::string listed =
      absl::StrCat("[\"127.0.0.1:", server_.port(), "\",\"localhost:", named_server_.port(), "\"");
  const std::string host_line = absl::StrCat(
      "np-exec: egress refused unlisted.example:443 (egress-host-not-allowed): the host is not on "
      "isolation.container.allow_hosts; to allow it, add \"unlisted.example\" there "
      "(.nubos-pilot/config.json, then np-exec trust): \"allow_hosts\": ",
      listed, ",\"unlisted.example\"]\n");
  EXPECT_THAT(r.err, HasSubstr(host_line));
  EXPECT_LT(r.err.find(host_line), r.err.find("after-first-refusal")) << r.err;
  EXPECT_EQ(r.err.find("refused unlisted.example"), r.err.rfind("refused unlisted.example"))
      << r.err;
  EXPECT_THAT(r.err, HasSubstr(absl::StrCat("egress refused 127.0.0.1:", other_port_,
                                            " (egress-port-not-allowed): this port is not on "
                                            "isolation.container.allow_hosts; to allow it, add "
                                            "\"127.0.0.1:",
                                            other_port_, "\" there")));
  // Every attempt is still in the audit log.
  EXPECT_EQ(EgressLines().size(), 3u);
}

TEST_P(EgressTest, NoWayAroundTheProxyAndNoDns) {
  const std::string script = absl::StrCat(
      // Only loopback.
      "busybox cat /proc/net/dev | busybox tail -n +3 | busybox cut -d: -f1 | busybox tr -d ' '; ",
      // The host's server is not on the sandbox's loopback.
      "if echo x | busybox nc -w 2 127.0.0.1 ", server_.port(), "; then echo DIRECT-OK; fi; ",
      // Nor any address outside.
      "if echo x | busybox nc -w 2 192.0.2.1 80; then echo OUTSIDE-OK; fi; ",
      "if busybox nslookup example.com 8.8.8.8; then echo DNS-OK; fi; ",
      "if busybox wget -q -Y off -T 3 -O - http://example.com/; then echo NAME-OK; fi; "
      "echo done");
  RunResult r = RunScript(script);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_THAT(r.out, HasSubstr("lo\n"));
  EXPECT_THAT(r.out, Not(HasSubstr("eth")));
  EXPECT_THAT(r.out, Not(HasSubstr("DIRECT-OK")));
  EXPECT_THAT(r.out, Not(HasSubstr("OUTSIDE-OK")));
  EXPECT_THAT(r.out, Not(HasSubstr("DNS-OK")));
  EXPECT_THAT(r.out, Not(HasSubstr("NAME-OK")));
  EXPECT_THAT(r.out, HasSubstr("done"));
  EXPECT_EQ(server_.connections(), 0);
  EXPECT_TRUE(EgressLines().empty());
}

TEST_P(EgressTest, SocketDirectoryIsPrivateWhileRunningAndGoneAfterSigkill) {
  const std::string seconds = std::to_string(300 + std::random_device()() % 600);
  const std::string marker = std::string("sleep\0", 6) + seconds + std::string("\0", 1);
  pid_t pid = StartProcess({NpExecBin(), "--", "sleep", seconds}, Options(Env(), 0, project_),
                           dir_.Path("out"), dir_.Path("err"));
  ASSERT_GT(pid, 0);
  const bool running = WaitFor([&] { return !PidsWithCmdlinePrefix(marker).empty(); }, 60000);
  std::vector<std::string> entries = Entries(run_dir_);
  if (running) {
    ASSERT_EQ(entries.size(), 1u);
    const std::string dir = absl::StrCat(run_dir_, "/", entries[0]);
    struct stat st;
    ASSERT_EQ(lstat(dir.c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    EXPECT_EQ(st.st_uid, getuid());
    ASSERT_EQ(lstat((dir + "/egress.sock").c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
  }
  kill(pid, SIGKILL);
  EXPECT_EQ(WaitProcess(pid, 20000), 128 + SIGKILL);
  ASSERT_TRUE(running) << "the program never started: " << ReadFile(dir_.Path("err"));
  EXPECT_TRUE(WaitFor([&] { return Entries(run_dir_).empty(); }, 5000))
      << ::testing::PrintToString(Entries(run_dir_));
  // Leave nothing for the next test.
  const std::string prefix = ContainerPrefix(pid);
  if (runtime() != "bwrap") {
    WaitFor([&] { return LabelledContainers(runtime(), prefix).empty(); }, 15000);
    for (const std::string& c : LabelledContainers(runtime(), prefix)) {
      RunRuntime(runtime(), {"rm", "-f", c});
    }
  }
  for (pid_t p : PidsWithCmdline(marker)) kill(p, SIGKILL);
}

// The same, for what only a runtime with images has (bubblewrap runs none).
class EgressImageTest : public EgressTest {};

TEST_P(EgressImageTest, BridgeStartsInAnImageWithoutAShell) {
  // The image: one static busybox, named wget (busybox picks the applet by
  // its name), and nothing else: no shell, no libc, no /bin.
  const std::string root = dir_.MakeDir("scratch-root");
  RunResult copied = RunProcess({"/bin/cp", "/bin/busybox", root + "/wget"}, Options(BaseEnv()));
  ASSERT_EQ(copied.exit_code, 0) << copied.err;
  const std::string tar = dir_.Path("scratch.tar");
  RunResult tarred = RunProcess({"/bin/tar", "-C", root, "-cf", tar, "."}, Options(BaseEnv()));
  ASSERT_EQ(tarred.exit_code, 0) << tarred.err;
  const std::string image =
      absl::StrCat("np-egress-noshell:", getpid(), "-", std::random_device()() % 100000);
  RunResult imported =
      RunRuntime(runtime(), {"import", "-c", "ENV PATH=/", tar, image}, RuntimeEnv());
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  built_images_.push_back(image);
  Configure({absl::StrCat("127.0.0.1:", server_.port())}, image);
  RunResult r = RunProcess(
      {NpExecBin(), "--", "wget", "-q", "-O", "-",
       absl::StrCat("http://127.0.0.1:", server_.port(), "/from-an-image-without-a-shell")},
      Options(Env(), 120000, project_));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_THAT(r.out, HasSubstr("upstream saw GET /from-an-image-without-a-shell HTTP/1.1"));
  EXPECT_TRUE(Entries(run_dir_).empty());
}

TEST_P(EgressTest, ProgramKeepsItsExitStatusAndStdio) {
  RunResult r = RunProcess(
      {NpExecBin(), "--", "busybox", "sh", "-c", "busybox cat; echo to-stderr >&2; exit 7"},
      Options(Env(), 120000, project_, "from-stdin\n"));
  EXPECT_EQ(r.exit_code, 7) << r.err;
  EXPECT_EQ(r.out, "from-stdin\n");
  EXPECT_THAT(r.err, HasSubstr("to-stderr"));
  RunResult missing =
      RunProcess({NpExecBin(), "--", "no-such-program-anywhere"}, Options(Env(), 120000, project_));
  EXPECT_EQ(missing.exit_code, 127) << missing.err;
  EXPECT_TRUE(Entries(run_dir_).empty());
}

TEST_P(EgressImageTest, SocketDirectoryIsGoneWhenTheSandboxNeverComesUp) {
  Configure({absl::StrCat("127.0.0.1:", server_.port())}, "np-egress-no-such-image:absent");
  RunResult r = RunProcess({NpExecBin(), "--", "true"}, Options(Env(), 120000, project_));
  EXPECT_EQ(r.exit_code, 125) << r.err;
  EXPECT_THAT(r.err, HasSubstr("isolation-image-missing"));
  EXPECT_TRUE(Entries(run_dir_).empty()) << ::testing::PrintToString(Entries(run_dir_));
  EXPECT_EQ(server_.connections(), 0);
}

TEST_P(EgressTest, ATerminatingSignalReachesTheProgram) {
  const std::string seconds = std::to_string(300 + std::random_device()() % 600);
  const std::string marker = std::string("sleep\0", 6) + seconds + std::string("\0", 1);
  const std::string got = project_ + "/got-term";
  RunOptions options = Options(Env(), 0, project_);
  pid_t pid = StartProcess({NpExecBin(), "--", "busybox", "sh", "-c",
                            absl::StrCat("trap 'echo TERM > \"", got,
                                         "\"; exit 143' TERM; busybox sleep ", seconds, " & wait")},
                           options, dir_.Path("out"), dir_.Path("err"));
  ASSERT_GT(pid, 0);
  const bool running = WaitFor([&] { return !PidsWithCmdline(marker).empty(); }, 60000);
  if (running) usleep(300 * 1000);  // the trap is set before the sleep starts
  kill(pid, SIGTERM);
  EXPECT_EQ(WaitProcess(pid, 20000), 143) << ReadFile(dir_.Path("err"));
  ASSERT_TRUE(running) << ReadFile(dir_.Path("err"));
  EXPECT_EQ(ReadFile(got), "TERM\n");
  EXPECT_TRUE(WaitFor([&] { return Entries(run_dir_).empty(); }, 5000));
  for (pid_t p : PidsWithCmdline(marker)) kill(p, SIGKILL);
}

TEST_P(EgressTest, WrapRefusesAPlanNothingWouldServe) {
  RunResult wrap =
      RunProcess({NpExecBin(), "wrap", "--", "busybox", "true"}, Options(Env(), 60000, project_));
  EXPECT_EQ(wrap.exit_code, 1) << wrap.out;
  EXPECT_THAT(wrap.err, HasSubstr("isolation-allowlist-needs-np-exec"));
  EXPECT_THAT(wrap.out, Not(HasSubstr("\"wrapped\"")));
  EXPECT_TRUE(Entries(run_dir_).empty());
}

TEST_P(EgressTest, StatusReportsRestrictedWithTheList) {
  RunResult status = RunProcess({NpExecBin(), "status", "--json"}, Options(Env(), 60000, project_));
  ASSERT_EQ(status.exit_code, 0) << status.err;
  const nlohmann::json out = nlohmann::json::parse(status.out);
  EXPECT_EQ(out["description"]["network_restricted"], true);
  EXPECT_EQ(out["container"]["network"], "allowlist");
  EXPECT_EQ(out["container"]["allow_hosts"][0], absl::StrCat("127.0.0.1:", server_.port()));
  EXPECT_THAT(out["description"]["does_not_protect_against"][0].get<std::string>(),
              HasSubstr("exfiltration through an allowed host"));

  RunResult doctor = RunProcess({NpExecBin(), "doctor", "--json"}, Options(Env(), 60000, project_));
  const nlohmann::json report = nlohmann::json::parse(doctor.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << doctor.out << doctor.err;
  EXPECT_EQ(report["network_restricted"], true);
  EXPECT_EQ(report["allow_hosts"][0], absl::StrCat("127.0.0.1:", server_.port()));
  EXPECT_THAT(report["does_not_protect_against"][0].get<std::string>(),
              HasSubstr("exfiltration through an allowed host"));
}

TEST_P(EgressTest, DoctorDeepRunsTheSandboxWithoutAProxy) {
  RunResult doctor =
      RunProcess({NpExecBin(), "doctor", "--deep", "--json"}, Options(Env(), 120000, project_));
  const nlohmann::json report = nlohmann::json::parse(doctor.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << doctor.out << doctor.err;
  EXPECT_EQ(report["deep"]["ran"], true) << doctor.out;
  EXPECT_EQ(report["deep"]["exit_code"], 0) << doctor.out;
}

INSTANTIATE_TEST_SUITE_P(Runtimes, EgressTest, ::testing::Values("docker", "podman", "bwrap"),
                         RuntimeName);
INSTANTIATE_TEST_SUITE_P(Runtimes, EgressImageTest, ::testing::Values("docker", "podman"),
                         RuntimeName);

}  // namespace
}  // namespace np::testing
