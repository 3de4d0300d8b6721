#include "launcher/egress/session.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/credential_request.h"
#include "core/errors.h"
#include "core/paths.h"

namespace np::egress {
namespace {

constexpr char kSocketName[] = "egress.sock";
constexpr char kCaFileName[] = "session-ca.pem";
constexpr char kBundleFileName[] = "ca-bundle.pem";

std::string RealPath(const std::string& path) {
  char real[PATH_MAX];
  return realpath(path.c_str(), real) != nullptr ? std::string(real) : std::string();
}

// $XDG_RUNTIME_DIR when it is safe to hold the directory (see session.h),
// else /tmp.
std::string BaseDir(const std::string& runtime_dir,
                    const std::vector<std::string>& writable_roots) {
  const std::string real =
      runtime_dir.empty() || runtime_dir.front() != '/' ? std::string() : RealPath(runtime_dir);
  struct stat st;
  if (real.empty() || stat(real.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
      st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return "/tmp";
  }
  for (const std::string& root : writable_roots) {
    const std::string real_root = RealPath(root);
    if (real_root.empty() || IsInside(real, real_root)) return "/tmp";
  }
  return real;
}

// Writes `text` to a new file `name` in the directory (never through a link
// or over something there), readable by the sandbox's user whatever it is.
absl::Status WriteNewFile(const std::string& dir, const char* name, const std::string& text) {
  const std::string path = absl::StrCat(dir, "/", name);
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  bool ok = fd >= 0 && fchmod(fd, 0644) == 0;
  for (size_t done = 0; ok && done < text.size();) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<size_t>(n);
  }
  const int err = errno;
  if (fd >= 0) ok = close(fd) == 0 && ok;
  if (ok) return absl::OkStatus();
  unlink(path.c_str());
  return MakeError(absl::StatusCode::kFailedPrecondition, "egress-socket-dir-failed",
                   absl::StrCat("cannot write ", path, ": ", strerror(err)), {{"path", path}});
}

// In the forked watchdog: async-signal-safe calls only (np-exec may already
// run threads of its own).
[[noreturn]] void Watch(int fd, const char* socket_path, const char* ca_path,
                        const char* bundle_path, const char* dir) {
  // Nothing of np-exec's: a caller that waits for EOF on np-exec's stdout or
  // stderr must not wait for the watchdog too.
  if (fd != 3) {
    dup2(fd, 3);
    fd = 3;
  }
  close_range(0, 2, 0);
  close_range(4, ~0U, 0);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE, SIGTSTP}) {
    signal(sig, SIG_IGN);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  setsid();
  char word = 0;
  ssize_t n;
  do {
    n = read(fd, &word, 1);
  } while (n < 0 && errno == EINTR);
  // A byte: np-exec removed both itself. EOF (np-exec died): remove them.
  if (n != 1) {
    unlink(socket_path);
    unlink(ca_path);
    unlink(bundle_path);
    rmdir(dir);
  }
  _exit(0);
}

}  // namespace

absl::StatusOr<std::unique_ptr<EgressSession>> EgressSession::Create(
    const std::string& runtime_dir, const std::vector<std::string>& writable_roots) {
  std::string templ = absl::StrCat(BaseDir(runtime_dir, writable_roots), "/np-exec-egress-XXXXXX");
  std::vector<char> buffer(templ.begin(), templ.end());
  buffer.push_back('\0');
  if (mkdtemp(buffer.data()) == nullptr) {
    return MakeError(
        absl::StatusCode::kFailedPrecondition, "egress-socket-dir-failed",
        absl::StrCat("cannot make the egress proxy's directory ", templ, ": ", strerror(errno)),
        {{"path", templ}});
  }
  const std::string dir(buffer.data());
  const std::string socket_path = absl::StrCat(dir, "/", kSocketName);
  const std::string ca_path = absl::StrCat(dir, "/", kCaFileName);
  const std::string bundle_path = absl::StrCat(dir, "/", kBundleFileName);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    const int err = errno;
    rmdir(dir.c_str());
    return MakeError(absl::StatusCode::kInternal, "egress-watchdog-failed",
                     absl::StrCat("pipe: ", strerror(err)));
  }
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[1]);
    Watch(fds[0], socket_path.c_str(), ca_path.c_str(), bundle_path.c_str(), dir.c_str());
  }
  close(fds[0]);
  if (pid < 0) {
    const int err = errno;
    close(fds[1]);
    rmdir(dir.c_str());
    return MakeError(absl::StatusCode::kInternal, "egress-watchdog-failed",
                     absl::StrCat("fork: ", strerror(err)));
  }
  return std::unique_ptr<EgressSession>(new EgressSession(dir, fds[1], pid));
}

