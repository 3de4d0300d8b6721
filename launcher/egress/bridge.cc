#include "launcher/egress/bridge.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "launcher/egress/relay.h"

namespace np::egress {
namespace {

absl::Status BridgeError(absl::string_view code, absl::string_view what) {
  return MakeError(absl::StatusCode::kFailedPrecondition, code,
                   absl::StrCat(what, ": ", strerror(errno)));
}

// Connects to the proxy's socket; -1 on failure.
int ConnectUnix(const sockaddr_un& address) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int rc;
  do {
    rc = connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0 || !SetNonBlocking(fd).ok()) {
    close(fd);
    return -1;
  }
  return fd;
}

// The bridge process's clean slate: default signals, nothing inherited.
void ResetProcess(int listen_fd) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig = 1; sig < NSIG; ++sig) signal(sig, SIG_DFL);
  signal(SIGPIPE, SIG_IGN);
  setsid();
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd < 3; ++fd) {
    if (null >= 0) {
      dup2(null, fd);
    } else {
      close(fd);
    }
  }
  // Everything but stdio and the listener goes (close_range needs Linux 5.9;
  // on an older kernel the descriptors the caller leaked stay, harmless here).
  if (listen_fd > 3) syscall(SYS_close_range, 3u, static_cast<unsigned>(listen_fd - 1), 0u);
  syscall(SYS_close_range, static_cast<unsigned>(listen_fd + 1), ~0u, 0u);
}

// One thread, one poll loop over the listener and every connection: the
// bridge is forked, possibly from a process that had threads, and starts
// none of its own.
[[noreturn]] void ServeBridge(int listen_fd, const sockaddr_un& address) {
  struct Connection {
    int client;
    int upstream;
    Splice splice;
  };
  std::vector<std::unique_ptr<Connection>> connections;
  std::vector<pollfd> fds;
  while (true) {
    fds.clear();
    fds.push_back({listen_fd, POLLIN, 0});
    for (const auto& c : connections) {
      const short client_events = c->splice.AEvents();
      const short upstream_events = c->splice.BEvents();
      fds.push_back({client_events ? c->client : -1, client_events, 0});
      fds.push_back({upstream_events ? c->upstream : -1, upstream_events, 0});
    }
    if (poll(fds.data(), fds.size(), -1) < 0) continue;
    // Serve the connections that were polled before adding new ones.
    for (size_t i = 0; i < connections.size();) {
      Connection& c = *connections[i];
      if (c.splice.Handle(fds[1 + 2 * i].revents, fds[2 + 2 * i].revents)) {
        ++i;
        continue;
      }
      close(c.client);
      close(c.upstream);
      // Keep fds in step with connections: the last one moves into slot i.
      connections[i] = std::move(connections.back());
      connections.pop_back();
      if (i < connections.size()) {
        fds[1 + 2 * i] = fds[1 + 2 * connections.size()];
        fds[2 + 2 * i] = fds[2 + 2 * connections.size()];
      }
    }
    if (!(fds[0].revents & POLLIN)) continue;
    int client = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (client < 0) {
      if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) poll(nullptr, 0, 50);
      continue;
    }
    int upstream =
        connections.size() < static_cast<size_t>(kMaxBridgeConnections) ? ConnectUnix(address) : -1;
    if (upstream < 0) {
      close(client);  // the program sees the connection end, never a hang
      continue;
    }
    connections.push_back(
        std::make_unique<Connection>(Connection{client, upstream, Splice(client, upstream)}));
  }
}

}  // namespace

absl::StatusOr<BridgeProcess> StartBridge(uint16_t listen_port, const std::string& socket_path) {
  sockaddr_un unix_address{};
  if (socket_path.empty() || socket_path.size() >= sizeof unix_address.sun_path) {
    return MakeError(absl::StatusCode::kInvalidArgument, "egress-socket-path-too-long",
                     absl::StrCat("the proxy socket path must be 1 to ",
                                  sizeof unix_address.sun_path - 1, " bytes"),
                     {{"path", socket_path}});
  }
  unix_address.sun_family = AF_UNIX;
  std::memcpy(unix_address.sun_path, socket_path.data(), socket_path.size());

  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return BridgeError("egress-bridge-listen-failed", "socket");
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(listen_port);
  socklen_t size = sizeof address;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      listen(fd, 128) != 0 || getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0 ||
      !SetNonBlocking(fd).ok()) {
    absl::Status error = BridgeError("egress-bridge-listen-failed",
                                     absl::StrCat("listen on 127.0.0.1:", listen_port));
    close(fd);
    return error;
  }
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    absl::Status error = BridgeError("egress-bridge-fork-failed", "fork");
    close(fd);
    return error;
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(0);  // the parent died before prctl took effect
    ResetProcess(fd);
    ServeBridge(fd, unix_address);
  }
  close(fd);
  return BridgeProcess{pid, ntohs(address.sin_port)};
}

}  // namespace np::egress
