/* The interposed entry points: execve, execv, execvp, execvpe, execl, execlp,
 * execle, posix_spawn and posix_spawnp. Each asks decide.c whether its target
 * is a configured program; if so it runs np-exec with
 *   [np-exec, "--", <absolute target>, argv[1..]]
 * and the caller's environment unchanged (LD_PRELOAD included, so the
 * program's own children are wrapped too; np-exec is statically linked, so
 * the library never loads into np-exec itself). Otherwise it calls the real
 * function with the original arguments, so success and errno are exactly
 * what they would be without the library.
 *
 * The exec functions run between fork (or vfork) and exec: the new argv
 * lives on the stack (bounded by kNpMaxArgs, E2BIG beyond), and nothing here
 * allocates, locks or uses stdio. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "shim/preload/preload.h"

#define NP_EXPORT __attribute__((visibility("default")))

extern char **environ;

typedef int (*ExecveFn)(const char *, char *const[], char *const[]);
typedef int (*ExecvpeFn)(const char *, char *const[], char *const[]);
typedef int (*SpawnFn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                       const posix_spawnattr_t *, char *const[], char *const[]);

static ExecveFn real_execve;
static ExecvpeFn real_execvpe;
static SpawnFn real_posix_spawn;
static SpawnFn real_posix_spawnp;

/* Converts dlsym's object pointer to a function pointer without the cast
 * ISO C forbids; POSIX guarantees the representation is the same. */
