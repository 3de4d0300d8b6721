#include "launcher/warm/client.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "launcher/supervise.h"
#include "launcher/warm/channel.h"

namespace np::warm {
namespace {

// The sandbox ended before the keeper started the program: nothing ran, and
// the spawn may go to another sandbox.
absl::Status Gone() {
  return MakeError(absl::StatusCode::kUnavailable, "warm-sandbox-gone",
                   "the warm sandbox ended before it started the program; nothing ran");
}

absl::Status Interrupted(int signal) {
  return MakeError(
      absl::StatusCode::kCancelled, "warm-interrupted",
      absl::StrCat("signal ", signal, " before the warm sandbox started the program; nothing ran"),
      {{"signal", signal}});
}

absl::Status Lost() {
  return MakeError(absl::StatusCode::kUnavailable, "warm-sandbox-lost",
                   "the warm sandbox ended before the program's end was reported; whether it "
                   "ran to its end is unknown");
}

// The holder's refusal: {"error": {"code", "message"}}, or a keeper's text.
absl::Status Refusal(const nlohmann::json& error) {
  if (error.is_object()) {
    const std::string code = error.value("code", "warm-sandbox-lost");
    return MakeError(absl::StatusCode::kUnavailable, code, error.value("message", code),
                     error.value("details", nlohmann::json()));
  }
  return MakeError(absl::StatusCode::kInvalidArgument, "warm-protocol",
                   absl::StrCat("the warm sandbox refused the spawn: ",
                                error.is_string() ? error.get<std::string>() : error.dump()));
}

// Blocks the forwarded signals for as long as it lives and reads them from a
// signalfd.
class ForwardedSignals {
 public:
  ForwardedSignals() {
    sigemptyset(&set_);
    for (int signal : kForwardedSignals) sigaddset(&set_, signal);
    sigaddset(&set_, SIGWINCH);
    sigprocmask(SIG_BLOCK, &set_, &old_);
    fd_ = OwnedFd(signalfd(-1, &set_, SFD_CLOEXEC | SFD_NONBLOCK));
  }
  ~ForwardedSignals() {
    fd_.Reset();
    sigprocmask(SIG_SETMASK, &old_, nullptr);
  }
  int fd() const { return fd_.get(); }

 private:
  sigset_t set_;
  sigset_t old_;
  OwnedFd fd_;
};

// How long a called-off spawn waits for the keeper to say whether it had
// started the program: an answer comes at once from a keeper that serves
// it; a sandbox still coming up reads the cancel when it does, and never
// starts the program.
constexpr int kCancelAnswerMs = 2000;

// Calls the spawn off: false when it was, or when the keeper does not say
// (it will find the cancel, or this end closed, before it starts anything);
// true when the keeper had started the program already ("started").
bool CalledOff(int connection) {
  if (!Send(connection, {{"op", "cancel"}}).ok()) return false;
  pollfd answer{connection, POLLIN, 0};
  if (poll(&answer, 1, kCancelAnswerMs) <= 0) return false;
  absl::StatusOr<Message> message = Receive(connection);
  return message.ok() && message->body.contains("started");
}

}  // namespace

bool ForwardedToWarmSpawn(int signal) {
  return signal == SIGWINCH || std::find(std::begin(kForwardedSignals), std::end(kForwardedSignals),
                                         signal) != std::end(kForwardedSignals);
}

absl::StatusOr<WarmResult> RunInSandbox(int connection, const WarmRequest& request,
                                        const nlohmann::json& record) {
  ForwardedSignals signals;
  absl::Status sent =
      Send(connection, {{"op", "spawn"}, {"spawn", WarmRequestToJson(request)}, {"record", record}},
           {0, 1, 2});
  if (!sent.ok()) return Gone();
  bool started = false;
  pollfd watched[2] = {{connection, POLLIN, 0}, {signals.fd(), POLLIN, 0}};
  for (;;) {
    if (poll(watched, signals.fd() >= 0 ? 2 : 1, -1) < 0) {
      if (errno == EINTR) continue;
      return started ? Lost() : Gone();
    }
    if (signals.fd() >= 0 && watched[1].revents != 0) {
      signalfd_siginfo info;
      while (read(signals.fd(), &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
        const int signal = static_cast<int>(info.ssi_signo);
        // Before the program started (the sandbox still coming up): the spawn
        // is called off, as a cold runtime's client gives it up, unless the
        // keeper has started it meanwhile: then the signal goes to it. A
        // resize then is dropped (the program reads the size when it starts;
        // the keeper takes any message before the start for a cancel).
        if (!started && signal == SIGWINCH) continue;
        if (!started) {
          if (!CalledOff(connection)) return Interrupted(signal);
          started = true;
        }
        (void)Send(connection, {{"op", "signal"}, {"signal", signal}});
      }
    }
    if (watched[0].revents == 0) continue;
    absl::StatusOr<Message> message = Receive(connection);
    if (!message.ok()) return started ? Lost() : Gone();
    if (message->body.contains("started")) started = true;
    if (message->body.contains("error")) return Refusal(message->body["error"]);
    if (message->body.contains("result")) return WarmResultFromJson(message->body["result"]);
  }
}

}  // namespace np::warm
