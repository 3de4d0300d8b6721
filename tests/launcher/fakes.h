// Fakes for the launcher and hostile-input tests of the built np-exec: a
// container engine answering canned HTTP on a Unix socket, sockets that
// refuse or never answer, runtime and program scripts that record their argv
// and environment, and a directory of the few host tools a test's PATH may
// hold. Test-only; opens sockets and writes files.
#ifndef NP_EXEC_TESTS_LAUNCHER_FAKES_H_
#define NP_EXEC_TESTS_LAUNCHER_FAKES_H_

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "nlohmann/json.hpp"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace np::testing {

// Serves the Docker Engine API subset np-exec uses, on a Unix socket, from a
// thread: GET /_ping and /version, GET /images/NAME/json (200 or 404),
// GET /containers/json ([]), DELETE /containers/NAME (204) and
// POST /containers/NAME/kill (204). Everything else is 404.
class FakeEngine {
 public:
  explicit FakeEngine(std::string socket_path);
  ~FakeEngine();
  FakeEngine(const FakeEngine&) = delete;
  FakeEngine& operator=(const FakeEngine&) = delete;

  const std::string& socket_path() const { return socket_path_; }
  // "unix://" + socket_path(), for DOCKER_HOST.
  std::string docker_host() const { return "unix://" + socket_path_; }
  void set_image_present(bool present) { image_present_ = present; }
  // The DockerRootDir GET /info reports ("" : /info is 404).
  void set_root_dir(const std::string& dir) {
    std::lock_guard<std::mutex> lock(mutex_);
    root_dir_ = dir;
  }
  // Request lines seen so far ("GET /version").
  std::vector<std::string> requests();

 private:
  void Serve();
  void Answer(int fd);

  std::string socket_path_;
  int listen_fd_ = -1;
  int stop_pipe_[2] = {-1, -1};
  std::atomic<bool> image_present_{true};
  std::mutex mutex_;
  std::vector<std::string> requests_;
  std::string root_dir_;
  std::thread thread_;
};

// A socket file nobody listens on: connect() gets ECONNREFUSED.
void MakeRefusingSocket(const std::string& path);

// A socket that accepts connections (the kernel's backlog does) and never
// answers: a request to it times out.
class SilentSocket {
 public:
  explicit SilentSocket(const std::string& path);
  ~SilentSocket();
  SilentSocket(const SilentSocket&) = delete;
  SilentSocket& operator=(const SilentSocket&) = delete;

 private:
  int fd_ = -1;
};

// Writes an executable file (mode 0755), creating parents.
void WriteExecutable(const std::string& path, const std::string& content);

// A fake `docker` or `podman` client at DIR/NAME. Each invocation appends its
// argv to DIR/NAME.calls (one line per call, arguments separated by spaces,
// for counting) and writes its arguments NUL-separated to DIR/NAME.argv and
// its environment (`env -0`) to DIR/NAME.env. `version` prints `version_out`
// and exits `version_exit`; `image inspect` exits `version_exit` too; `run` prints
// "fake-run-output", says "fake-run-stderr" on stderr and exits `run_exit`;
// anything else exits 0.
struct FakeRuntimeOptions {
  std::string version_out = "99.0-fake";
  int version_exit = 0;
  int run_exit = 0;
  std::string run_stderr = "fake-run-stderr";
};
std::string WriteFakeRuntime(const std::string& dir, const std::string& name,
                             const FakeRuntimeOptions& options = {});

// A program that must never run: it creates `sentinel` and exits 0.
std::string WriteSentinelProgram(const std::string& path, const std::string& sentinel);

// DIR with symlinks to /usr/bin's NAMES (sh, env, cat, ...), for a PATH that
// holds no container runtime. Returns DIR.
std::string MakeToolsDir(const std::string& dir, const std::vector<std::string>& names);

// Splits a NUL-separated file (a fake's .argv or .env).
std::vector<std::string> ReadNulSeparated(const std::string& path);

// The JSON error envelope on the last non-empty line of np-exec's stderr
// (NP_EXEC_ERROR_FORMAT=json, or a verb's --json); null when that line is not
// JSON.
nlohmann::json LastEnvelope(const std::string& err);

// The code of the plain error line "np-exec: error: <message> (<code>)" on
// the last non-empty line of stderr (the default format), or "".
std::string TextErrorCodeOf(const std::string& err);

// The code of the error on the last non-empty line of stderr, in either
// format (TextErrorCodeOf, else the envelope's "code"), or "" when there is
// none.
std::string ErrorCodeOf(const std::string& err);

// Parses stdout as JSON (null when it is not).
nlohmann::json ParseJson(const std::string& out);

// Non-empty lines of a file (the audit log), each parsed as JSON.
std::vector<nlohmann::json> ReadJsonLines(const std::string& path);

// A controlled environment: PATH as given, HOME and XDG_CONFIG_HOME inside
// `scratch` (so no operator file of the machine is read), DOCKER_HOST as given
// (never the machine's daemon: empty means a socket that does not exist),
// LANG=C.UTF-8.
std::vector<std::string> IsolatedEnv(const std::string& scratch, const std::string& path,
                                     const std::string& docker_host);

// True when running as root (some tests drop to nobody with setpriv).
bool IsRoot();

// Prepends `setpriv` to drop to uid/gid 65534 with no supplementary groups.
std::vector<std::string> AsNobody(const std::vector<std::string>& argv);

// One test's world: a temporary directory holding a project (proj/, with
// .nubos-pilot/), a directory for fake runtimes (fakes/), a directory of host
// tools without any container runtime (tools/), and where the sentinel program
// would leave its mark.
class Lab {
 public:
  Lab();
  const TempDir& tmp() const { return tmp_; }
  std::string project() const { return tmp_.Path("proj"); }
  std::string fakes() const { return tmp_.Path("fakes"); }
  std::string tools() const { return tmp_.Path("tools"); }
  std::string sentinel() const { return tmp_.Path("sentinel-ran"); }
  // tmp/bin/sentinel: creates sentinel() when it runs.
  std::string sentinel_program() const { return tmp_.Path("bin/sentinel"); }
  std::string audit_log() const { return project() + "/.nubos-pilot/audit/np-exec.jsonl"; }
  // Writes proj/.nubos-pilot/config.json.
  void Config(const std::string& json) const;
  // fakes/docker with the given behaviour.
  std::string FakeDocker(const FakeRuntimeOptions& options = {}) const;
  // PATH of fakes, tools and bin (no real runtime anywhere on it).
  std::string FakePath() const;
  // The isolated environment (see IsolatedEnv) with FakePath().
  std::vector<std::string> Env(const std::string& docker_host = "") const;
  // Runs np-exec with `args` in proj/ (or `cwd`) with `env`.
  RunResult Run(const std::vector<std::string>& args, const std::vector<std::string>& env,
                const std::string& cwd = "") const;
  // Whether fakes/NAME was invoked at all.
  bool Invoked(const std::string& name = "docker") const;

 private:
  TempDir tmp_;
};

}  // namespace np::testing

#endif  // NP_EXEC_TESTS_LAUNCHER_FAKES_H_
