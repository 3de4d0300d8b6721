// The egress proxy against a loopback HTTP server in this process: no
// traffic leaves the machine. Names "resolve" through an injected resolver.
#include "launcher/egress/proxy.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "launcher/egress/relay.h"
#include "tests/egress/loopback.h"
#include "tests/support/temp_dir.h"

namespace np::egress {
namespace {

using ::np::testing::ConnectUnixSocket;
using ::np::testing::ExchangeUnix;
using ::np::testing::LoopbackHttpServer;
using ::np::testing::ReadUntil;
using ::np::testing::SendText;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

IpAddress Ip(const char* text) {
  std::optional<IpAddress> address = ParseIpv4(text);
  if (!address.has_value()) address = ParseIpv6(text);
  return address.value_or(IpAddress{});
}

class ProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_.MakeDir("egress");
    ASSERT_EQ(chmod(dir_.c_str(), 0700), 0);
    socket_path_ = dir_ + "/proxy.sock";
  }

  // The proxy's threads call back into records_: stop them before the
  // members they use are destroyed.
  void TearDown() override {
    if (proxy_) proxy_->Stop();
  }

  // Starts the proxy on `hosts` (an allow_hosts JSON array); names resolve
  // through `names` (name -> addresses) and nothing else resolves.
  void StartProxy(const nlohmann::json& hosts,
                  std::map<std::string, std::vector<IpAddress>> names = {},
                  int max_connections = 128, int head_timeout_ms = 30000) {
    absl::StatusOr<Allowlist> allowlist = ParseAllowHosts(hosts);
    ASSERT_TRUE(allowlist.ok()) << allowlist.status();
    ProxyOptions options;
    options.socket_path = socket_path_;
    options.allowlist = *allowlist;
    options.max_connections = max_connections;
    options.head_timeout_ms = head_timeout_ms;
    options.resolver = [this,
                        names](const std::string& name) -> absl::StatusOr<std::vector<IpAddress>> {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        resolved_.push_back(name);
      }
      auto it = names.find(name);
      if (it == names.end()) {
        return MakeError(absl::StatusCode::kUnavailable, "egress-resolve-failed", "no such name");
      }
      return it->second;
    };
    options.on_record = [this](const EgressRecord& record) {
      std::lock_guard<std::mutex> lock(mutex_);
      records_.push_back(record);
    };
    absl::StatusOr<std::unique_ptr<EgressProxy>> proxy = EgressProxy::Start(std::move(options));
    ASSERT_TRUE(proxy.ok()) << proxy.status();
    proxy_ = *std::move(proxy);
  }

  std::vector<EgressRecord> Records() {
    std::lock_guard<std::mutex> lock(mutex_);
    return records_;
  }

  // Waits until `n` records arrived (a record follows the connection's close).
  std::vector<EgressRecord> WaitForRecords(size_t n) {
    for (int i = 0; i < 500 && Records().size() < n; ++i) usleep(10000);
    return Records();
  }

  std::string Target() const { return "127.0.0.1:" + std::to_string(server_.port()); }

  np::testing::TempDir temp_;
  std::string dir_;
  std::string socket_path_;
  LoopbackHttpServer server_;
  std::unique_ptr<EgressProxy> proxy_;
  std::mutex mutex_;
  std::vector<EgressRecord> records_;
  std::vector<std::string> resolved_;
};

TEST_F(ProxyTest, ConnectToAnAllowedLiteralTunnelsToTheServer) {
  StartProxy({Target()});
  int fd = ConnectUnixSocket(socket_path_);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(SendText(fd, "CONNECT " + Target() + " HTTP/1.1\r\nHost: " + Target() + "\r\n\r\n"));
  const std::string established = "HTTP/1.1 200 Connection established\r\n\r\n";
  EXPECT_EQ(ReadUntil(fd, "\r\n\r\n"), established);
  const std::string request = "GET /through-the-tunnel HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_TRUE(SendText(fd, request));
  shutdown(fd, SHUT_WR);  // half-close: the answer must still come back
  const std::string response = ReadUntil(fd, "");
  close(fd);
  EXPECT_THAT(response, StartsWith("HTTP/1.1 200 OK"));
  EXPECT_THAT(response, HasSubstr("upstream saw GET /through-the-tunnel HTTP/1.1"));

  std::vector<EgressRecord> records = WaitForRecords(1);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].method, "CONNECT");
  EXPECT_EQ(records[0].host, "127.0.0.1");
  EXPECT_EQ(records[0].port, server_.port());
  EXPECT_TRUE(records[0].allowed);
  EXPECT_EQ(records[0].reason_code, "");
  EXPECT_EQ(records[0].address, "127.0.0.1");
  EXPECT_EQ(records[0].bytes_up, request.size());
  EXPECT_EQ(records[0].bytes_down, response.size());
  EXPECT_GE(records[0].duration_ms, 0);
  EXPECT_TRUE(resolved_.empty()) << "a literal is never resolved";
}

