/* The constructor: reads the interposer's configuration once, at load, into
 * np_preload_config. Everything here may allocate and take locks (dladdr,
 * getenv): it runs while the process is still single-threaded loading its
 * libraries, never between fork and exec. It makes no system call in the
 * usual case (an absolute LD_PRELOAD, no NP_EXEC_EXEC_PID): every process of
 * the tree loads it, and most never exec a configured program. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
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

/* Copies `path` made absolute into `out` (PATH_MAX bytes), "" when it does
 * not fit. Only a relative path costs a system call (getcwd): it must be
 * resolved against the working directory of the moment the library loaded,
 * as it always was, not of a later exec. */
static void CopyAbsolute(const char *path, char *out) {
  if (!NpAbsolute(path, out)) out[0] = '\0';
}

/* Records where np-exec is to be looked for, without looking: the lookup
 * itself (find_np_exec.c) waits for the first exec of a configured program.
 * NP_EXEC_PRELOAD names np-exec explicitly; otherwise it is looked for beside
 * this library, whose file the loader names (dladdr reads the loader's own
 * list: no system call). */
static void NoteWhereNpExecIs(void) {
  const char *explicit_path = getenv("NP_EXEC_PRELOAD");
  if (explicit_path != NULL && explicit_path[0] != '\0') {
    /* An explicit path that does not work (or does not fit) is never
     * replaced by a guess: matching execs are then refused (fail closed). */
    np_preload_config.np_exec_explicit = 1;
    CopyAbsolute(explicit_path, np_preload_config.explicit_np_exec);
    return;
  }
  Dl_info info;
  if (dladdr(&np_preload_config, &info) == 0 || info.dli_fname == NULL) return;
  /* The loader keeps its name of the library for as long as it is loaded. */
  if (info.dli_fname[0] == '/') {
    np_preload_config.library_path = info.dli_fname;
    return;
  }
  CopyAbsolute(info.dli_fname, np_preload_config.relative_library);
  if (np_preload_config.relative_library[0] != '\0') {
    np_preload_config.library_path = np_preload_config.relative_library;
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
  NoteWhereNpExecIs();
  ReadExecPid();
  np_preload_config.active = 1;
}
