// Running the built np-exec (or any program) from a test and capturing what
// it did. Test-only; spawns processes.
#ifndef NP_EXEC_TESTS_SUPPORT_PROCESS_H_
#define NP_EXEC_TESTS_SUPPORT_PROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace np::testing {

struct RunOptions {
  std::string cwd;               // Empty: the test's own.
  std::vector<std::string> env;  // Full environment ("K=V"); see BaseEnv().
  std::string stdin_data;        // Written to the child's stdin, then closed.
  std::string argv0;             // Overrides argv[0] (shim mode) when set.
  int timeout_ms = 60000;        // Then SIGKILL; exit_code becomes 137.
  bool new_session = false;      // setsid() in the child.
};

struct RunResult {
  int exit_code = -1;  // 128+n when a signal ended it.
  std::string out;
  std::string err;
  bool timed_out = false;
};

// Runs argv[0] (a path) to completion.
RunResult RunProcess(const std::vector<std::string>& argv, const RunOptions& options);

// Starts argv in the background with stdout/stderr to files; returns its pid.
pid_t StartProcess(const std::vector<std::string>& argv, const RunOptions& options,
                   const std::string& out_path, const std::string& err_path);

// waitpid with a timeout; returns 128+n for a signal, -1 on timeout.
int WaitProcess(pid_t pid, int timeout_ms);

// Path of the np-exec under test: $NP_EXEC_BIN, else the one built with the tests.
std::string NpExecBin();

// The repository: $NP_SOURCE_DIR, else the tree the tests were built from.
std::string SourceDir();

// The build directory: $NP_BINARY_DIR, else the one the tests were built in.
std::string BinaryDir();

// The tests' own operator state store (XDG_STATE_HOME of BaseEnv): a
// temporary directory for this process, removed at exit.
std::string TestStateHome();

// XDG_STATE_HOME=TestStateHome(), and the test's PATH, HOME, LANG, TMPDIR, DOCKER_HOST, CI and
// sanitizer options, without NP_EXEC_* variables, as a base environment for children. `extra`
// entries ("K=V") replace or add.
std::vector<std::string> BaseEnv(const std::vector<std::string>& extra = {});

// Replaces or adds "K=V" in env.
void SetEnv(std::vector<std::string>& env, const std::string& name, const std::string& value);

}  // namespace np::testing

#endif  // NP_EXEC_TESTS_SUPPORT_PROCESS_H_