TEST_F(ProxyTest, PlainHttpToAnAllowedLiteralIsForwardedInOriginForm) {
  StartProxy({Target()});
  const std::string response = ExchangeUnix(
      socket_path_, "GET http://" + Target() + "/plain?x=1 HTTP/1.1\r\nHost: evil.example\r\n" +
                        "Proxy-Authorization: Basic c2VjcmV0\r\nProxy-Connection: keep-alive\r\n" +
                        "Accept: */*\r\n\r\n");
  EXPECT_THAT(response, StartsWith("HTTP/1.1 200 OK"));
  EXPECT_THAT(response, HasSubstr("upstream saw GET /plain?x=1 HTTP/1.1"));
  std::vector<std::string> heads = server_.heads();
  ASSERT_EQ(heads.size(), 1u);
  EXPECT_EQ(heads[0], "GET /plain?x=1 HTTP/1.1\r\nHost: " + Target() +
                          "\r\nAccept: */*\r\nConnection: close\r\n\r\n");
  std::vector<EgressRecord> records = WaitForRecords(1);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].method, "GET");
  EXPECT_TRUE(records[0].allowed);
  EXPECT_EQ(records[0].bytes_up, heads[0].size());
  EXPECT_EQ(records[0].bytes_down, response.size());
}

TEST_F(ProxyTest, BytesSentWithTheHeadAreDeliveredNotDropped) {
  StartProxy({Target()});
  // A client may send its first tunnel bytes (a TLS ClientHello) or a body
  // in the same segment as the head.
  const std::string inner = "GET /early HTTP/1.1\r\n\r\n";
  std::string response =
      ExchangeUnix(socket_path_, "CONNECT " + Target() + " HTTP/1.1\r\n\r\n" + inner);
  EXPECT_THAT(response, HasSubstr("upstream saw GET /early HTTP/1.1"));
  response = ExchangeUnix(
      socket_path_, "POST http://" + Target() + "/body HTTP/1.1\r\nContent-Length: 4\r\n\r\nabcd");
  EXPECT_THAT(response, HasSubstr("upstream saw POST /body HTTP/1.1"));
  std::vector<EgressRecord> records = WaitForRecords(2);
  ASSERT_EQ(records.size(), 2u);
  // The tunnel's record may follow the POST's: its close travels both ways.
  if (records[0].method != "CONNECT") std::swap(records[0], records[1]);
  EXPECT_EQ(records[0].bytes_up, inner.size());
  EXPECT_EQ(records[1].bytes_up,
            std::string("POST /body HTTP/1.1\r\nHost: " + Target() +
                        "\r\nContent-Length: 4\r\nConnection: close\r\n\r\nabcd")
                .size());
}

TEST_F(ProxyTest, APipelinedSecondRequestNeverReachesAnotherHost) {
  // The second request names a host that is not listed; it may only ever
  // travel, as bytes, to the host the first one was checked for.
  StartProxy({Target(), "other.test"}, {{"other.test", {Ip("93.184.216.34")}}});
  const std::string response =
      ExchangeUnix(socket_path_, "GET http://" + Target() + "/first HTTP/1.1\r\n\r\n" +
                                     "GET http://other.test/second HTTP/1.1\r\n\r\n");
  EXPECT_THAT(response, HasSubstr("upstream saw GET /first HTTP/1.1"));
  EXPECT_EQ(server_.connections(), 1);
  EXPECT_TRUE(resolved_.empty()) << "the second request was never parsed as one";
  EXPECT_EQ(WaitForRecords(1).size(), 1u);
}

