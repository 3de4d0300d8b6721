// isolation.container.credentials end to end, on docker, podman and
// bubblewrap: the key stays in np-exec's proxy on the host. Inside, the
// variable holds its placeholder; node (the image's, or the host's on
// bubblewrap) sends it through the bridge to the credential host, a loopback
// TLS server in this process with a test CA the host trusts through
// SSL_CERT_FILE, which records the real key in x-api-key; the same
// placeholder sent to another allowed host (a plain tunnel) arrives
// untouched. The program also writes out every process's environment and
// argv it can read and np-exec's files under /run/np-exec into the project,
// and the host checks that the key is in none of them, nor anywhere in the
// project or the audit log.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"
#include "tests/egress/loopback.h"
#include "tests/egress/loopback_tls.h"

namespace np::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kKey[] = "sk-e2e-real-key-2b7d41c9e0";
constexpr char kPlaceholder[] = "np-exec-credential-placeholder:NP_TEST_API_KEY";

// What runs inside: the dump, then one request to each host.
constexpr char kClient[] = R"JS(
const fs = require('fs'), http = require('http'), tls = require('tls');
const [credentialTarget, otherTarget] = process.argv.slice(2);
const key = process.env.NP_TEST_API_KEY;
let dump = '';
for (const pid of fs.readdirSync('/proc').filter((p) => /^[0-9]+$/.test(p))) {
  for (const what of ['environ', 'cmdline']) {
    try { dump += fs.readFileSync(`/proc/${pid}/${what}`, 'latin1') + '\n'; } catch (e) {}
  }
}
for (const name of fs.readdirSync('/run/np-exec')) {
  if (name === 'np-exec' || name === 'egress.sock') continue;
  dump += fs.readFileSync(`/run/np-exec/${name}`, 'latin1');
}
fs.writeFileSync('inside-dump.txt', dump);
console.log(`env: ${key}`);
console.log(`ca: ${process.env.NODE_EXTRA_CA_CERTS} ${process.env.SSL_CERT_FILE}`);
function tunnel(target) {
  return new Promise((resolve, reject) => {
    const req = http.request({host: '127.0.0.1', port: 3128, method: 'CONNECT', path: target});
    req.on('connect', (res, socket) => res.statusCode === 200 ? resolve(socket)
                                          : reject(new Error(`CONNECT ${res.statusCode}`)));
    req.on('error', reject);
    req.end();
  });
}
function exchange(socket, request) {
  return new Promise((resolve, reject) => {
    let got = '';
    socket.on('data', (d) => { got += d; if (got.includes('upstream saw')) resolve(got); });
    socket.on('error', reject);
    socket.on('end', () => resolve(got));
    socket.write(request);
  });
}
(async () => {
  const host = credentialTarget.split(':')[0];
  const secure = tls.connect({socket: await tunnel(credentialTarget), servername: host});
  await new Promise((resolve, reject) => { secure.on('secureConnect', resolve); secure.on('error', reject); });
  console.log(await exchange(secure, `POST /v1/messages HTTP/1.1\r\nHost: ${credentialTarget}\r\n` +
      `x-api-key: ${key}\r\nContent-Length: 2\r\n\r\n{}`));
  secure.end();
  const plain = await tunnel(otherTarget);
  console.log(await exchange(plain, `GET /other HTTP/1.1\r\nHost: ${otherTarget}\r\n` +
      `x-api-key: ${key}\r\nConnection: close\r\n\r\n`));
  plain.end();
})().catch((e) => { console.log(`failed: ${e.message}`); process.exit(3); });
)JS";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every regular file under `dir`, with its path, whose content holds `text`.
void FilesHolding(const std::string& dir, const std::string& text, std::vector<std::string>* out) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    const std::string path = absl::StrCat(dir, "/", name);
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) FilesHolding(path, text, out);
    if (S_ISREG(st.st_mode) && ReadAll(path).find(text) != std::string::npos) out->push_back(path);
  }
  closedir(d);
}

class CredentialsTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    NP_REQUIRE_RUNTIME(GetParam());
    project_ = dir_.MakeDir("project");
    run_dir_ = dir_.MakeDir("run");
    chmod(run_dir_.c_str(), 0700);
    test_ca_ = dir_.path() + "/test-ca.pem";
    server_ = std::make_unique<LoopbackTlsServer>(test_ca_);
    const std::string port = absl::StrCat(server_->port());
    nlohmann::json credential = {{"host", absl::StrCat("localhost:", port)},
                                 {"env", "NP_TEST_API_KEY"},
                                 {"header", "x-api-key"}};
    MakeProject(project_,
                ContainerConfig(
                    GetParam(), "np-node:local",
                    {{"network", "allowlist"},
                     {"allow_hosts",
                      {absl::StrCat("localhost:", port), absl::StrCat("127.0.0.1:", port),
                       absl::StrCat("[::1]:", port), absl::StrCat("127.0.0.1:", other_.port())}},
                     {"credentials", {credential}}}));
    WriteTextFile(project_ + "/client.js", kClient);
  }

  TempDir dir_;
  std::string project_;
  std::string run_dir_;
  std::string test_ca_;
  std::unique_ptr<LoopbackTlsServer> server_;
  LoopbackHttpServer other_;
};

