// An engine on another host (core/plan.h CheckEngineLocality, core/mount_pins.h
// RemoteCheck): accepted only over ssh or verified TLS and only when the
// operator file says so; refused over plain tcp whatever it says; what cannot
// work there refused by name; and the entry point's check of the project's
// nonce, run here as it runs inside the container. The runtime is a fake
// that records its argv and environment.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "core/sha256.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/launcher/fakes.h"

namespace np::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kSsh[] = "ssh://builder@build-host";

class RemoteEngineTest : public ::testing::Test {
 protected:
  RemoteEngineTest() {
    lab_.Config(R"({"isolation":{"tier":"container"}})");
    lab_.FakeDocker();
  }

  void Operator(const std::string& container_json) {
    lab_.tmp().Write("scratch/xdg/nubos-pilot/config.json",
                     R"({"isolation":{"container":)" + container_json + "}}");
  }

  // An ssh engine's client dialing ssh itself, as the caller may choose
  // (NP_EXEC_ENGINE_TUNNEL=0): there is no engine host here for np-exec's
  // own connection to reach (the refusal without one is tested below).
  std::vector<std::string> SshEnv() const {
    std::vector<std::string> env = lab_.Env(kSsh);
    env.push_back("NP_EXEC_ENGINE_TUNNEL=0");
    return env;
  }

  RunResult Spawn(const std::vector<std::string>& env,
                  const std::vector<std::string>& program = {}) {
    std::vector<std::string> args = {"--"};
    if (program.empty()) {
      args.push_back(lab_.sentinel_program());
    } else {
      args.insert(args.end(), program.begin(), program.end());
    }
    return lab_.Run(args, env);
  }

  // The refusal: `code`, nothing ran (no sentinel, no client `run`), a
  // refused audit line.
  void ExpectRefused(const std::vector<std::string>& env, const std::string& code,
                     const std::string& detail = "") {
    RunResult r = Spawn(env);
    EXPECT_EQ(r.exit_code, 125) << r.err;
    EXPECT_EQ(ErrorCodeOf(r.err), code) << r.err;
    if (!detail.empty()) {
      EXPECT_THAT(r.err, HasSubstr(detail));
    }
    EXPECT_FALSE(FileExists(lab_.sentinel()));
    EXPECT_THAT(ReadFile(lab_.fakes() + "/docker.calls"), Not(HasSubstr("run ")));
    std::vector<json> lines = ReadJsonLines(lab_.audit_log());
    ASSERT_FALSE(lines.empty());
    EXPECT_EQ(lines.back()["decision"], "refused");
  }

  // The client's argv of the last run.
  std::vector<std::string> RunArgv() const {
    return ReadNulSeparated(lab_.fakes() + "/docker.argv");
  }

  // The project's files np-exec named as its check files.
  std::vector<std::string> NonceFiles() const {
    std::vector<std::string> found;
    for (const auto& entry : std::filesystem::directory_iterator(lab_.project())) {
      const std::string name = entry.path().filename().string();
      if (name.rfind(".np-exec-remote-check-", 0) == 0) found.push_back(name);
    }
    return found;
  }

  Lab lab_;
};

// Without the operator's word, an engine on another host stays refused and
// is asked nothing, even over ssh; a project file may not give that word,
// trusted or not.
TEST_F(RemoteEngineTest, NeedsTheOperatorsWord) {
  ExpectRefused(lab_.Env(kSsh), "isolation-engine-remote", "remote_engine");
  EXPECT_THAT(ReadFile(lab_.fakes() + "/docker.calls"), Not(HasSubstr("version")));
  lab_.Config(R"({"isolation":{"tier":"container","container":{"remote_engine":true}}})");
  ExpectRefused(lab_.Env(kSsh), "isolation-remote-engine-needs-operator");
  Operator(R"({"remote_engine":"yes"})");
  lab_.Config(R"({"isolation":{"tier":"container"}})");
  RunResult r = Spawn(lab_.Env(kSsh));
  EXPECT_EQ(ErrorCodeOf(r.err), "isolation-invalid-value") << r.err;
}

