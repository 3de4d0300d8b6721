// Byte relaying between two connected stream sockets, shared by the egress
// proxy (client <-> upstream) and the in-sandbox bridge (TCP <-> unix socket).
//
// Non-blocking sockets and poll(2), so that a peer that stops reading can
// never wedge a thread in write(2), and a stop descriptor (any fd that
// becomes readable, such as a pipe written once) ends the relay at once.
// Half-close is kept: when one side ends its writing, the other side's write
// half is shut down after the pending bytes are delivered, as a TCP tunnel
// must for protocols that send a final message after the request. Touches
// sockets only.
#ifndef NP_EXEC_LAUNCHER_EGRESS_RELAY_H_
#define NP_EXEC_LAUNCHER_EGRESS_RELAY_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace np::egress {

struct RelayResult {
  uint64_t a_to_b = 0;   // bytes written to b (including `initial_to_b`)
  uint64_t b_to_a = 0;   // bytes written to a
  bool stopped = false;  // the stop descriptor ended it
};

struct RelayOptions {
  int stop_fd = -1;              // readable: stop now; -1: none
  std::string initial_to_b;      // bytes to deliver to b before anything read from a
  bool end_when_b_ends = false;  // end once b's stream to a is finished (plain HTTP)
};

// The state of one relay between `a` and `b`, for a caller that polls many
// at once (the bridge: one thread, every connection in one poll loop).
class Splice {
 public:
  Splice(int a, int b, std::string initial_to_b = "", bool end_when_b_ends = false);

  // The poll(2) events each socket needs now; 0 means leave it out of the
  // poll set (a hang-up it reports could not be acted on and would spin).
  short AEvents() const;
  short BEvents() const;
  // Acts on what poll reported. Returns false once the splice is over (both
  // directions ended, a peer failed, or b ended with end_when_b_ends).
  bool Handle(short a_revents, short b_revents);

  uint64_t a_to_b() const { return up_.written; }
  uint64_t b_to_a() const { return down_.written; }

 private:
  // One direction: bytes read from `from`, written to `to`.
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
  static bool ReadInto(Direction& d);
  static bool WriteFrom(Direction& d);
  static void FinishIfDrained(Direction& d);
  bool Over() const;

  Direction up_;    // a -> b
  Direction down_;  // b -> a
  bool end_when_b_ends_;
  bool failed_ = false;
};

// Relays until both directions have ended, a peer fails, or stop. Both
// descriptors must be non-blocking; neither is closed here.
RelayResult Relay(int a, int b, const RelayOptions& options);

// Makes `fd` non-blocking.
absl::Status SetNonBlocking(int fd);

// Writes all of `data` to the non-blocking `fd`, waiting at most `timeout_ms`
// in total; returns false on a timeout, an error or stop.
bool SendAll(int fd, absl::string_view data, int stop_fd, int timeout_ms);

// Milliseconds on the monotonic clock.
int64_t MonotonicMs();

}  // namespace np::egress

#endif  // NP_EXEC_LAUNCHER_EGRESS_RELAY_H_