TEST_F(ProxyTest, AnUnlistedPortIsRefusedWith403AndTheReason) {
  StartProxy({Target()});
  const std::string other =
      "127.0.0.1:" + std::to_string(server_.port() == 65535 ? 1 : server_.port() + 1);
  for (const std::string& request :
       {"CONNECT " + other + " HTTP/1.1\r\n\r\n", "GET http://" + other + "/ HTTP/1.1\r\n\r\n"}) {
    const std::string response = ExchangeUnix(socket_path_, request);
    EXPECT_THAT(response, StartsWith("HTTP/1.1 403 Forbidden\r\n"));
    EXPECT_THAT(response, HasSubstr("X-Np-Exec-Egress: egress-port-not-allowed\r\n"));
    const std::string body = response.substr(response.find("\r\n\r\n") + 4);
    EXPECT_THAT(body, StartsWith("np-exec egress proxy: "));
    EXPECT_THAT(body, HasSubstr("(egress-port-not-allowed)\n"));
    EXPECT_EQ(body.find('\n'), body.size() - 1) << "one line";
  }
  EXPECT_EQ(server_.connections(), 0);
  std::vector<EgressRecord> records = WaitForRecords(2);
  ASSERT_EQ(records.size(), 2u);
  for (const EgressRecord& record : records) {
    EXPECT_FALSE(record.allowed);
    EXPECT_EQ(record.reason_code, "egress-port-not-allowed");
    EXPECT_EQ(record.bytes_up, 0u);
    EXPECT_EQ(record.address, "");
  }
}

TEST_F(ProxyTest, AnUnlistedHostIsRefusedWith403BeforeAnyResolution) {
  StartProxy({Target(), "*.allowed.test"});
  struct Case {
    std::string request;
    const char* code;
  } cases[] = {
      {"CONNECT example.com:443 HTTP/1.1\r\n\r\n", "egress-host-not-allowed"},
      {"CONNECT evil-allowed.test:443 HTTP/1.1\r\n\r\n", "egress-host-not-allowed"},
      {"CONNECT allowed.test:443 HTTP/1.1\r\n\r\n", "egress-host-not-allowed"},
      {"CONNECT 127.0.0.2:" + std::to_string(server_.port()) + " HTTP/1.1\r\n\r\n",
       "egress-host-not-allowed"},
      {"CONNECT 2130706433:" + std::to_string(server_.port()) + " HTTP/1.1\r\n\r\n",
       "egress-bad-host"},
      {"GET http://0177.0.0.1:" + std::to_string(server_.port()) + "/ HTTP/1.1\r\n\r\n",
       "egress-bad-host"},
      {"GET http://localhost:" + std::to_string(server_.port()) + "/ HTTP/1.1\r\n\r\n",
       "egress-host-not-allowed"},
  };
  for (const Case& c : cases) {
    const std::string response = ExchangeUnix(socket_path_, c.request);
    EXPECT_THAT(response, StartsWith("HTTP/1.1 403 Forbidden\r\n")) << c.request;
    EXPECT_THAT(response, HasSubstr(std::string("(") + c.code + ")\n")) << c.request;
  }
  EXPECT_TRUE(resolved_.empty());
  EXPECT_EQ(server_.connections(), 0);
}

TEST_F(ProxyTest, ANameResolvingToLoopbackIsRefusedUnlessTheLiteralIsListed) {
  const std::string port = std::to_string(server_.port());
  const std::string name = "svc.test:" + port;
  {
    StartProxy({name}, {{"svc.test", {Ip("127.0.0.1")}}});
    for (const std::string& request :
         {"CONNECT " + name + " HTTP/1.1\r\n\r\n", "GET http://" + name + "/ HTTP/1.1\r\n\r\n"}) {
      const std::string response = ExchangeUnix(socket_path_, request);
      EXPECT_THAT(response, StartsWith("HTTP/1.1 403 Forbidden\r\n"));
      EXPECT_THAT(response, HasSubstr("(egress-address-refused)\n"));
      EXPECT_THAT(response, HasSubstr("loopback"));
    }
    EXPECT_EQ(server_.connections(), 0);
    proxy_->Stop();
  }
  {
    // Rebinding: one public address does not excuse a loopback one.
    StartProxy({name}, {{"svc.test", {Ip("93.184.216.34"), Ip("::ffff:127.0.0.1")}}});
    EXPECT_THAT(ExchangeUnix(socket_path_, "CONNECT " + name + " HTTP/1.1\r\n\r\n"),
                HasSubstr("(egress-address-refused)\n"));
    proxy_->Stop();
  }
  EXPECT_EQ(server_.connections(), 0);
  {
    StartProxy({name, Target()}, {{"svc.test", {Ip("127.0.0.1")}}});
    const std::string response =
        ExchangeUnix(socket_path_, "GET http://" + name + "/named HTTP/1.1\r\n\r\n");
    EXPECT_THAT(response, StartsWith("HTTP/1.1 200 OK"));
    EXPECT_THAT(response, HasSubstr("upstream saw GET /named HTTP/1.1"));
    ASSERT_EQ(server_.heads().size(), 1u);
    EXPECT_THAT(server_.heads()[0], HasSubstr("\r\nHost: " + name + "\r\n"));
  }
  std::vector<EgressRecord> records = WaitForRecords(4);
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[0].reason_code, "egress-address-refused");
  EXPECT_FALSE(records[0].allowed);
  EXPECT_EQ(records[3].reason_code, "");
  EXPECT_EQ(records[3].host, "svc.test");
  EXPECT_EQ(records[3].address, "127.0.0.1");
}