// Plain tcp to another host is root for whoever reaches the port: refused
// even when the operator accepts remote engines, and so is TLS the client
// would not verify (DOCKER_TLS alone) or verify with certificates a sandbox
// can write. Names that are not plain (userinfo, a percent) stay unvouched.
TEST_F(RemoteEngineTest, PlainTcpIsRefusedAsInsecure) {
  Operator(R"({"remote_engine":true})");
  for (const char* host :
       {"tcp://10.0.0.5:2375", "tcp://build-host:2376", "tcp://127.0.0.1.nip.io"}) {
    ExpectRefused(lab_.Env(host), "isolation-engine-insecure", host);
  }
  std::vector<std::string> env = lab_.Env("tcp://build-host:2376");
  SetEnv(env, "DOCKER_TLS", "1");
  ExpectRefused(env, "isolation-engine-insecure");
  SetEnv(env, "DOCKER_TLS_VERIFY", "1");
  SetEnv(env, "DOCKER_CERT_PATH", lab_.project() + "/certs");
  lab_.tmp().MakeDir("proj/certs");
  ExpectRefused(env, "isolation-engine-insecure");
  for (const char* host : {"tcp://127.0.0.1:1@evil:2375", "tcp://evil%2ehost:2375",
                           "ssh://-oProxyCommand=x@host", "ssh://host/../sock", "ssh://a@b?x"}) {
    ExpectRefused(lab_.Env(host), "isolation-engine-remote", host);
  }
  EXPECT_THAT(ReadFile(lab_.fakes() + "/docker.calls"), Not(HasSubstr("version")));
}

