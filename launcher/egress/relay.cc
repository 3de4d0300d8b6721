#include "launcher/egress/relay.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/errors.h"

namespace np::egress {
namespace {

constexpr size_t kChunk = 64 * 1024;

// One direction of the relay: bytes read from `from`, written to `to`.
struct Direction {
  Direction(int from_fd, int to_fd) : from(from_fd), to(to_fd) {}
  int from;
  int to;
  std::string pending;
  size_t offset = 0;
  bool eof = false;   // `from` ended its writing
  bool done = false;  // eof, all pending delivered, `to`'s write half shut
  uint64_t written = 0;

  bool WantsRead() const { return !eof && offset >= pending.size(); }
  bool WantsWrite() const { return offset < pending.size(); }
};

// Returns false when the peer failed (the relay ends).
bool ReadInto(Direction& d) {
  char buffer[kChunk];
  ssize_t n = recv(d.from, buffer, sizeof buffer, 0);
  if (n > 0) {
    d.pending.assign(buffer, static_cast<size_t>(n));
    d.offset = 0;
    return true;
  }
  if (n == 0) {
    d.eof = true;
    return true;
  }
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

bool WriteFrom(Direction& d) {
  ssize_t n = send(d.to, d.pending.data() + d.offset, d.pending.size() - d.offset, MSG_NOSIGNAL);
  if (n >= 0) {
    d.offset += static_cast<size_t>(n);
    d.written += static_cast<uint64_t>(n);
    return true;
  }
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

void FinishIfDrained(Direction& d) {
  if (d.done || !d.eof || d.WantsWrite()) return;
  shutdown(d.to, SHUT_WR);
  d.done = true;
}

}  // namespace

int64_t MonotonicMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

absl::Status SetNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    return MakeError(absl::StatusCode::kInternal, "egress-socket-failed",
                     absl::StrCat("fcntl O_NONBLOCK: ", strerror(errno)));
  }
  return absl::OkStatus();
}

bool SendAll(int fd, absl::string_view data, int stop_fd, int timeout_ms) {
  const int64_t deadline = MonotonicMs() + timeout_ms;
  while (!data.empty()) {
    ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return false;
    const int64_t left = deadline - MonotonicMs();
    if (left <= 0) return false;
    pollfd fds[2] = {{fd, POLLOUT, 0}, {stop_fd, POLLIN, 0}};
    int ready = poll(fds, stop_fd >= 0 ? 2 : 1, static_cast<int>(left));
    if (ready < 0 && errno != EINTR) return false;
    if (stop_fd >= 0 && (fds[1].revents & POLLIN)) return false;
  }
  return true;
}

RelayResult Relay(int a, int b, const RelayOptions& options) {
  Direction up(a, b);    // a -> b
  Direction down(b, a);  // b -> a
  up.pending = options.initial_to_b;
  RelayResult result;
  while (!(up.done && down.done) && !(options.end_when_b_ends && down.done)) {
    // One pollfd per socket, asking for what its two directions need; a
    // socket that needs nothing is left out, so a hang-up it reports cannot
    // spin the loop.
    short a_events =
        static_cast<short>((up.WantsRead() ? POLLIN : 0) | (down.WantsWrite() ? POLLOUT : 0));
    short b_events =
        static_cast<short>((down.WantsRead() ? POLLIN : 0) | (up.WantsWrite() ? POLLOUT : 0));
    pollfd fds[3] = {{a_events ? a : -1, a_events, 0},
                     {b_events ? b : -1, b_events, 0},
                     {options.stop_fd, POLLIN, 0}};
    int ready = poll(fds, options.stop_fd >= 0 ? 3 : 2, -1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (options.stop_fd >= 0 && (fds[2].revents & (POLLIN | POLLHUP | POLLERR))) {
      result.stopped = true;
      break;
    }
    constexpr short kReadable = POLLIN | POLLHUP | POLLERR;
    constexpr short kWritable = POLLOUT | POLLHUP | POLLERR;
    bool ok = true;
    if (ok && up.WantsWrite() && (fds[1].revents & kWritable)) ok = WriteFrom(up);
    if (ok && down.WantsWrite() && (fds[0].revents & kWritable)) ok = WriteFrom(down);
    if (ok && up.WantsRead() && (fds[0].revents & kReadable)) ok = ReadInto(up);
    if (ok && down.WantsRead() && (fds[1].revents & kReadable)) ok = ReadInto(down);
    if (!ok) break;
    FinishIfDrained(up);
    FinishIfDrained(down);
  }
  result.a_to_b = up.written;
  result.b_to_a = down.written;
  return result;
}

}  // namespace np::egress
