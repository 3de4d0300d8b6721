#include "tests/support/process.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

extern char** environ;

namespace np::testing {
namespace {

long long NowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

std::vector<char*> Pointers(const std::vector<std::string>& strings) {
  std::vector<char*> p;
  for (const std::string& s : strings) p.push_back(const_cast<char*>(s.c_str()));
  p.push_back(nullptr);
  return p;
}

// Everything the child needs, built before fork: the test runner and the
// load tests spawn from many threads at once, and a child that allocates
// between fork and exec can deadlock on an allocator lock another thread
// held at the fork (ASan's allocator does, under load).
class PreparedExec {
 public:
  PreparedExec(const std::vector<std::string>& argv, const RunOptions& options)
      : path_(argv[0]), args_(argv), env_(options.env), options_(options) {
    if (!options.argv0.empty()) args_[0] = options.argv0;
    arg_pointers_ = Pointers(args_);
    env_pointers_ = Pointers(env_);
  }

  // In the child: async-signal-safe calls only. Resets what a test runner
  // may have changed, then execs.
  [[noreturn]] void Exec() const {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD}) signal(sig, SIG_DFL);
    if (options_.new_session) setsid();
    if (!options_.cwd.empty() && chdir(options_.cwd.c_str()) != 0) _exit(121);
    execve(path_.c_str(), arg_pointers_.data(), env_pointers_.data());
    _exit(errno == ENOENT ? 127 : 126);
  }

 private:
  std::string path_;
  std::vector<std::string> args_;
  std::vector<std::string> env_;
  const RunOptions& options_;
  std::vector<char*> arg_pointers_;
  std::vector<char*> env_pointers_;
};

// What a child that outlived its timeout was doing, for the failure message:
// which program it was (the test binary itself: it never reached exec) and
// where in the kernel it waited.
std::string DescribeStuck(pid_t pid, int timeout_ms) {
  const std::string proc = "/proc/" + std::to_string(pid);
  char exe[4096];
  ssize_t n = readlink((proc + "/exe").c_str(), exe, sizeof(exe) - 1);
  std::string program = n > 0 ? std::string(exe, static_cast<size_t>(n)) : "?";
  std::string wchan = "?";
  if (FILE* f = fopen((proc + "/wchan").c_str(), "r")) {
    char buffer[256];
    size_t got = fread(buffer, 1, sizeof(buffer) - 1, f);
    wchan.assign(buffer, got);
    fclose(f);
  }
  return "\n[RunProcess: timed out after " + std::to_string(timeout_ms) + " ms; pid " +
         std::to_string(pid) + " was running " + program + ", waiting in " + wchan + "]\n";
}

std::string EnvOr(const char* name, const char* fallback) {
  const char* value = getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

}  // namespace

std::string NpExecBin() { return EnvOr("NP_EXEC_BIN", NP_DEFAULT_EXEC_BIN); }
std::string SourceDir() { return EnvOr("NP_SOURCE_DIR", NP_DEFAULT_SOURCE_DIR); }
std::string BinaryDir() { return EnvOr("NP_BINARY_DIR", NP_DEFAULT_BINARY_DIR); }

void SetEnv(std::vector<std::string>& env, const std::string& name, const std::string& value) {
  const std::string prefix = name + "=";
  for (std::string& entry : env) {
    if (entry.compare(0, prefix.size(), prefix) == 0) {
      entry = prefix + value;
      return;
    }
  }
  env.push_back(prefix + value);
}

namespace {

// A directory of this test process's own (mkdtemp under TMPDIR, else /tmp,
// mode 0700), removed with everything in it when the object goes; "" when it
// could not be made.
struct ProcessDir {
  explicit ProcessDir(const char* prefix) {
    const char* tmp = getenv("TMPDIR");
    std::string pattern =
        std::string(tmp != nullptr && tmp[0] == '/' ? tmp : "/tmp") + "/" + prefix + ".XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) path = pattern;
  }
  ~ProcessDir() {
    std::error_code ignored;
    if (!path.empty()) std::filesystem::remove_all(path, ignored);
  }
  std::string path;
};

}  // namespace

std::string TestStateHome() {
  // One operator state store for this test process, so trust records and the
  // ratchet never touch the real HOME and never leak between test runs.
  static ProcessDir* home = new ProcessDir("np-exec-test-state");  // Removed at exit below.
  static const bool registered = [] {
    atexit([] { delete home; });
    return true;
  }();
  (void)registered;
  return home->path;
}

