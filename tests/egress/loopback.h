// Test helpers for the egress tests: a loopback HTTP server in the test
// process, and blocking clients for unix and TCP sockets. Test-only.
#ifndef NP_EXEC_TESTS_EGRESS_LOOPBACK_H_
#define NP_EXEC_TESTS_EGRESS_LOOPBACK_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace np::testing {

// Serves HTTP/1.1 on 127.0.0.1:port(): reads each request head, records it,
// answers 200 with body "upstream saw <request line>" and closes. A request
// for /hold is answered only when the client closes its side; /flood gets
// 16 MiB that a test can leave unread.
class LoopbackHttpServer {
 public:
  LoopbackHttpServer();
  ~LoopbackHttpServer();
  uint16_t port() const { return port_; }
  int connections() const { return connections_.load(); }
  std::vector<std::string> heads();  // every request head received, in order

 private:
  void Loop();
  int listen_fd_ = -1;
  int stop_[2] = {-1, -1};
  uint16_t port_ = 0;
  std::atomic<int> connections_{0};
  std::mutex mutex_;
  std::vector<std::string> heads_;
  std::vector<std::thread> threads_;
  std::thread thread_;
};

// Connects to a unix socket or 127.0.0.1:port; -1 on failure.
int ConnectUnixSocket(const std::string& path);
int ConnectLoopback(uint16_t port);

// Sends all of `data`.
bool SendText(int fd, const std::string& data);
// Reads until `until` appears (or EOF when empty) or timeout; returns all read.
std::string ReadUntil(int fd, const std::string& until, int timeout_ms = 5000);

// Sends `request` on a fresh connection to the unix socket and returns all
// bytes until the peer closes.
std::string ExchangeUnix(const std::string& path, const std::string& request);

// A free TCP port on 127.0.0.1 with nothing listening (bound once, closed).
uint16_t UnusedPort();

}  // namespace np::testing

#endif  // NP_EXEC_TESTS_EGRESS_LOOPBACK_H_
