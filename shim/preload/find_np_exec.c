/* Finding np-exec, lazily: at the first exec of a configured program, never
 * at load. Every process of the tree loads the library and most never exec a
 * configured program, so the lookup (about ten system calls) is paid only by
 * a process about to start np-exec anyway (the constructor used to
 * pay 23 system calls in every process).
 *
 * This runs where the exec runs, possibly between fork (or vfork) and exec,
 * so it keeps decide.c's rules: stack buffers and system calls only; no
 * malloc, no locks, no stdio. That is why the canonical path comes from
 * /proc/self/fd of an O_PATH descriptor rather than realpath(3), which may
 * allocate. What posix_spawn(p) finds is kept for the rest of the process:
 * published once through an atomic state word (no lock); a caller that finds
 * another one still publishing uses its own copy. An exec only reads what is
 * kept: it replaces the process when it succeeds, so keeping would gain
 * nothing, and it may run in a vfork child that shares the parent's memory
 * after changing its own view of the file system (chroot, setns), whose
 * answer must not become the parent's.
 *
 * Nothing here comes from the environment at the time of the exec: the
 * places looked in were noted by the constructor from the environment at
 * load, as before, and what is found is checked the same way (an executable
 * regular file; its device and inode decide what is np-exec). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shim/preload/preload.h"

enum { kUnresolved = 0, kPublishing = 1, kResolved = 2 };

static int state = kUnresolved;
static struct NpExecIdentity kept;

/* The path /proc gives for `fd`, into `out` (PATH_MAX bytes); otherwise (no
 * /proc, or a path too long for it) `given` as it is. 0 when neither fits. */
static int CanonicalPath(int fd, const char *given, char *out) {
  char link[32] = "/proc/self/fd/";
  char digits[16];
  int n = 0;
  for (unsigned value = (unsigned)fd; n == 0 || value > 0; value /= 10) {
    digits[n++] = (char)('0' + value % 10);
  }
  size_t at = strlen(link);
  while (n > 0) link[at++] = digits[--n];
  link[at] = '\0';
  ssize_t length = readlink(link, out, PATH_MAX - 1);
  /* A result that fills the buffer may be cut short: not used. */
  if (length > 0 && length < PATH_MAX - 1 && out[0] == '/') {
    out[length] = '\0';
    return 1;
  }
  if (strlen(given) >= PATH_MAX) return 0;
  strcpy(out, given);
  return 1;
}

/* Accepts `candidate` (absolute) as np-exec when it is an executable regular
 * file, and fills `id` with its canonical path and identity. */
static int UseNpExec(const char *candidate, struct NpExecIdentity *id) {
  int fd = open(candidate, O_PATH | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat st;
  int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && CanonicalPath(fd, candidate, id->path) &&
           access(id->path, X_OK) == 0;
  close(fd);
  if (!ok) return 0;
  id->dev = st.st_dev;
  id->ino = st.st_ino;
  id->found = 1;
  return 1;
}

/* NP_EXEC_PRELOAD when it was set; otherwise beside this library's real file:
 * the same directory (a build tree, where both land in bin/), then ../bin and
 * ../../bin (installed as PREFIX/lib/np-exec/). */
static void Find(struct NpExecIdentity *id) {
  const struct NpPreloadConfig *c = &np_preload_config;
  if (c->np_exec_explicit) {
    if (c->explicit_np_exec[0] != '\0') UseNpExec(c->explicit_np_exec, id);
    return;
  }
  if (c->library_path == NULL) return;
  char library[PATH_MAX];
  int fd = open(c->library_path, O_PATH | O_CLOEXEC);
  if (fd < 0) return;
  int ok = CanonicalPath(fd, c->library_path, library);
  close(fd);
  char *slash = ok ? strrchr(library, '/') : NULL;
  if (slash == NULL) return;
  *slash = '\0';
  static const char *const kRelative[] = {"/np-exec", "/../bin/np-exec", "/../../bin/np-exec"};
  for (size_t i = 0; i < sizeof(kRelative) / sizeof(kRelative[0]); ++i) {
    char candidate[PATH_MAX];
    if (strlen(library) + strlen(kRelative[i]) >= sizeof(candidate)) continue;
    strcpy(candidate, library);
    strcat(candidate, kRelative[i]);
    if (UseNpExec(candidate, id)) return;
  }
}

const struct NpExecIdentity *NpFindNpExec(struct NpExecIdentity *scratch, int keep) {
  if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) == kResolved) return &kept;
  const int saved = errno;
  scratch->found = 0;
  scratch->is_self = 0;
  Find(scratch);
  /* np-exec is linked statically, so the library never loads into it; a
   * dynamic build (the sanitizer one) would, and np-exec's own exec of the
   * program must never be wrapped again. */
  struct stat self;
  if (scratch->found && stat("/proc/self/exe", &self) == 0 && self.st_dev == scratch->dev &&
      self.st_ino == scratch->ino) {
    scratch->is_self = 1;
  }
  errno = saved;
  int expected = kUnresolved;
  if (keep && __atomic_compare_exchange_n(&state, &expected, kPublishing, 0, __ATOMIC_ACQ_REL,
                                          __ATOMIC_ACQUIRE)) {
    kept = *scratch;
    __atomic_store_n(&state, kResolved, __ATOMIC_RELEASE);
  }
  return scratch;
}