TEST_F(ProxyTest, ResolveAndConnectFailuresAre502) {
  const uint16_t closed = np::testing::UnusedPort();
  StartProxy({"nowhere.test", "127.0.0.1:" + std::to_string(closed), "empty.test"},
             {{"empty.test", {}}});
  struct Case {
    std::string request;
    const char* code;
  } cases[] = {
      {"CONNECT nowhere.test:443 HTTP/1.1\r\n\r\n", "egress-resolve-failed"},
      {"CONNECT empty.test:443 HTTP/1.1\r\n\r\n", "egress-no-address"},
      {"CONNECT 127.0.0.1:" + std::to_string(closed) + " HTTP/1.1\r\n\r\n",
       "egress-connect-failed"},
  };
  for (const Case& c : cases) {
    const std::string response = ExchangeUnix(socket_path_, c.request);
    EXPECT_THAT(response, StartsWith("HTTP/1.1 502 Bad Gateway\r\n")) << c.request;
    EXPECT_THAT(response, HasSubstr(std::string("(") + c.code + ")\n")) << c.request;
  }
  std::vector<EgressRecord> records = WaitForRecords(3);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_FALSE(records[0].allowed);
  EXPECT_TRUE(records[2].allowed) << "allowed, but nothing answered";
  EXPECT_EQ(records[2].reason_code, "egress-connect-failed");
}

TEST_F(ProxyTest, MalformedRequestsAre400) {
  StartProxy({Target()});
  struct Case {
    std::string request;
    const char* code;
  } cases[] = {
      {"GET /origin-form HTTP/1.1\r\nHost: " + Target() + "\r\n\r\n", "proxy-bad-target"},
      {"GET https://" + Target() + "/ HTTP/1.1\r\n\r\n", "proxy-unsupported-scheme"},
      {"GET http://" + Target() + "@evil.test/ HTTP/1.1\r\n\r\n", "proxy-bad-target"},
      {"CONNECT " + Target() + " HTTP/1.1\nX: y\r\n\r\n", "proxy-bad-request-line"},
      {"GET http://" + Target() + "/ HTTP/1.1\r\nX: " + std::string(40000, 'a') + "\r\n\r\n",
       "proxy-head-too-large"},
  };
  for (const Case& c : cases) {
    const std::string response = ExchangeUnix(socket_path_, c.request);
    EXPECT_THAT(response, StartsWith("HTTP/1.1 400 Bad Request\r\n")) << c.code;
    EXPECT_THAT(response, HasSubstr(std::string("(") + c.code + ")\n")) << c.code;
  }
  EXPECT_EQ(server_.connections(), 0);
}

TEST_F(ProxyTest, ASlowHeadTimesOutWith408) {
  StartProxy({Target()}, {}, 128, /*head_timeout_ms=*/200);
  int fd = ConnectUnixSocket(socket_path_);
  ASSERT_TRUE(SendText(fd, "CONNECT 127.0.0.1:1 HTTP/1.1\r\n"));  // never finished
  const std::string response = ReadUntil(fd, "");
  close(fd);
  EXPECT_THAT(response, StartsWith("HTTP/1.1 408 Request Timeout\r\n"));
  EXPECT_THAT(response, HasSubstr("(egress-head-timeout)\n"));
}

