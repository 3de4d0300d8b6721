// np-egress-bench: time to first byte through the egress bridge and proxy
// (issue 16) against a direct loopback connection, as ratios.
//
// In one process: a loopback HTTP server, the proxy (launcher/egress/proxy.h)
// on a unix socket in a 0700 temporary directory, and the bridge
// (launcher/egress/bridge.h) forked on 127.0.0.1. Each round times, in a
// rotating order, one request of each kind from connect(2) to the first
// response byte:
//   direct   GET / straight to the server
//   plain    GET http://127.0.0.1:PORT/ to the bridge (HTTP_PROXY's path)
//   connect  CONNECT to the bridge, wait for 200, then GET / in the tunnel
//            (HTTPS_PROXY's path, without TLS)
// and prints the medians and the median per-round ratio to direct, which is
// the number to trust on a shared machine (the spawn harness's reasoning).
// It also times StartBridge itself (fork to a listening port, then a kill):
// the extra per-spawn cost of the in-sandbox entry point.
//
//   np-egress-bench [--rounds N]    default 400
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/allowlist.h"
#include "launcher/egress/bridge.h"
#include "launcher/egress/proxy.h"

namespace {

double NowUs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "np-egress-bench: %s\n", what.c_str());
  std::exit(1);
}

int Loopback(uint16_t port, bool do_connect) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  if (do_connect) {
    if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) Die("connect");
    return fd;
  }
  socklen_t size = sizeof address;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || listen(fd, 64) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    Die("listen");
  }
  return fd;
}

uint16_t PortOf(int fd) {
  sockaddr_in address{};
  socklen_t size = sizeof address;
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
  return ntohs(address.sin_port);
}

void SendAll(int fd, const std::string& data) {
  if (send(fd, data.data(), data.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(data.size())) {
    Die("send");
  }
}

// Reads until `marker` has arrived; returns everything read.
std::string ReadUntil(int fd, const std::string& marker) {
  std::string out;
  char buffer[4096];
  while (out.find(marker) == std::string::npos) {
    ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) Die("short read: " + out);
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

// Answers every request with a tiny 200, one connection at a time.
void Serve(int listen_fd, std::atomic<bool>* stop) {
  while (!stop->load()) {
    int client = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    std::string head;
    char buffer[4096];
    while (head.find("\r\n\r\n") == std::string::npos) {
      ssize_t n = recv(client, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      head.append(buffer, static_cast<size_t>(n));
    }
    const std::string response =
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
    send(client, response.data(), response.size(), MSG_NOSIGNAL);
    close(client);
  }
}

// Connect to first byte of the response, in microseconds.
double TimeDirect(uint16_t server) {
  const double start = NowUs();
  int fd = Loopback(server, true);
  SendAll(fd, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  char c;
  if (recv(fd, &c, 1, 0) != 1) Die("direct: no byte");
  const double us = NowUs() - start;
  close(fd);
  return us;
}

double TimePlain(uint16_t bridge, uint16_t server) {
  const double start = NowUs();
  int fd = Loopback(bridge, true);
  SendAll(fd, "GET http://127.0.0.1:" + std::to_string(server) + "/ HTTP/1.1\r\n\r\n");
  char c;
  if (recv(fd, &c, 1, 0) != 1) Die("plain: no byte");
  const double us = NowUs() - start;
  ReadUntil(fd, "ok");
  close(fd);
  return us;
}

double TimeConnect(uint16_t bridge, uint16_t server) {
  const double start = NowUs();
  int fd = Loopback(bridge, true);
  SendAll(fd, "CONNECT 127.0.0.1:" + std::to_string(server) + " HTTP/1.1\r\n\r\n");
  ReadUntil(fd, "\r\n\r\n");
  SendAll(fd, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  char c;
  if (recv(fd, &c, 1, 0) != 1) Die("connect: no byte");
  const double us = NowUs() - start;
  close(fd);
  return us;
}

double TimeBridgeStart(const std::string& socket_path) {
  const double start = NowUs();
  absl::StatusOr<np::egress::BridgeProcess> bridge = np::egress::StartBridge(0, socket_path);
  if (!bridge.ok()) Die(std::string(bridge.status().message()));
  const double us = NowUs() - start;  // listening: the caller could exec now
  kill(bridge->pid, SIGKILL);
  waitpid(bridge->pid, nullptr, 0);
  return us;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 400;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else {
      Die("usage: np-egress-bench [--rounds N]");
    }
  }
  signal(SIGPIPE, SIG_IGN);
  char dir_template[] = "/tmp/np-egress-bench-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) Die("mkdtemp");
  const std::string dir = dir_template;
  const std::string socket_path = dir + "/proxy.sock";

  int listen_fd = Loopback(0, false);
  const uint16_t server = PortOf(listen_fd);
  std::atomic<bool> stop{false};
  std::thread server_thread(Serve, listen_fd, &stop);

  np::egress::ProxyOptions options;
  options.socket_path = socket_path;
  absl::StatusOr<np::Allowlist> allowlist =
      np::ParseAllowHosts({"127.0.0.1:" + std::to_string(server)});
  if (!allowlist.ok()) Die("allowlist");
  options.allowlist = *allowlist;
  absl::StatusOr<std::unique_ptr<np::egress::EgressProxy>> proxy =
      np::egress::EgressProxy::Start(std::move(options));
  if (!proxy.ok()) Die(std::string(proxy.status().message()));
  absl::StatusOr<np::egress::BridgeProcess> bridge = np::egress::StartBridge(0, socket_path);
  if (!bridge.ok()) Die(std::string(bridge.status().message()));

  std::vector<double> direct, plain, tunnel, plain_ratio, tunnel_ratio, start;
  for (int warm = 0; warm < 20; ++warm) {
    TimeDirect(server);
    TimePlain(bridge->port, server);
    TimeConnect(bridge->port, server);
  }
  for (int round = 0; round < rounds; ++round) {
    double d = 0, p = 0, c = 0;
    for (int k = 0; k < 3; ++k) {  // the order rotates each round
      switch ((round + k) % 3) {
        case 0:
          d = TimeDirect(server);
          break;
        case 1:
          p = TimePlain(bridge->port, server);
          break;
        case 2:
          c = TimeConnect(bridge->port, server);
          break;
      }
    }
    direct.push_back(d);
    plain.push_back(p);
    tunnel.push_back(c);
    plain_ratio.push_back(p / d);
    tunnel_ratio.push_back(c / d);
    if (round % 4 == 0) start.push_back(TimeBridgeStart(socket_path));
  }

  std::printf("np-egress-bench: %d interleaved rounds, time from connect(2) to the first byte\n",
              rounds);
  std::printf("%-34s %10s %8s\n", "path", "median us", "ratio");
  std::printf("%-34s %10.1f %8s\n", "direct loopback", Median(direct), "1.00");
  std::printf("%-34s %10.1f %8.2f\n", "bridge+proxy, plain HTTP", Median(plain),
              Median(plain_ratio));
  std::printf("%-34s %10.1f %8.2f\n", "bridge+proxy, CONNECT then GET", Median(tunnel),
              Median(tunnel_ratio));
  std::printf("%-34s %10.1f %8s\n", "StartBridge (fork to listening)", Median(start), "-");

  kill(bridge->pid, SIGKILL);
  waitpid(bridge->pid, nullptr, 0);
  (*proxy)->Stop();
  stop.store(true);
  close(Loopback(server, true));  // wakes the accept
  server_thread.join();
  close(listen_fd);
  rmdir(dir.c_str());
  return 0;
}
