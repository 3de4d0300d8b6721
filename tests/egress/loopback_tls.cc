#include "tests/egress/loopback_tls.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace np::testing {
namespace {

// The Content-Length of a head, 0 when none.
size_t ContentLength(const std::string& head) {
  const std::string lower = absl::AsciiStrToLower(head);
  const size_t at = lower.find("\r\ncontent-length:");
  if (at == std::string::npos) return 0;
  const size_t start = at + 17;
  const size_t end = lower.find("\r\n", start);
  size_t length = 0;
  return absl::SimpleAtoi(absl::StripAsciiWhitespace(lower.substr(start, end - start)), &length)
             ? length
             : 0;
}

// Reads from `ssl` until `buffer` holds a whole message (head plus its
// Content-Length body); returns it, or "" at the end.
std::string ReadMessage(SSL* ssl, std::string* buffer) {
  while (true) {
    const size_t end = buffer->find("\r\n\r\n");
    if (end != std::string::npos) {
      const size_t total = end + 4 + ContentLength(buffer->substr(0, end + 4));
      if (buffer->size() >= total) {
        std::string message = buffer->substr(0, total);
        buffer->erase(0, total);
        return message;
      }
    }
    char chunk[16384];
    const int n = SSL_read(ssl, chunk, sizeof chunk);
    if (n <= 0) return std::string();
    buffer->append(chunk, static_cast<size_t>(n));
  }
}

}  // namespace

void WriteTextFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

LoopbackTlsServer::LoopbackTlsServer(const std::string& ca_file) {
  // OpenSSL writes with write(2): a peer the proxy closed must end a
  // connection of this server, not the test process.
  signal(SIGPIPE, SIG_IGN);
  absl::StatusOr<std::unique_ptr<egress::SessionCa>> ca = egress::SessionCa::Create({"localhost"});
  if (!ca.ok()) abort();
  ca_ = *std::move(ca);
  absl::StatusOr<SSL_CTX*> ctx = ca_->ServerContext("localhost");
  if (!ctx.ok()) abort();
  ctx_ = *ctx;
  WriteTextFile(ca_file, ca_->CertificatePem());
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      listen(listen_fd_, 64) != 0 ||
      getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &size) != 0 ||
      pipe2(stop_, O_CLOEXEC) != 0) {
    abort();
  }
  port_ = ntohs(address.sin_port);
  thread_ = std::thread(&LoopbackTlsServer::Loop, this);
}

LoopbackTlsServer::~LoopbackTlsServer() {
  ssize_t ignored = write(stop_[1], "x", 1);
  (void)ignored;
  thread_.join();
  for (std::thread& t : threads_) t.join();
  close(listen_fd_);
  close(stop_[0]);
  close(stop_[1]);
}

std::vector<std::string> LoopbackTlsServer::heads() {
  std::lock_guard<std::mutex> lock(mutex_);
  return heads_;
}

std::vector<std::string> LoopbackTlsServer::bodies() {
  std::lock_guard<std::mutex> lock(mutex_);
  return bodies_;
}

void LoopbackTlsServer::Loop() {
  while (true) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) continue;
    if (fds[1].revents) return;
    const int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    ++connections_;
    threads_.emplace_back(&LoopbackTlsServer::Serve, this, client);
  }
}

void LoopbackTlsServer::AnswerWith(const std::string& status, const std::string& json_body) {
  std::lock_guard<std::mutex> lock(mutex_);
  answer_status_ = status;
  answer_body_ = json_body;
}

void LoopbackTlsServer::Serve(int fd) {
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  SSL* ssl = SSL_new(ctx_);
  SSL_set_fd(ssl, fd);
  std::string buffer;
  if (SSL_accept(ssl) == 1) {
    while (true) {
      const std::string message = ReadMessage(ssl, &buffer);
      if (message.empty()) break;
      const size_t end = message.find("\r\n\r\n");
      std::string status = "200 OK";
      std::string type = "text/plain";
      std::string body =
          absl::StrCat("upstream saw ", message.substr(0, message.find("\r\n")), "\n");
      {
        std::lock_guard<std::mutex> lock(mutex_);
        heads_.push_back(message.substr(0, end + 4));
        bodies_.push_back(message.substr(end + 4));
        if (!answer_status_.empty()) {
          status = answer_status_;
          type = "application/json";
          body = answer_body_;
        }
      }
      const std::string response =
          absl::StrCat("HTTP/1.1 ", status, "\r\nContent-Type: ", type,
                       "\r\nContent-Length: ", body.size(), "\r\n\r\n", body);
      if (SSL_write(ssl, response.data(), static_cast<int>(response.size())) <= 0) break;
    }
    SSL_shutdown(ssl);
  }
  SSL_free(ssl);
  close(fd);
}

TlsClient::TlsClient(int fd, const std::string& ca_pem, const std::string& host) {
  ctx_ = SSL_CTX_new(TLS_client_method());
  BIO* bio = BIO_new_mem_buf(ca_pem.data(), static_cast<int>(ca_pem.size()));
  X509* ca = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx_), ca);
  X509_free(ca);
  SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
  static const unsigned char kAlpn[] = {2, 'h', '2', 8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  SSL_CTX_set_alpn_protos(ctx_, kAlpn, sizeof kAlpn);
  ssl_ = SSL_new(ctx_);
  SSL_set_fd(ssl_, fd);
  SSL_set_tlsext_host_name(ssl_, host.c_str());
  SSL_set1_host(ssl_, host.c_str());
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  ok_ = SSL_connect(ssl_) == 1;
  if (!ok_) {
    const long verify = SSL_get_verify_result(ssl_);
    error_ = verify != X509_V_OK ? X509_verify_cert_error_string(verify) : egress::OpenSslError();
  }
}

TlsClient::~TlsClient() {
  SSL_free(ssl_);
  SSL_CTX_free(ctx_);
}

std::string TlsClient::alpn() const {
  const unsigned char* data = nullptr;
  unsigned int size = 0;
  SSL_get0_alpn_selected(ssl_, &data, &size);
  return std::string(reinterpret_cast<const char*>(data), size);
}

bool TlsClient::Send(const std::string& data) {
  return SSL_write(ssl_, data.data(), static_cast<int>(data.size())) ==
         static_cast<int>(data.size());
}

std::string TlsClient::ReadResponse() { return ReadMessage(ssl_, &buffer_); }

}  // namespace np::testing
