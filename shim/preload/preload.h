/* libnp-exec-preload: an LD_PRELOAD interposer that sends every exec of a
 * configured program (default "node") through np-exec, so hosts that exec
 * node by absolute path (process.execPath) get the tier too.
 *
 * C, not C++: the library runs inside arbitrary host processes and between
 * fork (or vfork) and exec, so it carries no C++ runtime, allocates nothing
 * on the exec path, takes no locks and writes no stdio. Configuration is read
 * once by the constructor into static buffers and is read-only afterwards,
 * which is what makes it safe to consult in a vfork child that shares the
 * parent's memory. Internal header. */
#ifndef NP_EXEC_SHIM_PRELOAD_PRELOAD_H_
#define NP_EXEC_SHIM_PRELOAD_PRELOAD_H_

#include <limits.h>
#include <sys/types.h>

#define NP_HIDDEN __attribute__((visibility("hidden")))

/* The most program names NP_EXEC_PRELOAD_NAMES may list, and their total size. */
enum { kNpMaxNames = 32, kNpNamesBytes = 1024 };

/* The most arguments a rewritten call may carry; beyond it the call fails
 * with E2BIG instead of growing the stack without bound. */
enum { kNpMaxArgs = 16384 };

/* What the constructor read; never written after load. */
struct NpPreloadConfig {
  int active;        /* Loaded, not disabled, and configured. */
  int have_np_exec;  /* np_exec_path names an existing np-exec. */
  dev_t np_exec_dev; /* Identity of np-exec, to never wrap it. */
  ino_t np_exec_ino;
  pid_t np_exec_child_pid; /* Set when np-exec exec'd this very process image. */
  char np_exec_path[PATH_MAX];
  int name_count;
  const char *names[kNpMaxNames];
  char names_buffer[kNpNamesBytes];
};

NP_HIDDEN extern struct NpPreloadConfig np_preload_config;

/* Decision for one exec-family call. */
enum NpDecision {
  kNpPassThrough = 0, /* Call the real function with the original arguments. */
  kNpWrap = 1,        /* Run np-exec with the rewritten argv. */
  kNpRefuse = 2,      /* A configured program, but np-exec cannot be found. */
};

/* Decides for a target given as a path (it contains a slash) and, for
 * kNpWrap, writes its absolute form into `resolved` (PATH_MAX bytes).
 * Async-signal-safe: stack buffers and system calls only. */
NP_HIDDEN enum NpDecision NpDecidePath(const char *path, char *resolved);

/* Same for the p variants: `file` is searched on PATH the way glibc's
 * execvp does (PATH of the calling process, "/bin:/usr/bin" when unset)
 * when it has no slash. Async-signal-safe. */
NP_HIDDEN enum NpDecision NpDecideFile(const char *file, char *resolved);

/* Counts argv entries; -1 when there are more than kNpMaxArgs. */
NP_HIDDEN long NpCountArgs(char *const argv[]);

/* Fills out[0 .. argc+3]: np-exec, "--", resolved, argv[1..], NULL. `out`
 * has room for argc + 4 pointers. */
NP_HIDDEN void NpBuildArgv(const char *resolved, char *const argv[], long argc, char **out);

/* Looks up the real exec functions with dlsym(RTLD_NEXT); called once by
 * the constructor. */
NP_HIDDEN void NpResolveReal(void);

/* Writes "np-exec-preload: <what> <path>" to stderr with write(2). */
NP_HIDDEN void NpReportRefusal(const char *path);

#endif /* NP_EXEC_SHIM_PRELOAD_PRELOAD_H_ */
