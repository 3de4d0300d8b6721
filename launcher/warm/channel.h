// The warm sandbox's messages on a unix-domain stream socket: a length-
// prefixed JSON document, with descriptors (SCM_RIGHTS) attached to its
// first bytes. Between the client and the holder, the holder and the
// keeper, the client and the keeper (core/warm.h). Touches sockets.
#ifndef NP_EXEC_LAUNCHER_WARM_CHANNEL_H_
#define NP_EXEC_LAUNCHER_WARM_CHANNEL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace np::warm {

// A descriptor closed with its owner.
class OwnedFd {
 public:
  OwnedFd() = default;
  explicit OwnedFd(int fd) : fd_(fd) {}
  OwnedFd(OwnedFd&& other) noexcept : fd_(other.Release()) {}
  OwnedFd& operator=(OwnedFd&& other) noexcept;
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  ~OwnedFd() { Reset(); }
  int get() const { return fd_; }
  int Release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void Reset();

 private:
  int fd_ = -1;
};

struct Message {
  nlohmann::json body;
  std::vector<OwnedFd> fds;
};

// The most descriptors and bytes one message carries.
inline constexpr size_t kMaxMessageFds = 4;
inline constexpr size_t kMaxMessageBytes = 8 << 20;

// Sends `body` with `fds` (not consumed). Codes: `warm-channel` (the peer is
// gone or the socket failed).
absl::Status Send(int socket, const nlohmann::json& body, const std::vector<int>& fds = {});

// Receives one message, waiting at most `timeout_ms` (-1: no limit).
// Received descriptors are close-on-exec. Codes: `warm-channel-closed` (the
// peer closed before a message began), `warm-channel` (a failure, a timeout,
// a truncated message), `warm-protocol` (not JSON, too big, too many fds).
absl::StatusOr<Message> Receive(int socket, int timeout_ms = -1);

// A connected socket to the listening one at `dir_fd`/`name`, or a listening
// one made there (mode 0600). By the descriptor's /proc path, so a long
// state directory never hits the socket path limit. Codes: `warm-channel`.
absl::StatusOr<OwnedFd> ConnectAt(int dir_fd, const std::string& name);
absl::StatusOr<OwnedFd> ListenAt(int dir_fd, const std::string& name);
// The same by path (the keeper's rendezvous, inside the sandbox).
absl::StatusOr<OwnedFd> ConnectPath(const std::string& path);

}  // namespace np::warm

#endif  // NP_EXEC_LAUNCHER_WARM_CHANNEL_H_
