// How a warm sandbox's keeper starts a spawn's program: everything the child
// needs is made first (PrepareExec), then vfork's child only makes system
// calls until it execs: it shares the keeper's memory meanwhile, and the
// keeper waits, so no copy of the keeper's address space is made per spawn
// (fork's page tables and the copy-on-write faults after it). The program
// is found as execvpe finds it, on the PATH of its own environment.
#ifndef NP_EXEC_LAUNCHER_WARM_SPAWN_EXEC_H_
#define NP_EXEC_LAUNCHER_WARM_SPAWN_EXEC_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/warm.h"

namespace np::warm {

struct PreparedExec {
  PreparedExec() = default;
  // The pointers below point into the strings above: moved, never copied.
  PreparedExec(PreparedExec&&) = default;
  PreparedExec& operator=(PreparedExec&&) = default;
  PreparedExec(const PreparedExec&) = delete;
  PreparedExec& operator=(const PreparedExec&) = delete;

  std::vector<std::string> env;  // NAME=value, the program's environment
  std::vector<std::string> argv;
  std::string path;  // the search path of an argv[0] without a slash
  std::string cwd;
  std::string cwd_error;  // "np-exec: cannot change to CWD: "
  std::string run_error;  // "np-exec: cannot run ARGV0: "
  std::vector<char*> env_pointers;
  std::vector<char*> argv_pointers;
  std::vector<char*> shell_pointers;  // /bin/sh, the candidate, argv[1..]
  std::vector<char> candidate;        // where the child writes each PATH candidate
};

// The program's environment: the keeper's own (`envp`: the sandbox's PATH,
// HOME and np-exec's constants) with the request's entries on top; TERM only
// as the request gives it. Its PATH (else /bin:/usr/bin) is searched for an
// argv[0] without a slash as execvpe searches: an empty element is the
// working directory, an element of PATH_MAX or more is skipped, a name
// longer than NAME_MAX is not searched (the spawn fails with 126). Memory
// stays proportional to the request, whatever PATH holds.
PreparedExec PrepareExec(const WarmRequest& request, char** envp);

// Starts the program in a session of its own with `stdio` as its descriptors
// 0 to 2 (nothing else open), in `exec.cwd`, with signals unblocked and
// SIGPIPE at its default. A program that cannot run exits 127 (not found)
// or 126 with one line on its stderr. -1 (errno set) when no process could
// be made.
pid_t StartPrepared(PreparedExec& exec, const int stdio[3]);

}  // namespace np::warm

#endif  // NP_EXEC_LAUNCHER_WARM_SPAWN_EXEC_H_
