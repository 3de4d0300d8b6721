/* Whether one exec-family call is rewritten. Everything here runs between
 * fork (or vfork) and exec: stack buffers, the read-only configuration,
 * getenv (which only reads environ) and system calls (stat, access, getcwd
 * into a caller buffer, getpid, write). No malloc, no locks, no stdio, no
 * writes to shared memory. getenv and getcwd are not on POSIX's
 * async-signal-safe list; glibc's take no lock and allocate nothing here. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shim/preload/preload.h"

static const char *BaseName(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash != NULL ? slash + 1 : path;
}

static int IsConfiguredName(const char *name) {
  for (int i = 0; i < np_preload_config.name_count; ++i) {
    if (strcmp(np_preload_config.names[i], name) == 0) return 1;
  }
  return 0;
}

/* Not normalized: np-exec gets the same file. */
int NpAbsolute(const char *path, char *out) {
  size_t length = strlen(path);
  if (path[0] == '/') {
    if (length >= PATH_MAX) return 0;
    if (out != path) memmove(out, path, length + 1);
    return 1;
  }
  if (getcwd(out, PATH_MAX) == NULL) return 0;
  size_t dir = strlen(out);
  if (dir + 1 + length >= PATH_MAX) return 0;
  out[dir] = '/';
  memcpy(out + dir + 1, path, length + 1);
  return 1;
}

/* The call would run this file: an executable regular file. Anything else
 * passes through, so the real call fails with its own errno. */
static int Runnable(const char *path, struct stat *st) {
  return stat(path, st) == 0 && S_ISREG(st->st_mode) && access(path, X_OK) == 0;
}

enum NpDecision NpDecidePath(const char *path, char *resolved, char *np_exec, int keep) {
  const struct NpPreloadConfig *c = &np_preload_config;
  if (!c->active || path == NULL || path[0] == '\0') return kNpPassThrough;
  if (!IsConfiguredName(BaseName(path))) return kNpPassThrough;
  if (c->np_exec_child_pid != 0 && c->np_exec_child_pid == getpid()) return kNpPassThrough;
  const int saved = errno;
  struct stat st;
  enum NpDecision decision = kNpPassThrough;
  if (NpAbsolute(path, resolved) && Runnable(resolved, &st)) {
    /* Only now, for a configured program about to run, is np-exec looked
     * for (the first time in this process; kept afterwards). */
    struct NpExecIdentity scratch;
    const struct NpExecIdentity *id = NpFindNpExec(&scratch, keep);
    if (!id->found) {
      decision = kNpRefuse;
    } else if (id->is_self) {
      decision = kNpPassThrough;
    } else if (st.st_dev != id->dev || st.st_ino != id->ino) {
      decision = kNpWrap; /* A shim (a link to np-exec) is np-exec: never wrapped. */
      strcpy(np_exec, id->path);
    }
  }
  errno = saved;
  return decision;
}

enum NpDecision NpDecideFile(const char *file, char *resolved, char *np_exec, int keep) {
  const struct NpPreloadConfig *c = &np_preload_config;
  if (!c->active || file == NULL || file[0] == '\0') return kNpPassThrough;
  if (strchr(file, '/') != NULL) return NpDecidePath(file, resolved, np_exec, keep);
  /* A bare name: its basename is itself, so most calls stop here. */
  if (!IsConfiguredName(file)) return kNpPassThrough;
  const char *path = getenv("PATH"); /* Reads environ; no allocation. */
  if (path == NULL) path = "/bin:/usr/bin";
  const size_t file_length = strlen(file);
  const int saved = errno;
  enum NpDecision decision = kNpPassThrough;
  for (const char *p = path;; ++p) {
    const char *end = strchr(p, ':');
    if (end == NULL) end = p + strlen(p);
    const size_t dir_length = (size_t)(end - p);
    char candidate[PATH_MAX];
    struct stat st;
    if (dir_length + 1 + file_length < sizeof(candidate)) {
      /* An empty entry is the working directory, as for execvp. */
      size_t n = 0;
      if (dir_length > 0) {
        memcpy(candidate, p, dir_length);
        candidate[dir_length] = '/';
        n = dir_length + 1;
      }
      memcpy(candidate + n, file, file_length + 1);
      if (NpAbsolute(candidate, resolved) && Runnable(resolved, &st)) {
        errno = saved;
        return NpDecidePath(resolved, resolved, np_exec, keep);
      }
    }
    if (*end == '\0') break;
    p = end;
  }
  errno = saved;
  return decision;
}

long NpCountArgs(char *const argv[]) {
  long argc = 0;
  if (argv == NULL) return 0;
  while (argv[argc] != NULL) {
    if (++argc > kNpMaxArgs) return -1;
  }
  return argc;
}

void NpBuildArgv(const char *np_exec, const char *resolved, char *const argv[], long argc,
                 char **out) {
  long n = 0;
  out[n++] = (char *)np_exec;
  out[n++] = (char *)"--";
  out[n++] = (char *)resolved;
  for (long i = 1; i < argc; ++i) out[n++] = argv[i];
  out[n] = NULL;
}

static void WriteString(const char *s) {
  size_t length = strlen(s);
  while (length > 0) {
    ssize_t written = write(2, s, length);
    if (written <= 0) {
      if (written < 0 && errno == EINTR) continue;
      return;
    }
    s += written;
    length -= (size_t)written;
  }
}

void NpReportRefusal(const char *path) {
  const int saved = errno;
  WriteString("np-exec-preload: refusing to run ");
  WriteString(path);
  WriteString(
      " outside np-exec: np-exec was not found (set NP_EXEC_PRELOAD to its path, "
      "or NP_EXEC_PRELOAD_DISABLE=1 to turn the interposer off)\n");
  errno = saved;
}
