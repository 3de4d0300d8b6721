#include "launcher/warm/holder.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "launcher/audit_log.h"
#include "launcher/state/nofollow_path.h"
#include "launcher/warm/registry.h"

namespace np::warm {
namespace {

constexpr int kRequestTimeoutMs = 10000;
// The longest the holder waits for its keeper (or the idle time, when that is
// longer): a runtime that hangs before starting it (a container left
// "Created") is given up rather than held forever.
constexpr long long kKeeperStartMs = 120000;

long long NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// What the dispatcher thread and the holder's main thread share.
struct Holding {
  int idle_ms = 0;
  int slot_dir = -1;
  int rendezvous_listener = -1;
  int control_listener = -1;
  int ended = -1;  // An eventfd: the sandbox's runtime has exited.
  std::string rendezvous_dir;
  // The project the sandbox serves, opened (for the exit line of a killed spawn).
  int project_fd = -1;
  std::string project_root;
  std::mutex mutex;
  absl::Status run_error;  // Why the sandbox did not come up, once it ended.
};

// Closes every descriptor the caller of np-exec left open for it (the ones
// without close-on-exec: np-exec opens its own with it), so the holder keeps
// no pipe or terminal of the spawn that started it.
void CloseInherited() {
  DIR* fds = opendir("/proc/self/fd");
  if (fds == nullptr) return;
  std::vector<int> inherited;
  while (dirent* entry = readdir(fds)) {
    int fd = -1;
    if (!absl::SimpleAtoi(entry->d_name, &fd) || fd < 3 || fd == dirfd(fds)) continue;
    const int flags = fcntl(fd, F_GETFD);
    if (flags >= 0 && (flags & FD_CLOEXEC) == 0) inherited.push_back(fd);
  }
  closedir(fds);
  for (int fd : inherited) close(fd);
  const int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd < 3 && null >= 0; ++fd) dup2(null, fd);
  if (null > 2) close(null);
}

// What the runtime said on stderr when the sandbox did not come up (its first
// bytes), for the spawn that waited for it.
std::string RuntimeLog(int slot_dir) {
  SmallFile log = ReadSmallFileAt(slot_dir, std::string(kRuntimeLog).c_str(), 2048);
  return log.error == 0 ? log.text.substr(0, 2048) : "";
}

absl::Status NeverCameUp(int slot_dir) {
  std::string said(absl::StripAsciiWhitespace(RuntimeLog(slot_dir)));
  return MakeError(absl::StatusCode::kUnavailable, "isolation-container-unavailable",
                   absl::StrCat("the warm sandbox's runtime ended before its keeper started; the "
                                "program did not run, and np-exec does not fall back",
                                said.empty() ? "" : absl::StrCat(". The runtime said: ", said)));
}

nlohmann::json StatusJson(const absl::Status& status) {
  return {{"code", ErrorCode(status)},
          {"message", std::string(status.message())},
          {"details", ErrorDetails(status)}};
}

// A client's request, handed to the keeper with the client's connection;
// its run line kept in `record` for as long as it runs.
bool Dispatch(int keeper, int client, bool* stop, nlohmann::json* record) {
  absl::StatusOr<Message> message = Receive(client, kRequestTimeoutMs);
  if (!message.ok()) return false;
  const std::string op = message->body.value("op", "");
  if (op == "stop") {
    *stop = true;
    return false;
  }
  if (op != "spawn" || message->fds.size() != 3) return false;
  *record = message->body.value("record", nlohmann::json());
  record->emplace("started_ms", NowMs());
  std::vector<int> fds = {client};
  for (const OwnedFd& fd : message->fds) fds.push_back(fd.get());
  return Send(keeper, {{"op", "spawn"}, {"spawn", message->body["spawn"]}}, fds).ok();
}

// A spawn whose np-exec was killed gets its exit line from the holder, as a
// cold spawn's gets it from its watchdog: np_exec "killed", no exit status;
// through the project folder the holder holds open.
void WriteKilledLine(const Holding& holding, nlohmann::json record) {
  if (!record.is_object() || holding.project_root.empty()) return;
  const long long started = record.value("started_ms", NowMs());
  record.erase("started_ms");
  record.erase("decision");
  record["event"] = "exit";
  record["exit_status"] = nullptr;
  record["np_exec"] = "killed";
  record["duration_ms"] = NowMs() - started;
  (void)AppendAuditAt(holding.project_fd, holding.project_root, std::move(record));
}

// Spawns that connected but were never handed over: told why the sandbox
// did not come up, when it did not (else they find it gone and go on).
void AnswerWaiting(Holding& holding, bool came_up) {
  std::lock_guard<std::mutex> guard(holding.mutex);
  if (holding.run_error.ok() && !came_up) holding.run_error = NeverCameUp(holding.slot_dir);
  if (holding.run_error.ok()) return;
  for (;;) {
    pollfd pending{holding.control_listener, POLLIN, 0};
    if (poll(&pending, 1, 0) <= 0) break;
    OwnedFd client(accept4(holding.control_listener, nullptr, nullptr, SOCK_CLOEXEC));
    if (client.get() < 0) break;
    (void)Receive(client.get(), 1000);
    (void)Send(client.get(), {{"error", StatusJson(holding.run_error)}});
  }
}

// How long the dispatcher waits: for the keeper, until `start_deadline`; in
// an idle sandbox, the idle time; during a spawn, without limit.
int WaitMs(bool has_keeper, bool busy, long long start_deadline, int idle_ms) {
  if (!has_keeper) return static_cast<int>(std::max<long long>(0, start_deadline - NowMs()));
  return busy ? -1 : idle_ms;
}

// Until the sandbox ends: the keeper's rendezvous, then one spawn at a time,
// the idle time, `warm --stop`.
void Dispatcher(Holding& holding) {
  OwnedFd keeper;
  bool busy = false;
  bool stop = false;
  nlohmann::json record;  // The run line of the spawn in progress.
  OwnedFd idle_lock(
      openat(holding.slot_dir, std::string(kSlotLock).c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC));
  const long long start_deadline = NowMs() + std::max<long long>(kKeeperStartMs, holding.idle_ms);
  bool gave_up = false;
  for (;;) {
    pollfd watched[3] = {{holding.ended, POLLIN, 0}, {-1, POLLIN, 0}, {-1, POLLIN, 0}};
    if (keeper.get() < 0) {
      watched[1].fd = holding.rendezvous_listener;
    } else {
      watched[1].fd = keeper.get();
      if (!busy) watched[2].fd = holding.control_listener;
    }
    const int ready =
        poll(watched, 3, WaitMs(keeper.get() >= 0, busy, start_deadline, holding.idle_ms));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0 || watched[0].revents != 0) break;
    // No keeper by its deadline: given up. Idle for the idle time: ends
    // unless a client has just claimed it.
    if (ready == 0 && (gave_up = keeper.get() < 0)) break;
    if (ready == 0) {
      if (idle_lock.get() >= 0 && flock(idle_lock.get(), LOCK_EX | LOCK_NB) == 0) break;
      continue;
    }
    if (keeper.get() < 0 && watched[1].revents != 0) {
      keeper = OwnedFd(accept4(holding.rendezvous_listener, nullptr, nullptr, SOCK_CLOEXEC));
      // Nothing else in the sandbox can reach the channel by a path from now on.
      RemoveRendezvousDir(holding.rendezvous_dir);
      continue;
    }
    if (keeper.get() >= 0 && watched[1].revents != 0) {
      absl::StatusOr<Message> message = Receive(keeper.get(), kRequestTimeoutMs);
      if (!message.ok()) break;  // The keeper ended: so does the sandbox.
      if (message->body.value("op", "") == "done") {
        busy = false;
        if (message->body.value("abandoned", false)) WriteKilledLine(holding, record);
        record = nullptr;
      }
      if (!busy && stop) break;
      continue;
    }
    if (watched[2].revents != 0) {
      OwnedFd client(accept4(holding.control_listener, nullptr, nullptr, SOCK_CLOEXEC));
      if (client.get() < 0) continue;
      busy = Dispatch(keeper.get(), client.get(), &stop, &record);
      if (!busy && stop) break;
    }
  }
  unlinkat(holding.slot_dir, std::string(kControlSocket).c_str(), 0);
  if (keeper.get() >= 0) (void)Send(keeper.get(), {{"op", "exit"}});
  AnswerWaiting(holding, /*came_up=*/keeper.get() >= 0);
  // No keeper to tell: the run is ended as a signal ends a cold one (the
  // client told, then the driver's cleanup and SIGKILL after the grace time).
  if (gave_up) kill(getpid(), SIGTERM);
}

