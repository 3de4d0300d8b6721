// The egress proxy's credential hosts against a loopback TLS server in this
// process that records what arrives: the key is added for its host alone,
// over TLS the proxy verified, and never appears in a record; every other
// host stays a plain tunnel.
#include "launcher/egress/credential_tunnel.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "launcher/egress/proxy.h"
#include "tests/egress/loopback.h"
#include "tests/egress/loopback_tls.h"
#include "tests/support/temp_dir.h"

namespace np::egress {
namespace {

using ::np::testing::ConnectUnixSocket;
using ::np::testing::LoopbackHttpServer;
using ::np::testing::LoopbackTlsServer;
using ::np::testing::ReadUntil;
using ::np::testing::SendText;
using ::np::testing::TlsClient;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kKey[] = "sk-ant-real-key-7f3a9c";
constexpr char kPlaceholder[] = "np-exec-credential-placeholder:ANTHROPIC_API_KEY";

class CredentialTunnelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_.MakeDir("egress");
    ASSERT_EQ(chmod(dir_.c_str(), 0700), 0);
    test_ca_ = temp_.path() + "/test-ca.pem";
    server_ = std::make_unique<LoopbackTlsServer>(test_ca_);
  }
  void TearDown() override {
    if (proxy_) proxy_->Stop();
    unsetenv("SSL_CERT_FILE");
  }

  // The proxy with one credential for localhost:PORT of the TLS server; the
  // host trusts `host_trust` (the test CA by default) as its system store.
  void StartProxy(const std::string& host_trust = "") {
    setenv("SSL_CERT_FILE", (host_trust.empty() ? test_ca_ : host_trust).c_str(), 1);
    const std::string port = absl::StrCat(server_->port());
    absl::StatusOr<Allowlist> allowlist =
        ParseAllowHosts({absl::StrCat("localhost:", port), absl::StrCat("127.0.0.1:", port),
                         absl::StrCat("127.0.0.1:", plain_.port())});
    ASSERT_TRUE(allowlist.ok()) << allowlist.status();
    Credential credential{"localhost", server_->port(), "ANTHROPIC_API_KEY", "x-api-key", "{}"};
    absl::StatusOr<std::shared_ptr<CredentialRoutes>> routes =
        MakeCredentialRoutes({{credential, kKey}});
    ASSERT_TRUE(routes.ok()) << routes.status();
    session_ca_pem_ = (*routes)->ca->CertificatePem();
    ProxyOptions options;
    options.socket_path = dir_ + "/proxy.sock";
    options.allowlist = *allowlist;
    options.credentials = *routes;
    options.resolver = [](const std::string& name) -> absl::StatusOr<std::vector<IpAddress>> {
      if (name == "localhost") return std::vector<IpAddress>{*ParseIpv4("127.0.0.1")};
      return MakeError(absl::StatusCode::kUnavailable, "egress-resolve-failed", "no such name");
    };
    options.on_record = [this](const EgressRecord& record) {
      std::lock_guard<std::mutex> lock(mutex_);
      records_.push_back(record);
    };
    absl::StatusOr<std::unique_ptr<EgressProxy>> proxy = EgressProxy::Start(std::move(options));
    ASSERT_TRUE(proxy.ok()) << proxy.status();
    proxy_ = *std::move(proxy);
  }

  // A CONNECT to `target`; returns the descriptor after the proxy's reply
  // head, which is in *reply.
  int Connect(const std::string& target, std::string* reply) {
    const int fd = ConnectUnixSocket(proxy_->socket_path());
    SendText(fd, absl::StrCat("CONNECT ", target, " HTTP/1.1\r\nHost: ", target, "\r\n\r\n"));
    *reply = ReadUntil(fd, "\r\n\r\n");
    return fd;
  }

  std::string LocalTarget() const { return absl::StrCat("localhost:", server_->port()); }

