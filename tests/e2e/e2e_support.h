// Helpers for tests that run np-exec against a real container runtime
// (docker, podman, bubblewrap): availability checks that fail under CI=true
// instead of skipping, projects configured for the container tier, listing
// np-exec's containers, scanning the host's process table, and a private
// second dockerd. Test-only; spawns processes.
#ifndef NP_EXEC_TESTS_E2E_E2E_SUPPORT_H_
#define NP_EXEC_TESTS_E2E_E2E_SUPPORT_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/ci.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace np::testing {

// RunOptions without C++20 designated initializers.
RunOptions Options(const std::vector<std::string>& env, int timeout_ms = 120000,
                   const std::string& cwd = "", const std::string& stdin_data = "");

// "docker", "podman" or "bwrap". Empty when usable, otherwise why not. The
// first call for docker/podman also builds the test images when missing
// (scripts/build-images.sh, which skips present images).
std::string RuntimeUnavailableReason(const std::string& runtime);

// Names parameterised tests after their runtime.
inline std::string RuntimeName(const ::testing::TestParamInfo<std::string>& info) {
  return info.param;
}

// Fails (CI=true) or skips the current test when `runtime` is unusable.
#define NP_REQUIRE_RUNTIME(runtime)                                                               \
  do {                                                                                            \
    const std::string np_why = ::np::testing::RuntimeUnavailableReason(runtime);                  \
    if (!np_why.empty()) {                                                                        \
      if (::np::testing::InCi()) FAIL() << (runtime) << " is required under CI=true: " << np_why; \
      GTEST_SKIP() << (runtime) << " unavailable: " << np_why;                                    \
    }                                                                                             \
  } while (0)

// BaseEnv() plus what the runtimes need: CONTAINERS_CONF (podman's
// default_ulimits for these machines; a file of the tests' own when unset).
std::vector<std::string> RuntimeEnv(const std::vector<std::string>& extra = {});

// The config.json of a container-tier project on `runtime`; `container`
// entries are merged into isolation.container. The image is left out for bwrap.
std::string ContainerConfig(const std::string& runtime, const std::string& image,
                            const nlohmann::json& container = nlohmann::json::object());

// Runs a runtime's own client ("docker ..."), through PATH.
RunResult RunRuntime(const std::string& runtime, const std::vector<std::string>& args,
                     const std::vector<std::string>& env = {});

// With NP_E2E_WARM=1 (every container spawn warm): ends the warm sandboxes of
// the store in `env` (np-exec warm --stop --all) and waits until none is
// left, so what a sandbox holds for its lifetime (the placeholders of
// protected paths, the account view) is gone as after a cold spawn. False
// when some outlived the wait; true at once without NP_E2E_WARM.
bool EndWarmSandboxes(const std::vector<std::string>& env, const std::string& cwd);

// Names of containers (running or not) carrying np-exec's label
// dev.nubos.np-exec whose name starts with `prefix`.
std::vector<std::string> LabelledContainers(const std::string& runtime, const std::string& prefix,
                                            const std::vector<std::string>& env = {});

// Number of all containers the runtime knows (running or not); -1 on error.
int CountContainers(const std::string& runtime, const std::vector<std::string>& env = {});

// The name prefix of every container np-exec with this pid creates.
std::string ContainerPrefix(pid_t np_exec_pid);

// Pids whose /proc/PID/cmdline (NULs kept) contains `needle`.
std::vector<pid_t> PidsWithCmdline(const std::string& needle);

// Pids whose /proc/PID/cmdline starts with `prefix` (the program itself, not
// a runtime client or wrapper that carries it among its arguments).
std::vector<pid_t> PidsWithCmdlinePrefix(const std::string& prefix);

// Polls `predicate` every 50 ms until it holds or `timeout_ms` passes.
template <typename F>
bool WaitFor(F predicate, int timeout_ms) {
  for (int waited = 0;; waited += 50) {
    if (predicate()) return true;
    if (waited >= timeout_ms) return false;
    usleep(50 * 1000);
  }
}

// Runs `np_exec` ARGS as uid/gid 1000 with no supplementary groups
// (setpriv), from `cwd`.
RunResult RunAsUser1000(const std::string& np_exec, const std::vector<std::string>& args,
                        const std::vector<std::string>& env, const std::string& cwd);

class PrivateDockerd;
// Starts a private dockerd in `dir` whose socket uid 1000 may use (the main
// one stays root-only), loads np-test:local into it and points DOCKER_HOST in
// `env` at it. Empty on success, otherwise why not.
std::string StartDockerdForUser1000(const std::string& dir, std::unique_ptr<PrivateDockerd>* daemon,
                                    std::vector<std::string>& env);

// Recursively chowns `path` (lchown, links not followed).
void ChownTree(const std::string& path, uid_t uid, gid_t gid);

// Reads the audit log of `project` as parsed lines; a torn or non-JSON line
// becomes a discarded json value and counts in *bad.
std::vector<nlohmann::json> ReadAuditLog(const std::string& project, int* bad);

// A private second dockerd in its own directory (no iptables, no bridge), so
// tests can stop a daemon or open its socket to another user without ever
// touching the main one.
class PrivateDockerd {
 public:
  explicit PrivateDockerd(const std::string& dir);
  ~PrivateDockerd();
  // Starts the daemon and waits until it answers (up to 30 s). Empty on
  // success, otherwise why it failed.
  std::string Start();
  // SIGTERM and wait (up to 20 s, then SIGKILL).
  void Stop();
  // Copies an image from the main daemon into this one.
  bool LoadImageFromMain(const std::string& image);
  std::string socket() const { return dir_ + "/docker.sock"; }
  std::string docker_host() const { return "unix://" + socket(); }
  pid_t pid() const { return pid_; }

 private:
  std::string dir_;
  pid_t pid_ = -1;
};

}  // namespace np::testing

#endif  // NP_EXEC_TESTS_E2E_E2E_SUPPORT_H_
