/* The constructor: reads the interposer's configuration once, at load, into
 * np_preload_config. Everything here may allocate and take locks (dladdr,
 * realpath, getenv): it runs while the process is still single-threaded
 * loading its libraries, never between fork and exec. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shim/preload/preload.h"

struct NpPreloadConfig np_preload_config;

static const char kDefaultNames[] = "node";

/* Splits a comma list into np_preload_config.names; empty items and items
 * with a slash (a name, never a path) are skipped. */
static void LoadNames(const char *list) {
  struct NpPreloadConfig *c = &np_preload_config;
  size_t length = strlen(list);
  if (length >= sizeof(c->names_buffer)) length = sizeof(c->names_buffer) - 1;
  memcpy(c->names_buffer, list, length);
  c->names_buffer[length] = '\0';
  char *item = c->names_buffer;
  while (item != NULL && c->name_count < kNpMaxNames) {
    char *comma = strchr(item, ',');
    if (comma != NULL) *comma = '\0';
    if (item[0] != '\0' && strchr(item, '/') == NULL && strcmp(item, ".") != 0 &&
        strcmp(item, "..") != 0) {
      c->names[c->name_count++] = item;
    }
    item = comma != NULL ? comma + 1 : NULL;
  }
}

/* Accepts `candidate` as np-exec when it is an executable regular file. */
static int UseNpExec(const char *candidate) {
  struct NpPreloadConfig *c = &np_preload_config;
  char real[PATH_MAX];
  struct stat st;
  if (realpath(candidate, real) == NULL || stat(real, &st) != 0 || !S_ISREG(st.st_mode) ||
      access(real, X_OK) != 0) {
    return 0;
  }
  strcpy(c->np_exec_path, real);
  c->np_exec_dev = st.st_dev;
  c->np_exec_ino = st.st_ino;
  c->have_np_exec = 1;
  return 1;
}

/* NP_EXEC_PRELOAD names np-exec explicitly; otherwise it is looked for
 * beside this library: the same directory (a build tree, where both land in
 * bin/), then ../bin and ../../bin (installed as PREFIX/lib/np-exec/). */
static void FindNpExec(void) {
  const char *explicit_path = getenv("NP_EXEC_PRELOAD");
  if (explicit_path != NULL && explicit_path[0] != '\0') {
    /* An explicit path that does not work is not silently replaced by a
     * guess: matching execs are then refused (fail closed). */
    UseNpExec(explicit_path);
    return;
  }
  Dl_info info;
  if (dladdr(&np_preload_config, &info) == 0 || info.dli_fname == NULL) return;
  char library[PATH_MAX];
  if (realpath(info.dli_fname, library) == NULL) return;
  char *slash = strrchr(library, '/');
  if (slash == NULL) return;
  *slash = '\0';
  static const char *const kRelative[] = {"/np-exec", "/../bin/np-exec", "/../../bin/np-exec"};
  for (size_t i = 0; i < sizeof(kRelative) / sizeof(kRelative[0]); ++i) {
    char candidate[PATH_MAX];
    if (strlen(library) + strlen(kRelative[i]) >= sizeof(candidate)) continue;
    strcpy(candidate, library);
    strcat(candidate, kRelative[i]);
    if (UseNpExec(candidate)) return;
  }
}

/* np-exec's direct tier execs the program in place and records its own pid in
 * NP_EXEC_EXEC_PID. When that equals our pid at load, this process image is
 * the program np-exec started (the tier already applied to it): an exec in
 * place from here (a shell's `exec node`) is not a new spawn, and wrapping it
 * would land np-exec in the pid it refuses as recursion. Children (a new pid)
 * are wrapped as usual. */
static void ReadExecPid(void) {
  const char *value = getenv("NP_EXEC_EXEC_PID");
  if (value == NULL || value[0] == '\0') return;
  char *end = NULL;
  long pid = strtol(value, &end, 10);
  if (end != NULL && *end == '\0' && pid > 0 && (pid_t)pid == getpid()) {
    np_preload_config.np_exec_child_pid = (pid_t)pid;
  }
}

/* The library's one constructor. */
__attribute__((constructor)) static void NpPreloadInit(void) {
  NpResolveReal(); /* Pass-through needs the real functions even when disabled. */
  const char *disable = getenv("NP_EXEC_PRELOAD_DISABLE");
  if (disable != NULL && strcmp(disable, "1") == 0) return;
  const char *names = getenv("NP_EXEC_PRELOAD_NAMES");
  LoadNames(names != NULL ? names : kDefaultNames);
  if (np_preload_config.name_count == 0) return;
  FindNpExec();
  ReadExecPid();
  /* np-exec is linked statically, so the library never loads into it; a
   * dynamic build (the sanitizer one) would, and np-exec's own exec of the
   * program must never be wrapped again. */
  struct stat self;
  if (np_preload_config.have_np_exec && stat("/proc/self/exe", &self) == 0 &&
      self.st_dev == np_preload_config.np_exec_dev &&
      self.st_ino == np_preload_config.np_exec_ino) {
    return;
  }
  np_preload_config.active = 1;
}
