#include "launcher/warm/client.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <iterator>
#include <optional>

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

// The spawn as np-exec sees it: whether the keeper started the program, and
// the signal that is calling it off before then (0: none).
struct Progress {
  bool started = false;
  int calling_off = 0;
};

// One signal np-exec received; true when np-exec gives up waiting. Once the
// program runs, the signal goes to it. Before (the sandbox still coming
// up), the first terminating one calls the spawn off, as a cold runtime's
// client gives it up: the keeper answers "cancelled", or "started" if it
// started the program first (the signal then goes to it); a second one gives
// up at once. A resize then is dropped: the program reads the size when it
// starts, and the keeper takes any message before the start for a cancel.
bool OnSignal(int connection, int signal, Progress& progress) {
  if (progress.started) {
    (void)Send(connection, {{"op", "signal"}, {"signal", signal}});
    return false;
  }
  if (signal == SIGWINCH) return false;
  if (progress.calling_off != 0) return true;
  progress.calling_off = signal;
  // Sent whatever the keeper did already: what it said stays readable.
  (void)Send(connection, {{"op", "cancel"}});
  return false;
}

// What the keeper's or holder's message means for the spawn: the result, a
// refusal, nothing ran, or nullopt to read on.
std::optional<absl::StatusOr<WarmResult>> OnMessage(int connection, const nlohmann::json& body,
                                                    Progress& progress) {
  if (body.contains("started")) {
    progress.started = true;
    if (progress.calling_off != 0) {
      (void)Send(connection, {{"op", "signal"}, {"signal", progress.calling_off}});
      progress.calling_off = 0;
    }
  }
  const bool called_off = progress.calling_off != 0 && !progress.started;
  using Done = absl::StatusOr<WarmResult>;
  if (body.contains("cancelled")) {
    return Done(called_off ? Interrupted(progress.calling_off) : Gone());
  }
  if (body.contains("error")) {
    return Done(called_off ? Interrupted(progress.calling_off) : Refusal(body["error"]));
  }
  if (body.contains("result")) return Done(WarmResultFromJson(body["result"]));
  return std::nullopt;
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
  Progress progress;
  pollfd watched[2] = {{connection, POLLIN, 0}, {signals.fd(), POLLIN, 0}};
  for (;;) {
    if (poll(watched, signals.fd() >= 0 ? 2 : 1, -1) < 0) {
      if (errno == EINTR) continue;
      return progress.started ? Lost() : Gone();
    }
    if (signals.fd() >= 0 && watched[1].revents != 0) {
      signalfd_siginfo info;
      while (read(signals.fd(), &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
        if (OnSignal(connection, static_cast<int>(info.ssi_signo), progress)) {
          return Interrupted(progress.calling_off);
        }
      }
    }
    if (watched[0].revents == 0) continue;
    absl::StatusOr<Message> message = Receive(connection);
    if (!message.ok()) {
      if (progress.started) return Lost();
      return progress.calling_off != 0 ? Interrupted(progress.calling_off) : Gone();
    }
    std::optional<absl::StatusOr<WarmResult>> done = OnMessage(connection, message->body, progress);
    if (done.has_value()) return *std::move(done);
  }
}

}  // namespace np::warm