// NP_E2E_WARM=1 (scripts/test.sh's warm step): an operator file of this
// test process's own that turns warm sandboxes on for every project
// (isolation.container.warm), so the whole suite runs its container spawns
// warm; "" otherwise.
std::string WarmOperatorConfigHome() {
  const char* warm = getenv("NP_E2E_WARM");
  if (warm == nullptr || std::string(warm) != "1") return "";
  // A directory of its own, readable by everyone (mkdtemp makes it 0700): a
  // test that runs np-exec as another user (NonRootCallerTest) gives it this
  // operator file too, as /etc would be.
  static ProcessDir home("np-exec-test-operator");
  static const bool written = [] {
    if (home.path.empty()) return false;
    chmod(home.path.c_str(), 0755);
    std::filesystem::create_directories(home.path + "/nubos-pilot");
    std::ofstream(home.path + "/nubos-pilot/config.json")
        << R"({"isolation": {"container": {"warm": {"idle_seconds": 5}}}})";
    return true;
  }();
  (void)written;
  return home.path;
}

std::vector<std::string> BaseEnv(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  env.push_back("XDG_STATE_HOME=" + TestStateHome());
  const std::string operator_home = WarmOperatorConfigHome();
  if (!operator_home.empty()) env.push_back("XDG_CONFIG_HOME=" + operator_home);
  // The sanitizer settings too, so an instrumented np-exec under test keeps
  // the options scripts/sanitize.sh chose.
  for (const char* name : {"PATH", "HOME", "LANG", "TMPDIR", "DOCKER_HOST", "CI", "ASAN_OPTIONS",
                           "UBSAN_OPTIONS", "LSAN_OPTIONS"}) {
    const char* value = getenv(name);
    if (value != nullptr) env.push_back(std::string(name) + "=" + value);
  }
  for (const std::string& entry : extra) {
    size_t eq = entry.find('=');
    SetEnv(env, entry.substr(0, eq), eq == std::string::npos ? "" : entry.substr(eq + 1));
  }
  return env;
}

RunResult RunProcess(const std::vector<std::string>& argv, const RunOptions& options) {
  RunResult result;
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    return result;
  }
  const PreparedExec exec(argv, options);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    exec.Exec();
  }
  close(in[0]);
  close(out[1]);
  close(err[1]);
  // Feed stdin without blocking the reads: the child may not read it all.
  fcntl(in[1], F_SETFL, O_NONBLOCK);
  size_t written = 0;
  if (options.stdin_data.empty()) {
    close(in[1]);
    in[1] = -1;
  }
  const long long deadline = NowMs() + options.timeout_ms;
  bool out_open = true, err_open = true;
  char buffer[65536];
  while (out_open || err_open) {
    long long left = deadline - NowMs();
    if (left <= 0) {
      result.timed_out = true;
      result.err += DescribeStuck(pid, options.timeout_ms);
      kill(pid, SIGKILL);
      break;
    }
    pollfd fds[3] = {{out_open ? out[0] : -1, POLLIN, 0},
                     {err_open ? err[0] : -1, POLLIN, 0},
                     {in[1], POLLOUT, 0}};
    if (poll(fds, 3, static_cast<int>(std::min<long long>(left, 1000))) < 0 && errno != EINTR) {
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
        ssize_t n = read(fds[i].fd, buffer, sizeof(buffer));
        if (n > 0) {
          (i == 0 ? result.out : result.err).append(buffer, static_cast<size_t>(n));
        } else if (n == 0 || errno != EINTR) {
          (i == 0 ? out_open : err_open) = false;
        }
      }
    }
    if (in[1] >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t n =
          write(in[1], options.stdin_data.data() + written, options.stdin_data.size() - written);
      if (n > 0) written += static_cast<size_t>(n);
      if (n < 0 && errno != EAGAIN && errno != EINTR) written = options.stdin_data.size();
      if (written == options.stdin_data.size()) {
        close(in[1]);
        in[1] = -1;
      }
    }
  }
  if (in[1] >= 0) close(in[1]);
  close(out[0]);
  close(err[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
  return result;
}

pid_t StartProcess(const std::vector<std::string>& argv, const RunOptions& options,
                   const std::string& out_path, const std::string& err_path) {
  const PreparedExec exec(argv, options);
  pid_t pid = fork();
  if (pid == 0) {
    int in = open("/dev/null", O_RDONLY);
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    exec.Exec();
  }
  return pid;
}

int WaitProcess(pid_t pid, int timeout_ms) {
  const long long deadline = NowMs() + timeout_ms;
  int status = 0;
  for (;;) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
    if (done < 0 && errno != EINTR) return -1;
    if (NowMs() >= deadline) return -1;
    usleep(5000);
  }
}

}  // namespace np::testing