EgressSession::EgressSession(std::string dir, int watchdog_fd, pid_t watchdog)
    : dir_(std::move(dir)),
      socket_path_(absl::StrCat(dir_, "/", kSocketName)),
      watchdog_fd_(watchdog_fd),
      watchdog_(watchdog) {}

void EgressSession::StopProxy() {
  if (proxy_ != nullptr) proxy_->Stop();
  proxy_.reset();
}

EgressSession::~EgressSession() {
  StopProxy();
  unlink(socket_path_.c_str());
  unlink(absl::StrCat(dir_, "/", kCaFileName).c_str());
  unlink(absl::StrCat(dir_, "/", kBundleFileName).c_str());
  rmdir(dir_.c_str());
  const char word = 1;
  (void)!write(watchdog_fd_, &word, 1);
  close(watchdog_fd_);
  int status;
  while (waitpid(watchdog_, &status, 0) < 0 && errno == EINTR) {
  }
}

absl::Status EgressSession::ServeCredentials(
    const std::vector<Credential>& credentials,
    const std::function<std::string(const std::string&)>& lookup,
    const std::string& system_roots_pem) {
  if (credentials.empty()) return absl::OkStatus();
  std::vector<CredentialRoute> routes;
  for (const Credential& credential : credentials) {
    std::string value = lookup(credential.env);
    if (value.empty()) {
      return MakeError(
          absl::StatusCode::kFailedPrecondition, "egress-credential-unset",
          absl::StrCat("isolation.container.credentials names ", credential.env, " for ",
                       credential.host, ", but ", credential.env,
                       " is not set (or empty) in np-exec's environment; set it, or remove the "
                       "credential to run without it"),
          {{"env", credential.env}, {"host", credential.host}});
    }
    // A line end or control character would split the header it goes into.
    if (!IsHeaderFieldValue(value)) {
      return MakeError(
          absl::StatusCode::kFailedPrecondition, "egress-credential-unset",
          absl::StrCat(credential.env,
                       " holds a line end or a control character (a trailing "
                       "newline from a file?); np-exec puts it into a header only as a single "
                       "line: remove it"),
          {{"env", credential.env}, {"host", credential.host}});
    }
    routes.push_back({credential, std::move(value)});
  }
  absl::StatusOr<std::shared_ptr<CredentialRoutes>> made = MakeCredentialRoutes(std::move(routes));
  if (!made.ok()) return made.status();
  const std::string ca_pem = (*made)->ca->CertificatePem();
  std::string bundle = system_roots_pem;
  if (!bundle.empty() && bundle.back() != '\n') bundle.push_back('\n');
  absl::Status written = WriteNewFile(dir_, kCaFileName, ca_pem);
  if (written.ok()) written = WriteNewFile(dir_, kBundleFileName, bundle + ca_pem);
  if (!written.ok()) return written;
  credentials_ = *std::move(made);
  return absl::OkStatus();
}

std::string EgressSession::ca_path() const {
  return credentials_ != nullptr ? absl::StrCat(dir_, "/", kCaFileName) : std::string();
}

std::string EgressSession::bundle_path() const {
  return credentials_ != nullptr ? absl::StrCat(dir_, "/", kBundleFileName) : std::string();
}

Companion EgressSession::ProxyCompanion(Allowlist allowlist,
                                        std::function<void(const EgressRecord&)> on_record) {
  Companion companion;
  companion.start = [this, allowlist = std::move(allowlist),
                     on_record = std::move(on_record)]() -> absl::Status {
    ProxyOptions options;
    options.socket_path = socket_path_;
    // The directory (0700, this user's) keeps everyone else on the host out;
    // inside, the sandbox's user may be another uid (`user: "image"`), and
    // only this one sandbox has the socket mounted.
    options.socket_mode = 0666;
    options.allowlist = allowlist;
    options.on_record = on_record;
    options.credentials = credentials_;
    absl::StatusOr<std::unique_ptr<EgressProxy>> proxy = EgressProxy::Start(std::move(options));
    if (!proxy.ok()) {
      start_error_ = proxy.status();
      return start_error_;
    }
    proxy_ = *std::move(proxy);
    return absl::OkStatus();
  };
  companion.stop = [this] { StopProxy(); };
  return companion;
}

}  // namespace np::egress