TEST_F(ProxyTest, ServesManyConnectionsAtOnce) {
  StartProxy({Target()});
  constexpr int kClients = 24;
  std::vector<int> fds;
  // All open at the same time before any is answered.
  for (int i = 0; i < kClients; ++i) {
    int fd = ConnectUnixSocket(socket_path_);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(SendText(fd, "CONNECT " + Target() + " HTTP/1.1\r\n\r\n"));
    fds.push_back(fd);
  }
  for (int i = 0; i < kClients; ++i) {
    EXPECT_THAT(ReadUntil(fds[i], "\r\n\r\n"), StartsWith("HTTP/1.1 200 "));
    SendText(fds[i], "GET /client-" + std::to_string(i) + " HTTP/1.1\r\n\r\n");
  }
  for (int i = 0; i < kClients; ++i) {
    EXPECT_THAT(ReadUntil(fds[i], ""), HasSubstr("GET /client-" + std::to_string(i) + " "));
    close(fds[i]);
  }
  EXPECT_EQ(WaitForRecords(kClients).size(), static_cast<size_t>(kClients));
}

TEST_F(ProxyTest, BeyondTheConnectionLimitIs503) {
  StartProxy({Target()}, {}, /*max_connections=*/1);
  int held = ConnectUnixSocket(socket_path_);
  SendText(held, "CONNECT " + Target() + " HTTP/1.1\r\n\r\n");
  EXPECT_THAT(ReadUntil(held, "\r\n\r\n"), StartsWith("HTTP/1.1 200 "));
  const std::string response =
      ExchangeUnix(socket_path_, "CONNECT " + Target() + " HTTP/1.1\r\n\r\n");
  EXPECT_THAT(response, StartsWith("HTTP/1.1 503 Service Unavailable\r\n"));
  EXPECT_THAT(response, HasSubstr("(egress-too-many-connections)\n"));
  close(held);
}

TEST_F(ProxyTest, StopEndsOpenTunnelsAndRemovesTheSocket) {
  StartProxy({Target()});
  int fd = ConnectUnixSocket(socket_path_);
  SendText(fd, "CONNECT " + Target() + " HTTP/1.1\r\n\r\n");
  ASSERT_THAT(ReadUntil(fd, "\r\n\r\n"), StartsWith("HTTP/1.1 200 "));
  SendText(fd, "GET /hold HTTP/1.1\r\n\r\n");  // the server answers only when we close
  int idle = ConnectUnixSocket(socket_path_);  // a client that never sends its head
  for (int i = 0; i < 200 && server_.heads().empty(); ++i) usleep(10000);
  usleep(200000);  // lets the accept thread take the idle connection too

  const int64_t start = MonotonicMs();
  proxy_->Stop();
  EXPECT_LT(MonotonicMs() - start, 2000);
  EXPECT_EQ(ReadUntil(fd, "", 2000), "") << "the tunnel ended without an answer";
  EXPECT_EQ(ReadUntil(idle, "", 2000), "");
  close(fd);
  close(idle);
  struct stat st;
  EXPECT_NE(lstat(socket_path_.c_str(), &st), 0) << "the socket is gone";
  EXPECT_LT(ConnectUnixSocket(socket_path_), 0);
  std::vector<EgressRecord> records = Records();  // delivered before Stop returned
  ASSERT_EQ(records.size(), 2u);
  for (const EgressRecord& record : records) EXPECT_EQ(record.reason_code, "egress-proxy-stopped");
  proxy_->Stop();  // idempotent
}

TEST_F(ProxyTest, AClientThatStopsReadingCannotWedgeStop) {
  StartProxy({Target()});
  int fd = ConnectUnixSocket(socket_path_);
  SendText(fd, "GET http://" + Target() + "/flood HTTP/1.1\r\n\r\n");
  // Never read: the proxy's writes to us fill the socket buffer and stay
  // pending; a blocking write would hold its thread, and Stop, forever.
  usleep(300000);
  const int64_t start = MonotonicMs();
  proxy_->Stop();
  EXPECT_LT(MonotonicMs() - start, 2000);
  close(fd);
  std::vector<EgressRecord> records = Records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].reason_code, "egress-proxy-stopped");
  EXPECT_GT(records[0].bytes_down, 0u);
  EXPECT_LT(records[0].bytes_down, 16u * 1024 * 1024);
}