TEST_P(CredentialsTest, TheKeyReachesItsHostFromTheProxyAndNeverTheSandbox) {
  const std::vector<std::string> env = RuntimeEnv({absl::StrCat("XDG_RUNTIME_DIR=", run_dir_),
                                                   absl::StrCat("NP_TEST_API_KEY=", kKey),
                                                   absl::StrCat("SSL_CERT_FILE=", test_ca_)});
  RunResult r = RunProcess(
      {NpExecBin(), "--", "node", "client.js", absl::StrCat("localhost:", server_->port()),
       absl::StrCat("127.0.0.1:", other_.port())},
      Options(env, 180000, project_));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_THAT(r.out, HasSubstr(absl::StrCat("env: ", kPlaceholder)));
  EXPECT_THAT(r.out, HasSubstr("ca: /run/np-exec/session-ca.pem /run/np-exec/ca-bundle.pem"));
  EXPECT_THAT(r.out, HasSubstr("upstream saw POST /v1/messages HTTP/1.1"));
  EXPECT_THAT(r.out, HasSubstr("upstream saw GET /other HTTP/1.1"));
  EXPECT_THAT(r.out + r.err, Not(HasSubstr(kKey)));

  // The credential host got the key in the named header; the other host the
  // placeholder as sent.
  ASSERT_EQ(server_->heads().size(), 1u);
  EXPECT_THAT(server_->heads()[0], HasSubstr(absl::StrCat("x-api-key: ", kKey, "\r\n")));
  ASSERT_EQ(other_.heads().size(), 1u);
  EXPECT_THAT(other_.heads()[0], HasSubstr(absl::StrCat("x-api-key: ", kPlaceholder, "\r\n")));

  // Nothing the sandbox could read held the key: the environments and argv
  // of its processes, np-exec's files under /run/np-exec, the project.
  const std::string dump = ReadAll(project_ + "/inside-dump.txt");
  EXPECT_THAT(dump, HasSubstr(kPlaceholder));
  EXPECT_THAT(dump, HasSubstr("BEGIN CERTIFICATE"));
  EXPECT_THAT(dump, Not(HasSubstr("PRIVATE KEY")));
  std::vector<std::string> holding;
  FilesHolding(project_, kKey, &holding);
  EXPECT_TRUE(holding.empty()) << ::testing::PrintToString(holding);

  // The audit names the host and the header, never the key.
  int bad = 0;
  std::vector<nlohmann::json> credential_lines;
  for (const nlohmann::json& line : ReadAuditLog(project_, &bad)) {
    EXPECT_THAT(line.dump(), Not(HasSubstr(kKey)));
    if (line.value("event", "") == "egress" && line["egress"].contains("credential")) {
      credential_lines.push_back(line);
    }
  }
  EXPECT_EQ(bad, 0);
  ASSERT_EQ(credential_lines.size(), 1u);
  const nlohmann::json& egress = credential_lines[0]["egress"];
  EXPECT_EQ(egress["host"], "localhost");
  EXPECT_EQ(egress["credential"]["header"], "x-api-key");
  EXPECT_EQ(egress["credential"]["injected"], 1);
  EXPECT_EQ(egress["credential"]["tls_terminated"], true);
}

TEST_P(CredentialsTest, AnUnsetKeyIsRefusedBeforeAnythingRuns) {
  RunResult r = RunProcess(
      {NpExecBin(), "--", "node", "-e", "0"},
      Options(RuntimeEnv({absl::StrCat("XDG_RUNTIME_DIR=", run_dir_)}), 120000, project_));
  EXPECT_EQ(r.exit_code, 125) << r.err;
  EXPECT_THAT(r.err, HasSubstr("egress-credential-unset"));
  EXPECT_EQ(server_->connections(), 0);
}

INSTANTIATE_TEST_SUITE_P(Runtimes, CredentialsTest, ::testing::Values("docker", "podman", "bwrap"),
                         RuntimeName);

}  // namespace
}  // namespace np::testing
