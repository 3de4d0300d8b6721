/* libnp-exec-preload: an LD_PRELOAD interposer that sends every exec of a
 * configured program (default "node") through np-exec, so hosts that exec
 * node by absolute path (process.execPath) get the tier too.
 *
 * C, not C++: the library runs inside arbitrary host processes and between
 * fork (or vfork) and exec, so it carries no C++ runtime, allocates nothing
 * on the exec path, takes no locks and writes no stdio. Configuration is read
 * once by the constructor into static buffers and is read-only afterwards,
 * which is what makes it safe to consult in a vfork child that shares the
 * parent's memory. The constructor makes no system call: np-exec
 * itself is looked for only at the first exec of a configured program
 * (find_np_exec.c), so a process that never runs one pays for nothing but
 * loading the library. Internal header. */
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

/* What the constructor read; never written after load. What every load
 * writes comes first, so it stays within one page. */
struct NpPreloadConfig {
  int active;              /* Loaded, not disabled, and configured. */
  pid_t np_exec_child_pid; /* Set when np-exec exec'd this very process image. */
  int name_count;
  const char *names[kNpMaxNames];
  char names_buffer[kNpNamesBytes];
  /* This library's file as the loader names it, absolute: the loader's own
   * string, or relative_library made absolute; NULL when unknown. */
  const char *library_path;
  /* NP_EXEC_PRELOAD was set at load; explicit_np_exec is its value made
   * absolute ("" when it did not fit). */
  int np_exec_explicit;
  char explicit_np_exec[PATH_MAX];
  char relative_library[PATH_MAX];
};

NP_HIDDEN extern struct NpPreloadConfig np_preload_config;

/* np-exec as found at the first exec of a configured program. */
struct NpExecIdentity {
  int found;   /* path names an executable regular file: np-exec. */
  int is_self; /* This process image is np-exec itself (a dynamic build). */
  dev_t dev;   /* Identity of np-exec, to never wrap it. */
  ino_t ino;
  char path[PATH_MAX]; /* Canonical where /proc tells it, else as configured. */
};

/* np-exec for this process: the kept answer when there is one, otherwise
 * `scratch` filled in by a lookup, which is kept for the process when `keep`
 * (published without a lock; see find_np_exec.c). Async-signal-safe: stack
 * buffers and system calls only. */
NP_HIDDEN const struct NpExecIdentity *NpFindNpExec(struct NpExecIdentity *scratch, int keep);

/* Writes `path` made absolute against the working directory into `out`
 * (PATH_MAX bytes); 0 when it does not fit or there is no working
 * directory. Not normalized. Async-signal-safe. */
NP_HIDDEN int NpAbsolute(const char *path, char *out);

/* Decision for one exec-family call. */
enum NpDecision {
  kNpPassThrough = 0, /* Call the real function with the original arguments. */
  kNpWrap = 1,        /* Run np-exec with the rewritten argv. */
  kNpRefuse = 2,      /* A configured program, but np-exec cannot be found. */
};

/* Decides for a target given as a path (it contains a slash) and, for
 * kNpWrap, writes its absolute form into `resolved` and np-exec's path into
 * `np_exec` (PATH_MAX bytes each). `keep`: the caller is the process that
 * stays (posix_spawn), which may keep what a lookup of np-exec found; an
 * exec may run in a vfork child, sharing the parent's memory after a chroot
 * or setns of its own, so it only reads what is kept. Async-signal-safe:
 * stack buffers and system calls only. */
NP_HIDDEN enum NpDecision NpDecidePath(const char *path, char *resolved, char *np_exec, int keep);

/* Same for the p variants: `file` is searched on PATH the way glibc's
 * execvp does (PATH of the calling process, "/bin:/usr/bin" when unset)
 * when it has no slash. Async-signal-safe. */
NP_HIDDEN enum NpDecision NpDecideFile(const char *file, char *resolved, char *np_exec, int keep);

/* Counts argv entries; -1 when there are more than kNpMaxArgs. */
NP_HIDDEN long NpCountArgs(char *const argv[]);

/* Fills out[0 .. argc+3]: np_exec, "--", resolved, argv[1..], NULL. `out`
 * has room for argc + 4 pointers. */
NP_HIDDEN void NpBuildArgv(const char *np_exec, const char *resolved, char *const argv[], long argc,
                           char **out);

/* Looks up the real exec functions with dlsym(RTLD_NEXT); called once by
 * the constructor. */
NP_HIDDEN void NpResolveReal(void);

/* Writes "np-exec-preload: <what> <path>" to stderr with write(2). */
NP_HIDDEN void NpReportRefusal(const char *path);

#endif /* NP_EXEC_SHIM_PRELOAD_PRELOAD_H_ */