TEST_F(ProxyTest, StartRefusesAnUnsafeSocketPlace) {
  auto start = [](const std::string& path) {
    ProxyOptions options;
    options.socket_path = path;
    options.allowlist = *ParseAllowHosts({"example.com"});
    absl::StatusOr<std::unique_ptr<EgressProxy>> proxy = EgressProxy::Start(std::move(options));
    return proxy.ok() ? std::string("ok") : ErrorCode(proxy.status());
  };
  const std::string open_dir = temp_.MakeDir("open");
  chmod(open_dir.c_str(), 0755);
  EXPECT_EQ(start(open_dir + "/proxy.sock"), "egress-socket-dir-unsafe");
  const std::string link = temp_.Path("link");
  ASSERT_EQ(symlink(dir_.c_str(), link.c_str()), 0);
  EXPECT_EQ(start(link + "/proxy.sock"), "egress-socket-dir-unsafe");
  EXPECT_EQ(start("relative.sock"), "egress-socket-dir-unsafe");
  EXPECT_EQ(start(dir_ + "/missing/proxy.sock"), "egress-socket-dir-unsafe");
  const std::string existing = temp_.Write("egress/existing", "not a socket");
  EXPECT_EQ(start(existing), "egress-socket-exists");
  EXPECT_EQ(np::testing::ReadFile(existing), "not a socket") << "never replaced";
  EXPECT_EQ(start(dir_ + "/" + std::string(120, 'x')), "egress-socket-path-too-long");

  // The socket it creates has the mode asked for.
  EXPECT_EQ(start(socket_path_), "ok");  // started and stopped again: gone
  struct stat st;
  EXPECT_NE(lstat(socket_path_.c_str(), &st), 0);
  StartProxy({"example.com"});
  ASSERT_EQ(lstat(socket_path_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(EgressRecordTest, ToJsonCarriesEveryFieldAndStaysValidJson) {
  EgressRecord record;
  record.method = "CONNECT";
  record.host = "h\xff.test";
  record.port = 443;
  record.allowed = true;
  record.address = "127.0.0.1";
  record.bytes_up = 10;
  record.bytes_down = 20;
  record.duration_ms = 3;
  nlohmann::json json = EgressRecordToJson(record);
  EXPECT_EQ(json["egress"]["host"], "h?.test");
  EXPECT_EQ(json["egress"]["port"], 443);
  EXPECT_EQ(json["egress"]["allowed"], true);
  EXPECT_EQ(json["egress"]["reason_code"], "");
  EXPECT_EQ(json["egress"]["bytes_up"], 10);
  EXPECT_EQ(json["egress"]["bytes_down"], 20);
  EXPECT_EQ(json["egress"]["duration_ms"], 3);
  EXPECT_NO_THROW(json.dump());
}

TEST(ResolverTest, SockaddrConversionsNormaliseMappedAddresses) {
  sockaddr_storage storage;
  socklen_t size = ToSockaddr(Ip("::ffff:169.254.169.254"), 80, &storage);
  // ParseIpv6 already normalised it: an IPv4 sockaddr.
  EXPECT_EQ(storage.ss_family, AF_INET);
  EXPECT_EQ(size, sizeof(sockaddr_in));
  sockaddr_in6 in6{};
  in6.sin6_family = AF_INET6;
  const uint8_t mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 169, 254, 169, 254};
  std::memcpy(&in6.sin6_addr, mapped, 16);
  std::optional<IpAddress> address =
      IpAddressFromSockaddr(reinterpret_cast<sockaddr*>(&in6), sizeof in6);
  ASSERT_TRUE(address.has_value());
  EXPECT_EQ(FormatIpAddress(*address), "169.254.169.254");
  EXPECT_EQ(ClassifyAddress(*address), AddressClass::kLinkLocal);
  EXPECT_FALSE(IpAddressFromSockaddr(reinterpret_cast<sockaddr*>(&in6), 8).has_value());
  // The real resolver answers for a literal-free local name without DNS.
  absl::StatusOr<std::vector<IpAddress>> localhost = SystemResolver()("localhost");
  ASSERT_TRUE(localhost.ok()) << localhost.status();
  ASSERT_FALSE(localhost->empty());
  EXPECT_EQ(ClassifyAddress(localhost->front()), AddressClass::kLoopback);
}

}  // namespace
}  // namespace np::egress