  static std::string Request(const std::string& host, const std::string& key) {
    return absl::StrCat("POST /v1/messages HTTP/1.1\r\nHost: ", host, "\r\nx-api-key: ", key,
                        "\r\nContent-Length: 2\r\n\r\n{}");
  }

  std::vector<EgressRecord> Records() {
    proxy_->Stop();
    std::lock_guard<std::mutex> lock(mutex_);
    return records_;
  }

  ::np::testing::TempDir temp_;
  std::string dir_;
  std::string test_ca_;
  std::string session_ca_pem_;
  std::unique_ptr<LoopbackTlsServer> server_;
  LoopbackHttpServer plain_;
  std::unique_ptr<EgressProxy> proxy_;
  std::mutex mutex_;
  std::vector<EgressRecord> records_;
};

TEST_F(CredentialTunnelTest, TheKeyArrivesInTheNamedHeaderOnEveryRequestOfTheConnection) {
  StartProxy();
  std::string reply;
  const int fd = Connect(LocalTarget(), &reply);
  ASSERT_THAT(reply, HasSubstr("200 Connection established"));
  {
    TlsClient client(fd, session_ca_pem_, "localhost");
    ASSERT_TRUE(client.ok()) << client.error();
    EXPECT_EQ(client.alpn(), "http/1.1");  // h2 offered, never chosen
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(client.Send(Request(LocalTarget(), kPlaceholder)));
      EXPECT_THAT(client.ReadResponse(), HasSubstr("upstream saw POST /v1/messages HTTP/1.1"));
    }
  }
  close(fd);
  std::vector<std::string> heads = server_->heads();
  ASSERT_EQ(heads.size(), 2u);
  for (const std::string& head : heads) {
    EXPECT_THAT(head, HasSubstr(absl::StrCat("x-api-key: ", kKey, "\r\n")));
    EXPECT_THAT(head, Not(HasSubstr(kPlaceholder)));
  }
  EXPECT_EQ(server_->bodies(), (std::vector<std::string>{"{}", "{}"}));
  std::vector<EgressRecord> records = Records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_TRUE(records[0].allowed);
  EXPECT_TRUE(records[0].tls_terminated);
  EXPECT_EQ(records[0].credential_header, "x-api-key");
  EXPECT_EQ(records[0].requests, 2);
  EXPECT_EQ(records[0].injected, 2);
  EXPECT_GT(records[0].bytes_down, 0u);
  const std::string audit = EgressRecordToJson(records[0]).dump();
  EXPECT_THAT(audit, HasSubstr("\"header\":\"x-api-key\""));
  EXPECT_THAT(audit, Not(HasSubstr(kKey)));
}

TEST_F(CredentialTunnelTest, ARequestWithoutThePlaceholderIsForwardedWithoutInjection) {
  StartProxy();
  std::string reply;
  const int fd = Connect(LocalTarget(), &reply);
  {
    TlsClient client(fd, session_ca_pem_, "localhost");
    ASSERT_TRUE(client.ok()) << client.error();
    ASSERT_TRUE(client.Send(Request(LocalTarget(), "sk-the-programs-own")));
    EXPECT_THAT(client.ReadResponse(), HasSubstr("200 OK"));
  }
  close(fd);
  ASSERT_EQ(server_->heads().size(), 1u);
  EXPECT_THAT(server_->heads()[0], HasSubstr("x-api-key: sk-the-programs-own\r\n"));
  EXPECT_THAT(server_->heads()[0], Not(HasSubstr(kKey)));
  std::vector<EgressRecord> records = Records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].requests, 1);
  EXPECT_EQ(records[0].injected, 0);
}