// The shared locks that say the holder lives (registry.h), on the slot's
// info.json and the rendezvous directory's lock, of its own: where flock is a
// POSIX lock (NFS) the ones it inherited are not its. Held until it exits.
std::array<OwnedFd, 2> TakeLivenessLocks(const HolderStart& start) {
  std::array<OwnedFd, 2> locks = {
      OwnedFd(openat(start.slot.slot.dir.get(), std::string(kSlotInfo).c_str(),
                     O_RDONLY | O_NOFOLLOW | O_CLOEXEC)),
      OwnedFd(open(RendezvousLockPath(start.spawn.plan.warm.rendezvous_dir).c_str(),
                   O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC))};
  for (const OwnedFd& lock : locks) {
    if (lock.get() >= 0) flock(lock.get(), LOCK_SH | LOCK_NB);
  }
  return locks;
}

// The holder's body, in the forked process: never returns.
[[noreturn]] void Hold(HolderStart& start) {
  CloseInherited();
  const std::array<OwnedFd, 2> liveness = TakeLivenessLocks(start);
  // The runtime's stderr, read back if the sandbox does not come up.
  const int log = openat(start.slot.slot.dir.get(), std::string(kRuntimeLog).c_str(),
                         O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (log >= 0) {
    dup2(log, 2);
    close(log);
  }
  const WrappedSpawn& spawn = start.spawn;
  absl::StatusOr<SpawnPlan> run_plan =
      WatchSandbox(spawn, start.lease, start.host, start.run_record);
  Holding holding;
  holding.idle_ms = spawn.plan.warm.idle_seconds * 1000;
  holding.slot_dir = start.slot.slot.dir.get();
  holding.rendezvous_listener = start.rendezvous.get();
  holding.control_listener = start.slot.listener.get();
  holding.rendezvous_dir = spawn.plan.warm.rendezvous_dir;
  holding.project_fd = spawn.settings.project.fd();
  holding.project_root = spawn.settings.project_root;
  OwnedFd ended(eventfd(0, EFD_CLOEXEC));
  holding.ended = ended.get();
  if (!run_plan.ok()) {
    holding.run_error = run_plan.status();
    uint64_t one = 1;
    (void)!write(ended.get(), &one, sizeof(one));
    Dispatcher(holding);
  } else {
    // The dispatcher takes no signal: the supervision below forwards them.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    std::thread dispatcher([&holding] { Dispatcher(holding); });
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    absl::StatusOr<RunOutcome> ran = spawn.driver.Run(*run_plan, spawn.endpoint, start.host, {});
    {
      std::lock_guard<std::mutex> guard(holding.mutex);
      if (!ran.ok()) holding.run_error = ran.status();
    }
    uint64_t one = 1;
    (void)!write(ended.get(), &one, sizeof(one));
    dispatcher.join();
  }
  SpawnLease& lease = start.lease;
  if (lease.watchdog.has_value()) lease.watchdog->Disarm();
  lease.sandbox_pipe.Close();
  if (lease.placeholders.has_value()) lease.placeholders->Finish();
  lease.account.reset();
  RemoveRendezvousDir(holding.rendezvous_dir);
  RemoveSlot(start.warm_dir, start.slot.slot.name);
  _exit(0);
}

}  // namespace

