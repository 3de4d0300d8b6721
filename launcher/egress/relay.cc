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

Splice::Splice(int a, int b, std::string initial_to_b, bool end_when_b_ends)
    : up_(a, b), down_(b, a), end_when_b_ends_(end_when_b_ends) {
  up_.pending = std::move(initial_to_b);
}

short Splice::AEvents() const {
  return static_cast<short>((up_.WantsRead() ? POLLIN : 0) | (down_.WantsWrite() ? POLLOUT : 0));
}

short Splice::BEvents() const {
  return static_cast<short>((down_.WantsRead() ? POLLIN : 0) | (up_.WantsWrite() ? POLLOUT : 0));
}

bool Splice::Over() const {
  return failed_ || (up_.done && down_.done) || (end_when_b_ends_ && down_.done);
}

bool Splice::Handle(short a_revents, short b_revents) {
  if (Over()) return false;
  constexpr short kReadable = POLLIN | POLLHUP | POLLERR;
  constexpr short kWritable = POLLOUT | POLLHUP | POLLERR;
  bool ok = true;
  if (ok && up_.WantsWrite() && (b_revents & kWritable)) ok = WriteFrom(up_);
  if (ok && down_.WantsWrite() && (a_revents & kWritable)) ok = WriteFrom(down_);
  if (ok && up_.WantsRead() && (a_revents & kReadable)) ok = ReadInto(up_);
  if (ok && down_.WantsRead() && (b_revents & kReadable)) ok = ReadInto(down_);
  failed_ = !ok;
  FinishIfDrained(up_);
  FinishIfDrained(down_);
  return !Over();
}

bool Splice::ReadInto(Direction& d) {
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

bool Splice::WriteFrom(Direction& d) {
  ssize_t n = send(d.to, d.pending.data() + d.offset, d.pending.size() - d.offset, MSG_NOSIGNAL);
  if (n >= 0) {
    d.offset += static_cast<size_t>(n);
    d.written += static_cast<uint64_t>(n);
    return true;
  }
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

void Splice::FinishIfDrained(Direction& d) {
  if (d.done || !d.eof || d.WantsWrite()) return;
  shutdown(d.to, SHUT_WR);
  d.done = true;
}

RelayResult Relay(int a, int b, const RelayOptions& options) {
  Splice splice(a, b, options.initial_to_b, options.end_when_b_ends);
  RelayResult result;
  while (true) {
    const short a_events = splice.AEvents();
    const short b_events = splice.BEvents();
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
    if (!splice.Handle(fds[0].revents, fds[1].revents)) break;
  }
  result.a_to_b = splice.a_to_b();
  result.b_to_a = splice.b_to_a();
  return result;
}

}  // namespace np::egress
