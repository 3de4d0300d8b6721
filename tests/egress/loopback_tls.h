// Test helpers for the credential hosts of the egress proxy: a loopback TLS
// server that records every request it receives, with a certificate for
// "localhost" from a test CA of its own (made with the proxy's own
// SessionCa, standing in for a public CA the host trusts), and a blocking TLS
// client for the sandbox's side of a CONNECT tunnel. Test-only.
#ifndef NP_EXEC_TESTS_EGRESS_LOOPBACK_TLS_H_
#define NP_EXEC_TESTS_EGRESS_LOOPBACK_TLS_H_

#include <openssl/ssl.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "launcher/egress/session_ca.h"

namespace np::testing {

// Serves HTTP/1.1 over TLS on 127.0.0.1:port() as "localhost": each request
// (head and Content-Length body) is recorded and answered 200, keep-alive,
// with body "upstream saw <request line>\n". The CA's certificate is in
// ca_file(), for SSL_CERT_FILE.
class LoopbackTlsServer {
 public:
  explicit LoopbackTlsServer(const std::string& ca_file);
  ~LoopbackTlsServer();
  uint16_t port() const { return port_; }
  int connections() const { return connections_.load(); }
  std::vector<std::string> heads();  // every request head, in order
  std::vector<std::string> bodies();
  // From now on every request is answered with this status line ("400 Bad
  // Request") and body (JSON) instead, as an API host's error: a real agent
  // CLI gives up on it at once rather than retrying.
  void AnswerWith(const std::string& status, const std::string& json_body);

 private:
  void Loop();
  void Serve(int fd);
  std::unique_ptr<egress::SessionCa> ca_;
  SSL_CTX* ctx_ = nullptr;
  int listen_fd_ = -1;
  int stop_[2] = {-1, -1};
  uint16_t port_ = 0;
  std::atomic<int> connections_{0};
  std::mutex mutex_;
  std::vector<std::string> heads_;
  std::vector<std::string> bodies_;
  std::string answer_status_;  // empty: "200 OK", "upstream saw ..."
  std::string answer_body_;
  std::vector<std::thread> threads_;
  std::thread thread_;
};

// The sandbox's side: on the connected, blocking `fd` (a CONNECT tunnel that
// already answered 200), a TLS client trusting only the PEM `ca_pem`, with
// SNI and host-name check for `host`, offering ALPN http/1.1.
class TlsClient {
 public:
  TlsClient(int fd, const std::string& ca_pem, const std::string& host);
  ~TlsClient();
  bool ok() const { return ok_; }
  std::string error() const { return error_; }
  std::string alpn() const;
  bool Send(const std::string& data);
  // Reads one response: its head and a Content-Length body.
  std::string ReadResponse();

 private:
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  bool ok_ = false;
  std::string error_;
  std::string buffer_;
};

// Writes `text` to `path`.
void WriteTextFile(const std::string& path, const std::string& text);

}  // namespace np::testing

#endif  // NP_EXEC_TESTS_EGRESS_LOOPBACK_TLS_H_