absl::StatusOr<Slot> StartHolder(HolderStart start) {
  const pid_t first = fork();
  if (first < 0) {
    return MakeError(absl::StatusCode::kInternal, "spawn-failed",
                     absl::StrCat("fork: ", strerror(errno)));
  }
  if (first == 0) {
    // The holder outlives this spawn: a session of its own, not np-exec's child.
    setsid();
    // The spawn's claim on the slot stays np-exec's alone.
    start.slot.slot.lock.Reset();
    if (fork() != 0) _exit(0);
    Hold(start);
  }
  int status = 0;
  while (waitpid(first, &status, 0) < 0 && errno == EINTR) {
  }
  // The holder keeps them from here on (the rendezvous directory until its
  // keeper connects, even when this spawn ends first).
  if (start.lease.placeholders.has_value()) start.lease.placeholders->Abandon();
  if (start.lease.account != nullptr) start.lease.account->Abandon();
  if (start.lease.rendezvous.has_value()) start.lease.rendezvous->Abandon();
  start.rendezvous.Reset();
  start.slot.listener.Reset();
  start.slot.alive.Reset();
  absl::StatusOr<OwnedFd> connection =
      ConnectAt(start.slot.slot.dir.get(), std::string(kControlSocket));
  if (!connection.ok()) return connection.status();
  Slot slot = std::move(start.slot.slot);
  slot.connection = *std::move(connection);
  return slot;
}

}  // namespace np::warm