#define NP_LOAD(fn)                              \
  do {                                           \
    void *symbol = dlsym(RTLD_NEXT, #fn);        \
    memcpy(&real_##fn, &symbol, sizeof(symbol)); \
  } while (0)

void NpResolveReal(void) {
  NP_LOAD(execve);
  NP_LOAD(execvpe);
  NP_LOAD(posix_spawn);
  NP_LOAD(posix_spawnp);
}

/* The real functions are resolved by the constructor. Should an exec run
 * before it (from an earlier library's own constructor), they are resolved
 * on first use instead; that is the one path that is not async-signal-safe,
 * and it cannot happen after load. */
#define NP_REAL_GETTER(fn, type)        \
  static type Real_##fn(void) {         \
    if (real_##fn == NULL) NP_LOAD(fn); \
    return real_##fn;                   \
  }
NP_REAL_GETTER(execve, ExecveFn)
NP_REAL_GETTER(execvpe, ExecvpeFn)
NP_REAL_GETTER(posix_spawn, SpawnFn)
NP_REAL_GETTER(posix_spawnp, SpawnFn)

/* Runs np-exec in place of `path`. Returns only on failure, with errno set. */
static int ExecWrapped(const char *np_exec, const char *resolved, char *const argv[],
                       char *const envp[]) {
  long argc = NpCountArgs(argv);
  if (argc < 0) {
    errno = E2BIG;
    return -1;
  }
  char *wrapped[argc + 4];
  NpBuildArgv(np_exec, resolved, argv, argc, wrapped);
  return Real_execve()(np_exec, wrapped, envp);
}

static int Refused(const char *path) {
  NpReportRefusal(path);
  errno = EACCES;
  return -1;
}

NP_EXPORT int execve(const char *path, char *const argv[], char *const envp[]) {
  char resolved[PATH_MAX];
  char np_exec[PATH_MAX];
  switch (NpDecidePath(path, resolved, np_exec, 0)) {
    case kNpWrap:
      return ExecWrapped(np_exec, resolved, argv, envp);
    case kNpRefuse:
      return Refused(path);
    case kNpPassThrough:
      break;
  }
  return Real_execve()(path, argv, envp);
}

NP_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[]) {
  char resolved[PATH_MAX];
  char np_exec[PATH_MAX];
  switch (NpDecideFile(file, resolved, np_exec, 0)) {
    case kNpWrap:
      return ExecWrapped(np_exec, resolved, argv, envp);
    case kNpRefuse:
      return Refused(file);
    case kNpPassThrough:
      break;
  }
  return Real_execvpe()(file, argv, envp);
}

/* execv and execvp are execve and execvpe with the process's environment,
 * exactly as glibc defines them, so they go through the same decision. */
NP_EXPORT int execv(const char *path, char *const argv[]) { return execve(path, argv, environ); }

NP_EXPORT int execvp(const char *file, char *const argv[]) { return execvpe(file, argv, environ); }

/* The execl family gathers its variadic arguments into a stack array, as
 * glibc's own execl does, and continues as the matching v function. */
static long CountVarArgs(const char *arg, va_list ap) {
  long argc = arg != NULL ? 1 : 0;
  if (arg == NULL) return 0;
  while (va_arg(ap, const char *) != NULL) {
    if (++argc > kNpMaxArgs) return -1;
  }
  return argc;
}

static void FillVarArgs(const char *arg, va_list ap, long argc, char **out) {
  if (argc > 0) out[0] = (char *)arg;
  for (long i = 1; i < argc; ++i) out[i] = va_arg(ap, char *);
  out[argc] = NULL;
}

NP_EXPORT int execl(const char *path, const char *arg, ...) {
  va_list ap;
  va_start(ap, arg);
  long argc = CountVarArgs(arg, ap);
  va_end(ap);
  if (argc < 0) {
    errno = E2BIG;
    return -1;
  }
  char *argv[argc + 1];
  va_start(ap, arg);
  FillVarArgs(arg, ap, argc, argv);
  va_end(ap);
  return execve(path, argv, environ);
}

NP_EXPORT int execlp(const char *file, const char *arg, ...) {
  va_list ap;
  va_start(ap, arg);
  long argc = CountVarArgs(arg, ap);
  va_end(ap);
  if (argc < 0) {
    errno = E2BIG;
    return -1;
  }
  char *argv[argc + 1];
  va_start(ap, arg);
  FillVarArgs(arg, ap, argc, argv);
  va_end(ap);
  return execvp(file, argv);
}

NP_EXPORT int execle(const char *path, const char *arg, ...) {
  va_list ap;
  va_start(ap, arg);
  long argc = CountVarArgs(arg, ap);
  va_end(ap);
  if (argc < 0) {
    errno = E2BIG;
    return -1;
  }
  char *argv[argc + 1];
  va_start(ap, arg);
  FillVarArgs(arg, ap, argc, argv);
  if (argc > 0) (void)va_arg(ap, char *); /* The NULL that ends the list. */
  char *const *envp = va_arg(ap, char *const *);
  va_end(ap);
  return execve(path, argv, envp);
}

/* posix_spawn runs in the parent, but the same stack-only rules keep it
 * simple; it returns an error number instead of setting errno. */
static int SpawnWrapped(pid_t *pid, const char *np_exec, const char *resolved,
                        const posix_spawn_file_actions_t *actions, const posix_spawnattr_t *attr,
                        char *const argv[], char *const envp[]) {
  long argc = NpCountArgs(argv);
  if (argc < 0) return E2BIG;
  char *wrapped[argc + 4];
  NpBuildArgv(np_exec, resolved, argv, argc, wrapped);
  return Real_posix_spawn()(pid, np_exec, actions, attr, wrapped, envp);
}

NP_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
                          const posix_spawnattr_t *attr, char *const argv[], char *const envp[]) {
  char resolved[PATH_MAX];
  char np_exec[PATH_MAX];
  switch (NpDecidePath(path, resolved, np_exec, 1)) {
    case kNpWrap:
      return SpawnWrapped(pid, np_exec, resolved, actions, attr, argv, envp);
    case kNpRefuse:
      NpReportRefusal(path);
      return EACCES;
    case kNpPassThrough:
      break;
  }
  return Real_posix_spawn()(pid, path, actions, attr, argv, envp);
}

NP_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
                           const posix_spawnattr_t *attr, char *const argv[], char *const envp[]) {
  char resolved[PATH_MAX];
  char np_exec[PATH_MAX];
  switch (NpDecideFile(file, resolved, np_exec, 1)) {
    case kNpWrap:
      return SpawnWrapped(pid, np_exec, resolved, actions, attr, argv, envp);
    case kNpRefuse:
      NpReportRefusal(file);
      return EACCES;
    case kNpPassThrough:
      break;
  }
  return Real_posix_spawnp()(pid, file, actions, attr, argv, envp);
}
