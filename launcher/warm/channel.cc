#include "launcher/warm/channel.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "core/warm.h"

namespace np::warm {
namespace {

absl::Status ChannelError(absl::string_view what, int err = 0) {
  return MakeError(absl::StatusCode::kUnavailable, "warm-channel",
                   absl::StrCat("the warm sandbox's channel failed: ", what,
                                err != 0 ? absl::StrCat(": ", strerror(err)) : ""));
}

absl::Status Closed() {
  return MakeError(absl::StatusCode::kUnavailable, "warm-channel-closed",
                   "the warm sandbox's peer closed the channel");
}

// Waits until `socket` is readable; false on a timeout or a failure.
bool WaitReadable(int socket, int timeout_ms) {
  pollfd entry{socket, POLLIN, 0};
  for (;;) {
    const int ready = poll(&entry, 1, timeout_ms);
    if (ready > 0) return true;
    if (ready == 0) return false;
    if (errno != EINTR) return false;
  }
}

absl::Status SendAll(int socket, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t sent = send(socket, data, size, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      return ChannelError("send", errno);
    }
    data += sent;
    size -= static_cast<size_t>(sent);
  }
  return absl::OkStatus();
}

sockaddr_un AddressAt(int dir_fd, const std::string& name) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string path = absl::StrCat("/proc/self/fd/", dir_fd, "/", name);
  std::memcpy(address.sun_path, path.data(), std::min(path.size(), sizeof(address.sun_path) - 1));
  return address;
}

absl::StatusOr<OwnedFd> Connect(const sockaddr_un& address) {
  OwnedFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return ChannelError("socket", errno);
  while (connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    if (errno != EINTR) return ChannelError("connect", errno);
  }
  return fd;
}

}  // namespace

OwnedFd& OwnedFd::operator=(OwnedFd&& other) noexcept {
  if (this != &other) {
    Reset();
    fd_ = other.Release();
  }
  return *this;
}

void OwnedFd::Reset() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

absl::Status Send(int socket, const nlohmann::json& body, const std::vector<int>& fds) {
  if (fds.size() > kMaxMessageFds) return WarmProtocolError("too many descriptors");
  const std::string payload = body.dump();
  if (payload.size() > kMaxMessageBytes) return WarmProtocolError("too big");
  unsigned char header[4];
  for (int i = 0; i < 4; ++i)
    header[i] = static_cast<unsigned char>(payload.size() >> (24 - 8 * i));
  iovec io{header, sizeof(header)};
  msghdr message{};
  message.msg_iov = &io;
  message.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxMessageFds)];
  if (!fds.empty()) {
    message.msg_control = control;
    message.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* entry = CMSG_FIRSTHDR(&message);
    entry->cmsg_level = SOL_SOCKET;
    entry->cmsg_type = SCM_RIGHTS;
    entry->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(entry), fds.data(), sizeof(int) * fds.size());
  }
  for (;;) {
    const ssize_t sent = sendmsg(socket, &message, MSG_NOSIGNAL);
    if (sent == static_cast<ssize_t>(sizeof(header))) break;
    if (sent < 0 && errno == EINTR) continue;
    return ChannelError("send", sent < 0 ? errno : EIO);
  }
  return SendAll(socket, payload.data(), payload.size());
}

absl::StatusOr<Message> Receive(int socket, int timeout_ms) {
  Message out;
  unsigned char header[4];
  size_t have = 0;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxMessageFds)];
  bool too_many = false;
  while (have < sizeof(header)) {
    if (!WaitReadable(socket, timeout_ms)) return ChannelError("no message in time");
    iovec io{header + have, sizeof(header) - have};
    msghdr message{};
    message.msg_iov = &io;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof(control);
    const ssize_t got = recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
    if (got < 0) {
      if (errno == EINTR) continue;
      return ChannelError("receive", errno);
    }
    if (got == 0) return have == 0 ? Closed() : ChannelError("a truncated message");
    for (cmsghdr* entry = CMSG_FIRSTHDR(&message); entry != nullptr;
         entry = CMSG_NXTHDR(&message, entry)) {
      if (entry->cmsg_level != SOL_SOCKET || entry->cmsg_type != SCM_RIGHTS) continue;
      const size_t count = (entry->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int fd = -1;
        std::memcpy(&fd, CMSG_DATA(entry) + i * sizeof(int), sizeof(int));
        out.fds.emplace_back(fd);
      }
    }
    too_many = too_many || (message.msg_flags & MSG_CTRUNC) != 0;
    have += static_cast<size_t>(got);
  }
  if (too_many || out.fds.size() > kMaxMessageFds) return WarmProtocolError("too many descriptors");
  size_t size = 0;
  for (unsigned char byte : header) size = (size << 8) | byte;
  if (size > kMaxMessageBytes) return WarmProtocolError("too big");
  std::string payload(size, '\0');
  size_t read_so_far = 0;
  while (read_so_far < size) {
    if (!WaitReadable(socket, timeout_ms)) return ChannelError("no message in time");
    const ssize_t got = recv(socket, payload.data() + read_so_far, size - read_so_far, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return ChannelError("receive", errno);
    }
    if (got == 0) return ChannelError("a truncated message");
    read_so_far += static_cast<size_t>(got);
  }
  out.body = nlohmann::json::parse(payload, nullptr, /*allow_exceptions=*/false);
  // Every message is an object, so reading a key of it never throws.
  if (out.body.is_discarded() || !out.body.is_object())
    return WarmProtocolError("not a JSON object");
  return out;
}

absl::StatusOr<OwnedFd> ConnectAt(int dir_fd, const std::string& name) {
  return Connect(AddressAt(dir_fd, name));
}

absl::StatusOr<OwnedFd> ListenAt(int dir_fd, const std::string& name) {
  OwnedFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return ChannelError("socket", errno);
  const sockaddr_un address = AddressAt(dir_fd, name);
  const mode_t old_mask = umask(0177);
  const int bound = bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address));
  const int err = errno;
  umask(old_mask);
  if (bound != 0) return ChannelError("bind", err);
  if (listen(fd.get(), 16) != 0) return ChannelError("listen", errno);
  return fd;
}

absl::StatusOr<OwnedFd> ConnectPath(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof(address.sun_path)) return ChannelError("the path is too long");
  std::memcpy(address.sun_path, path.data(), path.size());
  return Connect(address);
}

}  // namespace np::warm