// Verified TLS with certificates outside any project is a remote engine the
// operator may accept: the client is pinned to it with its certificates.
TEST_F(RemoteEngineTest, VerifiedTlsIsAccepted) {
  Operator(R"({"remote_engine":true})");
  std::vector<std::string> env = lab_.Env("tcp://build-host:2376");
  const std::string certs = lab_.tmp().MakeDir("certs");
  SetEnv(env, "DOCKER_TLS_VERIFY", "1");
  SetEnv(env, "DOCKER_CERT_PATH", certs);
  RunResult r = Spawn(env, {"true"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string client_env = ReadFile(lab_.fakes() + "/docker.env");
  EXPECT_THAT(client_env, HasSubstr("DOCKER_HOST=tcp://build-host:2376"));
  EXPECT_THAT(client_env, HasSubstr("DOCKER_CERT_PATH=" + certs));
  EXPECT_THAT(client_env, HasSubstr("DOCKER_TLS_VERIFY=1"));
}

// On an accepted engine: the entry point proves the build and the project's
// nonce there; np-exec's own files of this host's state store are not bound;
// the audit line names the engine; the check file is gone afterwards.
TEST_F(RemoteEngineTest, AnAcceptedRunCarriesTheProjectCheck) {
  Operator(R"({"remote_engine":true})");
  RunResult r = Spawn(SshEnv(), {"true"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> argv = RunArgv();
  auto at = std::find(argv.begin(), argv.end(), "--project-nonce");
  ASSERT_NE(at, argv.end());
  ASSERT_LT(at + 3, argv.end());
  EXPECT_EQ(*(at + 1), lab_.project());
  EXPECT_EQ((at + 2)->rfind(".np-exec-remote-check-", 0), 0u) << *(at + 2);
  // Only the nonce's SHA-256 is in the argv, which anyone may read there.
  EXPECT_EQ((at + 3)->size(), 64u);
  EXPECT_EQ(at[3].find_first_not_of("0123456789abcdef"), std::string::npos) << at[3];
  EXPECT_EQ(*(at - 3), "mount-check");
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--expect-ino"), argv.end());
  EXPECT_EQ(std::find(argv.begin(), argv.end(), "--expect"), argv.end());
  for (const std::string& arg : argv) {
    EXPECT_THAT(arg, Not(HasSubstr("dst=/etc/passwd")));
  }
  EXPECT_THAT(ReadFile(lab_.fakes() + "/docker.env"),
              HasSubstr(std::string("DOCKER_HOST=") + kSsh));
  EXPECT_TRUE(NonceFiles().empty());
  std::vector<json> lines = ReadJsonLines(lab_.audit_log());
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[lines.size() - 2]["engine"], std::string("DOCKER_HOST (") + kSsh + ")");
  RunResult status = lab_.Run({"status", "--json"}, lab_.Env(kSsh));
  EXPECT_EQ(ParseJson(status.out)["engine"]["reach"], "ssh");
  EXPECT_EQ(ParseJson(status.out)["engine"]["remote_allowed"], true);
  RunResult probe = lab_.Run({"probe", "--json"}, lab_.Env(kSsh));
  EXPECT_EQ(probe.exit_code, 0) << probe.out << probe.err;
  RunResult doctor = lab_.Run({"doctor", "--json"}, lab_.Env(kSsh));
  EXPECT_EQ(ParseJson(doctor.out)["engine"]["remote"], std::string("DOCKER_HOST (") + kSsh + ")")
      << doctor.out << doctor.err;
  EXPECT_EQ(doctor.exit_code, 0) << doctor.out << doctor.err;
}

// A docker context on another host over tcp is TLS the client verifies when
// its TLS material holds a CA and it does not skip verification: accepted,
// and pinned as DOCKER_HOST with that material. Skipping verification is
// plain tcp.
TEST_F(RemoteEngineTest, ATlsContextIsPinnedWithItsCertificates) {
  Operator(R"({"remote_engine":true})");
  std::vector<std::string> env = lab_.Env();
  env.erase(std::remove_if(env.begin(), env.end(),
                           [](const std::string& e) { return e.rfind("DOCKER_HOST=", 0) == 0; }),
            env.end());
  const std::string config = lab_.tmp().MakeDir("docker-config");
  SetEnv(env, "DOCKER_CONFIG", config);
  const std::string hash = Sha256Hex("build");
  lab_.tmp().Write("docker-config/config.json", R"({"currentContext":"build"})");
  const std::string meta = "docker-config/contexts/meta/" + hash + "/meta.json";
  lab_.tmp().Write(meta, R"({"Endpoints":{"docker":{"Host":"tcp://build-host:2376"}}})");
  ExpectRefused(env, "isolation-engine-insecure", "docker context build");
  lab_.tmp().Write("docker-config/contexts/tls/" + hash + "/docker/ca.pem", "CA");
  RunResult r = Spawn(env, {"true"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string client_env = ReadFile(lab_.fakes() + "/docker.env");
  EXPECT_THAT(client_env, HasSubstr("DOCKER_HOST=tcp://build-host:2376"));
  EXPECT_THAT(client_env,
              HasSubstr("DOCKER_CERT_PATH=" + config + "/contexts/tls/" + hash + "/docker"));
  lab_.tmp().Write(
      meta, R"({"Endpoints":{"docker":{"Host":"tcp://build-host:2376","SkipTLSVerify":true}}})");
  std::filesystem::remove(lab_.fakes() + "/docker.calls");
  ExpectRefused(env, "isolation-engine-insecure", "docker context build");
}

// podman over ssh names its engine's socket in the URL's path: accepted, and
// the client pinned to exactly that URL; a path with ".." is not.
TEST_F(RemoteEngineTest, PodmanOverSshIsAccepted) {
  Operator(R"({"remote_engine":true})");
  lab_.Config(R"({"isolation":{"tier":"container","container":{"runtime":"podman"}}})");
  WriteFakeRuntime(lab_.fakes(), "podman");
  std::vector<std::string> env = lab_.Env();
  SetEnv(env, "NP_EXEC_ENGINE_TUNNEL", "0");
  SetEnv(env, "CONTAINER_HOST", "ssh://ci@build:2222/run/user/1000/podman/podman.sock");
  RunResult r = Spawn(env, {"true"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(ReadFile(lab_.fakes() + "/podman.env"),
              HasSubstr("CONTAINER_HOST=ssh://ci@build:2222/run/user/1000/podman/podman.sock"));
  SetEnv(env, "CONTAINER_HOST", "ssh://ci@build/run/../tmp/podman.sock");
  RunResult dotdot = Spawn(env, {"true"});
  EXPECT_EQ(ErrorCodeOf(dotdot.err), "isolation-engine-remote") << dotdot.err;
}

// What cannot work on another host is refused by name before anything runs.
TEST_F(RemoteEngineTest, WhatCannotWorkThereIsRefused) {
  Operator(R"({"remote_engine":true})");
  lab_.tmp().MakeDir("elsewhere");
  for (const std::string& container :
       {std::string(R"({"network":"allowlist","allow_hosts":["example.com"]})"),
        std::string(R"({"home":"persistent"})"),
        R"({"mounts":[{"source":")" + lab_.tmp().Path("elsewhere") + R"(","target":"/x"}]})"}) {
    Operator(R"({"remote_engine":true,)" + container.substr(1));
    ExpectRefused(SshEnv(), "isolation-engine-remote-unsupported", "nothing ran");
    EXPECT_TRUE(NonceFiles().empty());
  }
  Operator(R"({"remote_engine":true})");
  RunResult wrap = lab_.Run({"wrap", "--", "true"}, lab_.Env(kSsh));
  EXPECT_EQ(ErrorCodeOf(wrap.err), "isolation-engine-remote-unsupported") << wrap.err;
}

// The entry point's check, run here as it runs inside the container, with
// the build ID a real run handed it: a project folder without the nonce, with
// a link in its place, with other content, or a binary of another build,
// and the program does not run; with the nonce, it runs and the file is gone.
TEST_F(RemoteEngineTest, TheEntryPointProvesTheProject) {
  Operator(R"({"remote_engine":true})");
  ASSERT_EQ(Spawn(SshEnv(), {"true"}).exit_code, 0);
  const std::vector<std::string> argv = RunArgv();
  auto build = std::find(argv.begin(), argv.end(), "--self-build-id");
  ASSERT_NE(build, argv.end());
  const std::string build_id = *(build + 1);
  const std::string dir = lab_.tmp().MakeDir("engine-side");
  const std::string name = ".np-exec-remote-check-0011223344556677";
  const std::string nonce(48, 'a');
  auto check = [&](const std::string& id, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"mount-check", "--self-build-id", id, "--project-nonce", dir,
                                     name,          Sha256Hex(nonce)};
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--", lab_.sentinel_program()});
    return lab_.Run(args, lab_.Env());
  };
  auto expect_refused = [&](const RunResult& r, const std::string& code, const std::string& found) {
    EXPECT_EQ(r.exit_code, 125) << r.err;
    EXPECT_EQ(ErrorCodeOf(r.err), code) << r.err;
    EXPECT_THAT(r.err, HasSubstr(found));
    EXPECT_FALSE(FileExists(lab_.sentinel()));
  };
  expect_refused(check(build_id), "isolation-engine-project-not-shared", "no check file");
  // The digest itself as the file's content (what the argv shows) is not it.
  lab_.tmp().Write("engine-side/" + name, Sha256Hex(nonce));
  expect_refused(check(build_id), "isolation-engine-project-not-shared", "other content");
  ASSERT_EQ(unlink((dir + "/" + name).c_str()), 0);
  lab_.tmp().Write("nonce-elsewhere", nonce);
  ASSERT_EQ(symlink(lab_.tmp().Path("nonce-elsewhere").c_str(), (dir + "/" + name).c_str()), 0);
  expect_refused(check(build_id), "isolation-engine-project-not-shared", "a link");
  ASSERT_EQ(unlink((dir + "/" + name).c_str()), 0);
  lab_.tmp().Write("engine-side/" + name, std::string(48, 'b'));
  expect_refused(check(build_id), "isolation-engine-project-not-shared", "other content");
  lab_.tmp().Write("engine-side/" + name, nonce);
  expect_refused(check(std::string(40, '0')), "isolation-engine-np-exec-mismatch", "another build");
  struct stat st;
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  expect_refused(check(build_id, {"--expect-ino", dir, std::to_string(st.st_ino + 1)}),
                 "isolation-mount-source-unstable", dir);
  lab_.tmp().Write("engine-side/" + name, nonce);
  RunResult ok = check(build_id, {"--expect-ino", dir, std::to_string(st.st_ino)});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(FileExists(lab_.sentinel()));
  EXPECT_FALSE(FileExists(dir + "/" + name));
}

// A program that ran on the engine (the entry point consumed the check
// file) cannot have its run logged as refused by putting a file of that name
// back and exiting 125: np-exec judges by its own descriptor of the file it
// wrote, not by the name.
TEST_F(RemoteEngineTest, AProgramThatRanCannotPassForARefusal) {
  Operator(R"({"remote_engine":true})");
  const std::string fake = lab_.fakes() + "/docker";
  std::string script = ReadFile(fake);
  const std::string run = "  run) echo fake-run-output;";
  const size_t at = script.find(run);
  ASSERT_NE(at, std::string::npos) << script;
  script.insert(at + run.size(),
                " while [ $# -gt 0 ] && [ \"$1\" != --project-nonce ]; do shift; done;"
                " /bin/rm -f \"$2/$3\"; echo planted > \"$2/$3\"; exit 125;");
  lab_.tmp().Write("fakes/docker", script, 0755);
  RunResult r = Spawn(SshEnv(), {"true"});
  EXPECT_EQ(r.exit_code, 125) << r.err;
  EXPECT_NE(ErrorCodeOf(r.err), "isolation-engine-project-not-shared") << r.err;
  std::vector<json> lines = ReadJsonLines(lab_.audit_log());
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back().value("event", ""), "exit") << lines.back().dump();
  EXPECT_EQ(lines.back().value("exit_status", -1), 125) << lines.back().dump();
}

// Over ssh only through np-exec's own connection: when it cannot be made
// (here: no such host), the spawn is refused before anything runs, rather
// than left to a client that would dial ssh itself.
TEST_F(RemoteEngineTest, WithoutItsOwnConnectionAnSshEngineIsRefused) {
  Operator(R"({"remote_engine":true})");
  RunResult r = Spawn(lab_.Env(kSsh));
  EXPECT_EQ(r.exit_code, 125) << r.err;
  EXPECT_EQ(ErrorCodeOf(r.err), "isolation-engine-remote-unsupported") << r.err;
  EXPECT_THAT(r.err, HasSubstr("ssh connection"));
  EXPECT_FALSE(FileExists(lab_.sentinel()));
  if (lab_.Invoked("docker")) {
    EXPECT_THAT(ReadFile(lab_.fakes() + "/docker.calls"), Not(HasSubstr("run ")));
  }
}

}  // namespace
}  // namespace np::testing
