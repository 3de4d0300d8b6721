#include "launcher/egress/proxy.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "launcher/egress/proxy_connection.h"
#include "launcher/egress/relay.h"

namespace np::egress {
namespace {

absl::Status SocketError(absl::string_view code, absl::string_view what, const std::string& path) {
  return MakeError(
      absl::StatusCode::kFailedPrecondition, code,
      absl::StrCat(what, ": ", path, errno != 0 ? ": " : "", errno != 0 ? strerror(errno) : ""),
      {{"path", path}});
}

// The socket's directory is what keeps other local users out (a unix
// socket's own mode is not honoured everywhere), so it must be ours alone.
absl::Status CheckSocketDir(const std::string& socket_path) {
  const size_t slash = socket_path.rfind('/');
  if (socket_path.empty() || socket_path[0] != '/' || slash == std::string::npos ||
      slash + 1 == socket_path.size()) {
    errno = 0;
    return SocketError("egress-socket-dir-unsafe", "the socket path must be absolute", socket_path);
  }
  const std::string dir = slash == 0 ? "/" : socket_path.substr(0, slash);
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) {
    return SocketError("egress-socket-dir-unsafe", "cannot inspect the socket directory", dir);
  }
  errno = 0;
  if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
    return SocketError("egress-socket-dir-unsafe",
                       "the socket directory must be a real directory owned by this user with "
                       "mode 0700",
                       dir);
  }
  return absl::OkStatus();
}

}  // namespace

nlohmann::json EgressRecordToJson(const EgressRecord& record) {
  // Hosts come from the sandbox: keep the log valid JSON (ASCII) whatever
  // bytes they hold, since dump() throws on invalid UTF-8.
  auto ascii = [](std::string s) {
    for (char& c : s) {
      if (static_cast<unsigned char>(c) >= 0x80) c = '?';
    }
    return s;
  };
  nlohmann::json out = {{"egress",
                         {{"method", ascii(record.method)},
                          {"host", ascii(record.host)},
                          {"port", record.port},
                          {"allowed", record.allowed},
                          {"reason_code", ascii(record.reason_code)},
                          {"reason", ascii(record.reason)},
                          {"address", record.address},
                          {"bytes_up", record.bytes_up},
                          {"bytes_down", record.bytes_down},
                          {"duration_ms", record.duration_ms}}}};
  if (!record.credential_header.empty()) {
    out["egress"]["credential"] = {{"header", ascii(record.credential_header)},
                                   {"tls_terminated", record.tls_terminated},
                                   {"requests", record.requests},
                                   {"injected", record.injected}};
  }
  return out;
}

absl::StatusOr<std::unique_ptr<EgressProxy>> EgressProxy::Start(ProxyOptions options) {
  const std::string& path = options.socket_path;
  sockaddr_un address{};
  if (path.size() >= sizeof address.sun_path) {
    errno = 0;
    return SocketError(
        "egress-socket-path-too-long",
        absl::StrCat("a unix socket path must be shorter than ", sizeof address.sun_path, " bytes"),
        path);
  }
  if (absl::Status dir = CheckSocketDir(path); !dir.ok()) return dir;
  struct stat st;
  if (lstat(path.c_str(), &st) == 0) {
    errno = 0;
    return SocketError("egress-socket-exists", "something already exists at the socket path", path);
  }
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.data(), path.size());

  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return SocketError("egress-socket-failed", "socket", path);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    absl::Status error = SocketError("egress-socket-failed", "bind", path);
    close(fd);
    return error;
  }
  if (chmod(path.c_str(), options.socket_mode) != 0 || listen(fd, 128) != 0) {
    absl::Status error = SocketError("egress-socket-failed", "chmod or listen", path);
    close(fd);
    unlink(path.c_str());
    return error;
  }
  int stop[2];
  if (pipe2(stop, O_CLOEXEC | O_NONBLOCK) != 0) {
    absl::Status error = SocketError("egress-socket-failed", "pipe", path);
    close(fd);
    unlink(path.c_str());
    return error;
  }
  if (!options.resolver) options.resolver = SystemResolver();
  std::unique_ptr<EgressProxy> proxy(new EgressProxy(std::move(options), fd, stop[0], stop[1]));
  // The proxy's threads (the accept loop, and the workers it starts, which
  // inherit its mask) take no signal: process-wide signals stay for the
  // thread that waits for them (supervise.h), never discarded or acted on here.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  proxy->accept_thread_ = std::thread(&EgressProxy::AcceptLoop, proxy.get());
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return proxy;
}

EgressProxy::EgressProxy(ProxyOptions options, int listen_fd, int stop_read, int stop_write)
    : options_(std::move(options)),
      listen_fd_(listen_fd),
      stop_read_(stop_read),
      stop_write_(stop_write) {}

EgressProxy::~EgressProxy() { Stop(); }

void EgressProxy::Stop() {
  std::lock_guard<std::mutex> lock(stop_mutex_);
  if (stopped_) return;
  stopped_ = true;
  // The byte is never read: the pipe stays readable, so every poll loop that
  // watches it (the accept loop, each relay) sees it until the end.
  ssize_t ignored = write(stop_write_, "x", 1);
  (void)ignored;
  if (accept_thread_.joinable()) accept_thread_.join();
  close(listen_fd_);
  // Remove the socket only if it is still one: never whatever replaced it.
  struct stat st;
  if (lstat(options_.socket_path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) {
    unlink(options_.socket_path.c_str());
  }
  close(stop_read_);
  close(stop_write_);
}

void EgressProxy::Emit(const EgressRecord& record) {
  std::lock_guard<std::mutex> lock(record_mutex_);
  if (options_.on_record) options_.on_record(record);
}

void EgressProxy::ReapFinished(bool all) {
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (all || it->finished->load()) {
      it->thread.join();
      it = workers_.erase(it);
    } else {
      ++it;
    }
  }
}

void EgressProxy::Serve(int client) {
  const int64_t start = MonotonicMs();
  EgressRecord record;
  ConnectionContext context{
      &options_.allowlist,      &options_.resolver,          stop_read_,
      options_.head_timeout_ms, options_.connect_timeout_ms, options_.credentials.get()};
  ServeConnection(client, context, &record);
  record.duration_ms = MonotonicMs() - start;
  // Recorded before the close, so a refused client that sees its connection
  // end can rely on the audit record being there.
  Emit(record);
  close(client);
}

void EgressProxy::AcceptLoop() {
  while (true) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_read_, POLLIN, 0}};
    int ready = poll(fds, 2, -1);
    if (ready < 0 && errno != EINTR) break;
    if (fds[1].revents & POLLIN) break;
    if (!(fds[0].revents & POLLIN)) continue;
    int client = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (client < 0) {
      // Out of descriptors: back off instead of spinning on a listener that
      // stays readable.
      if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) poll(nullptr, 0, 50);
      continue;
    }
    ReapFinished(false);
    if (active_.load() >= options_.max_connections) {
      EgressRecord record;
      record.reason_code = "egress-too-many-connections";
      record.reason = absl::StrCat("more than ", options_.max_connections, " connections at once");
      SendError(client, 503, record.reason_code, record.reason, stop_read_);
      close(client);
      Emit(record);
      continue;
    }
    ++active_;
    auto finished = std::make_shared<std::atomic<bool>>(false);
    workers_.push_back({std::thread([this, client, finished] {
                          Serve(client);
                          --active_;
                          finished->store(true);
                        }),
                        finished});
  }
  ReapFinished(true);
}

}  // namespace np::egress
