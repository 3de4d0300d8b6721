// np-credential-bench: what the egress proxy's credential path adds per
// request, measured in one run with Google Benchmark against a loopback TLS
// server in this process:
//   BM_RequestInPlainTunnel       one TLS keep-alive connection through a
//                                 plain CONNECT tunnel (end-to-end TLS)
//   BM_RequestInCredentialTunnel  the same through a credential host's
//                                 tunnel: TLS terminated, the request framed
//                                 and its placeholder replaced, TLS again
// Each iteration is one request and its response on the open connection;
// the difference of the two is the added latency per request. The proxy is
// reached on its unix socket directly (the bridge's cost is egress_bench's).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/pem.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "core/allowlist.h"
#include "launcher/egress/credential_tunnel.h"
#include "launcher/egress/proxy.h"

namespace np::egress {
namespace {

constexpr char kResponse[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

// A TLS server for "localhost" that answers every request head with kResponse.
class Server {
 public:
  Server() {
    ca_ = *SessionCa::Create({"localhost"});
    ctx_ = *ca_->ServerContext("localhost");
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address);
    listen(fd_, 16);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size);
    port_ = ntohs(address.sin_port);
    std::thread([this] { Loop(); }).detach();
  }
  uint16_t port() const { return port_; }
  std::string ca_pem() const { return ca_->CertificatePem(); }

 private:
  void Loop() {
    while (true) {
      const int client = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      std::thread([this, client] { Serve(client); }).detach();
    }
  }
  void Serve(int client) {
    SSL* ssl = SSL_new(ctx_);
    SSL_set_fd(ssl, client);
    std::string buffer;
    char chunk[16384];
    bool open = SSL_accept(ssl) == 1;
    while (open) {
      const size_t end = buffer.find("\r\n\r\n");
      if (end != std::string::npos) {
        buffer.erase(0, end + 4);
        open = SSL_write(ssl, kResponse, sizeof kResponse - 1) > 0;
        continue;
      }
      const int n = SSL_read(ssl, chunk, sizeof chunk);
      open = n > 0;
      if (open) buffer.append(chunk, static_cast<size_t>(n));
    }
    SSL_free(ssl);
    close(client);
  }
  std::unique_ptr<SessionCa> ca_;
  SSL_CTX* ctx_;
  int fd_;
  uint16_t port_ = 0;
};

struct Setup {
  Setup() {
    signal(SIGPIPE, SIG_IGN);
    char templ[] = "/tmp/np-credential-bench-XXXXXX";
    dir = mkdtemp(templ);
    chmod(dir.c_str(), 0700);
    const std::string ca_file = dir + "/test-ca.pem";
    FILE* f = fopen(ca_file.c_str(), "w");
    const std::string pem = server.ca_pem();
    fwrite(pem.data(), 1, pem.size(), f);
    fclose(f);
    setenv("SSL_CERT_FILE", ca_file.c_str(), 1);
    const std::string port = absl::StrCat(server.port());
    ProxyOptions options;
    options.socket_path = dir + "/proxy.sock";
    options.allowlist =
        *ParseAllowHosts({absl::StrCat("localhost:", port), absl::StrCat("127.0.0.1:", port)});
    Credential credential{"localhost", server.port(), "KEY", "x-api-key", "{}"};
    routes = *MakeCredentialRoutes({{credential, "sk-bench-key"}});
    options.credentials = routes;
    options.resolver = [](const std::string&) -> absl::StatusOr<std::vector<IpAddress>> {
      return std::vector<IpAddress>{*ParseIpv4("127.0.0.1")};
    };
    proxy = *EgressProxy::Start(std::move(options));
  }
  Server server;
  std::string dir;
  std::shared_ptr<CredentialRoutes> routes;
  std::unique_ptr<EgressProxy> proxy;
};

Setup& Shared() {
  static Setup* setup = new Setup();
  return *setup;
}

// A TLS connection through a CONNECT to `target`, trusting `ca_pem`.
struct Connection {
  Connection(const std::string& target, const std::string& ca_pem) {
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    const std::string& path = Shared().proxy->socket_path();
    std::memcpy(address.sun_path, path.data(), path.size());
    connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
    const std::string head = absl::StrCat("CONNECT ", target, " HTTP/1.1\r\n\r\n");
    send(fd, head.data(), head.size(), MSG_NOSIGNAL);
    std::string reply;
    char c;
    while (reply.find("\r\n\r\n") == std::string::npos && recv(fd, &c, 1, 0) == 1) reply += c;
    ctx = SSL_CTX_new(TLS_client_method());
    BIO* bio = BIO_new_mem_buf(ca_pem.data(), static_cast<int>(ca_pem.size()));
    X509* ca = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), ca);
    X509_free(ca);
    BIO_free(bio);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    SSL_set_tlsext_host_name(ssl, "localhost");
    ok = SSL_connect(ssl) == 1;
  }
  ~Connection() {
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    close(fd);
  }
  bool RoundTrip(const std::string& request) {
    if (SSL_write(ssl, request.data(), static_cast<int>(request.size())) <= 0) return false;
    std::string got;
    char chunk[4096];
    while (got.size() < sizeof kResponse - 1) {
      const int n = SSL_read(ssl, chunk, sizeof chunk);
      if (n <= 0) return false;
      got.append(chunk, static_cast<size_t>(n));
    }
    return true;
  }
  int fd;
  SSL_CTX* ctx;
  SSL* ssl;
  bool ok = false;
};

void Run(benchmark::State& state, bool credential) {
  Setup& setup = Shared();
  const std::string port = absl::StrCat(setup.server.port());
  const std::string target = absl::StrCat(credential ? "localhost:" : "127.0.0.1:", port);
  Connection connection(target,
                        credential ? setup.routes->ca->CertificatePem() : setup.server.ca_pem());
  if (!connection.ok) {
    state.SkipWithError("TLS handshake failed");
    return;
  }
  const std::string request = absl::StrCat(
      "POST /v1/messages HTTP/1.1\r\nHost: localhost:", port,
      "\r\nx-api-key: np-exec-credential-placeholder:KEY\r\nContent-Length: 0\r\n\r\n");
  for (auto _ : state) {
    const bool done = connection.RoundTrip(request);
    benchmark::DoNotOptimize(done);
    if (!done) {
      state.SkipWithError("round trip failed");
      return;
    }
  }
}

void BM_RequestInPlainTunnel(benchmark::State& state) { Run(state, false); }
void BM_RequestInCredentialTunnel(benchmark::State& state) { Run(state, true); }
BENCHMARK(BM_RequestInPlainTunnel)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_RequestInCredentialTunnel)->Repetitions(5)->ReportAggregatesOnly(true);

}  // namespace
}  // namespace np::egress

BENCHMARK_MAIN();