TEST_F(CredentialTunnelTest, AnotherHostStaysAPlainTunnelAndThePlaceholderIsNotReplaced) {
  StartProxy();
  // The same TLS server by its address: not the credential's host, so the
  // proxy neither terminates nor rewrites; the client sees the test CA's
  // certificate, which the session CA did not sign.
  std::string reply;
  int fd = Connect(absl::StrCat("127.0.0.1:", server_->port()), &reply);
  ASSERT_THAT(reply, HasSubstr("200 Connection established"));
  {
    TlsClient refused(fd, session_ca_pem_, "localhost");
    EXPECT_FALSE(refused.ok());
  }
  close(fd);
  // A plain HTTP server behind CONNECT gets the bytes exactly as sent.
  fd = Connect(absl::StrCat("127.0.0.1:", plain_.port()), &reply);
  ASSERT_THAT(reply, HasSubstr("200 Connection established"));
  SendText(fd, absl::StrCat("GET /other HTTP/1.1\r\nHost: localhost\r\nx-api-key: ", kPlaceholder,
                            "\r\nConnection: close\r\n\r\n"));
  EXPECT_THAT(ReadUntil(fd, ""), HasSubstr("upstream saw GET /other"));
  close(fd);
  ASSERT_EQ(plain_.heads().size(), 1u);
  EXPECT_THAT(plain_.heads()[0], HasSubstr(absl::StrCat("x-api-key: ", kPlaceholder)));
  for (const EgressRecord& record : Records()) {
    EXPECT_FALSE(record.tls_terminated);
    EXPECT_TRUE(record.credential_header.empty());
    EXPECT_EQ(EgressRecordToJson(record)["egress"].count("credential"), 0u);
  }
}

TEST_F(CredentialTunnelTest, AnUpstreamTheHostDoesNotTrustIsRefusedBeforeTheTunnelOpens) {
  // The host's trust store: a CA that did not sign the server's certificate.
  const std::string other_ca = temp_.path() + "/other-ca.pem";
  absl::StatusOr<std::unique_ptr<SessionCa>> other = SessionCa::Create({"localhost"});
  ASSERT_TRUE(other.ok());
  ::np::testing::WriteTextFile(other_ca, (*other)->CertificatePem());
  StartProxy(other_ca);
  std::string reply;
  const int fd = Connect(LocalTarget(), &reply);
  reply += ReadUntil(fd, "");
  close(fd);
  EXPECT_THAT(reply, HasSubstr("HTTP/1.1 502"));
  EXPECT_THAT(reply, HasSubstr("X-Np-Exec-Egress: egress-upstream-tls-failed"));
  EXPECT_TRUE(server_->heads().empty());
  std::vector<EgressRecord> records = Records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].reason_code, "egress-upstream-tls-failed");
  EXPECT_THAT(records[0].reason, HasSubstr("certificate"));
  EXPECT_FALSE(records[0].tls_terminated);
}

TEST_F(CredentialTunnelTest, AClientThatDoesNotTrustTheSessionCaGetsNothing) {
  StartProxy();
  std::string reply;
  const int fd = Connect(LocalTarget(), &reply);
  {
    absl::StatusOr<std::unique_ptr<SessionCa>> other = SessionCa::Create({"localhost"});
    ASSERT_TRUE(other.ok());
    TlsClient client(fd, (*other)->CertificatePem(), "localhost");
    EXPECT_FALSE(client.ok());
  }
  close(fd);
  EXPECT_TRUE(server_->heads().empty());
  std::vector<EgressRecord> records = Records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].reason_code, "egress-client-tls-failed");
}

TEST_F(CredentialTunnelTest, AnUnframableRequestIsAnsweredInsideTheTunnel) {
  StartProxy();
  std::string reply;
  const int fd = Connect(LocalTarget(), &reply);
  {
    TlsClient client(fd, session_ca_pem_, "localhost");
    ASSERT_TRUE(client.ok()) << client.error();
    ASSERT_TRUE(client.Send(absl::StrCat("POST / HTTP/1.1\r\nHost: ", LocalTarget(),
                                         "\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n")));
    EXPECT_THAT(client.ReadResponse(), HasSubstr("egress-credential-bad-request"));
  }
  close(fd);
  EXPECT_TRUE(server_->heads().empty());
  EXPECT_EQ(Records()[0].reason_code, "egress-credential-bad-request");
}

}  // namespace
}  // namespace np::egress
