#include "tests/egress/loopback.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

namespace np::testing {
namespace {

int64_t NowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

}  // namespace

LoopbackHttpServer::LoopbackHttpServer() {
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
  thread_ = std::thread(&LoopbackHttpServer::Loop, this);
}

LoopbackHttpServer::~LoopbackHttpServer() {
  ssize_t ignored = write(stop_[1], "x", 1);
  (void)ignored;
  thread_.join();
  for (std::thread& t : threads_) t.join();
  close(listen_fd_);
  close(stop_[0]);
  close(stop_[1]);
}

std::vector<std::string> LoopbackHttpServer::heads() {
  std::lock_guard<std::mutex> lock(mutex_);
  return heads_;
}

void LoopbackHttpServer::Loop() {
  while (true) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) continue;
    if (fds[1].revents) return;
    int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    ++connections_;
    threads_.emplace_back([this, client] {
      std::string head = ReadUntil(client, "\r\n\r\n");
      {
        std::lock_guard<std::mutex> lock(mutex_);
        heads_.push_back(head);
      }
      const std::string line = head.substr(0, head.find("\r\n"));
      if (line.find(" /hold ") != std::string::npos) {
        // Wait until the client or the server stops.
        pollfd fds2[2] = {{client, POLLIN, 0}, {stop_[0], POLLIN, 0}};
        poll(fds2, 2, 20000);
      }
      if (line.find(" /flood ") != std::string::npos) {
        // Far more than any socket buffer, for a client that never reads.
        const std::string chunk(64 * 1024, 'x');
        bool sent = SendText(client, "HTTP/1.1 200 OK\r\n\r\n");
        for (int i = 0; sent && i < 256; ++i) sent = SendText(client, chunk);
        close(client);
        return;
      }
      const std::string body = "upstream saw " + line;
      SendText(client, "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) +
                           "\r\nConnection: close\r\n\r\n" + body);
      close(client);
    });
  }
}

int ConnectUnixSocket(const std::string& path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

int ConnectLoopback(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool SendText(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

std::string ReadUntil(int fd, const std::string& until, int timeout_ms) {
  std::string out;
  const int64_t deadline = NowMs() + timeout_ms;
  while (until.empty() || out.find(until) == std::string::npos) {
    const int64_t left = deadline - NowMs();
    if (left <= 0) break;
    pollfd fds[1] = {{fd, POLLIN, 0}};
    if (poll(fds, 1, static_cast<int>(left)) <= 0) continue;
    char buffer[4096];
    ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

std::string ExchangeUnix(const std::string& path, const std::string& request) {
  int fd = ConnectUnixSocket(path);
  if (fd < 0) return "<connect failed>";
  SendText(fd, request);
  std::string response = ReadUntil(fd, "");
  close(fd);
  return response;
}

uint16_t UnusedPort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
  close(fd);
  return ntohs(address.sin_port);
}

}  // namespace np::testing
