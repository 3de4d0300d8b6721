/* A small dynamically linked test host for the exec interposer: it runs
 * TARGET through one function of the exec family, or posix_spawn(p).
 *
 *   exec_host [fork:]FUNCTION TARGET [ARGS...]
 *
 * FUNCTION is execve, execv, execvp, execvpe, execl, execlp, execle,
 * posix_spawn or posix_spawnp. The exec functions replace this process (with
 * "fork:" they run in a child and the host waits); argv[0] of the target is
 * TARGET. On failure it prints "errno=N" (for posix_spawn, the returned
 * error number) and exits 99. The execl forms take at most three ARGS.
 * With NP_TEST_HOST_FIRST set, the host first runs it as a shell command
 * (system(3)): a change to the machine after the library loaded and before
 * the exec. */
#define _GNU_SOURCE
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int Fail(int err) {
  printf("errno=%d\n", err);
  fflush(stdout);
  return 99;
}

static int Status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 98;
}

/* Runs the exec function; returns only on failure, with errno. */
static void Exec(const char *fn, const char *target, char **argv, int argc) {
  const char *a = argc > 1 ? argv[1] : NULL;
  const char *b = argc > 2 ? argv[2] : NULL;
  const char *c = argc > 3 ? argv[3] : NULL;
  if (strcmp(fn, "execve") == 0) {
    execve(target, argv, environ);
  } else if (strcmp(fn, "execv") == 0) {
    execv(target, argv);
  } else if (strcmp(fn, "execvp") == 0) {
    execvp(target, argv);
  } else if (strcmp(fn, "execvpe") == 0) {
    execvpe(target, argv, environ);
  } else if (strcmp(fn, "execl") == 0) {
    execl(target, target, a, b, c, (char *)NULL);
  } else if (strcmp(fn, "execlp") == 0) {
    execlp(target, target, a, b, c, (char *)NULL);
  } else if (strcmp(fn, "execle") == 0) {
    /* The environment follows the first NULL, so the list must end exactly. */
    if (argc <= 1) {
      execle(target, target, (char *)NULL, environ);
    } else if (argc == 2) {
      execle(target, target, a, (char *)NULL, environ);
    } else if (argc == 3) {
      execle(target, target, a, b, (char *)NULL, environ);
    } else {
      execle(target, target, a, b, c, (char *)NULL, environ);
    }
  } else {
    errno = EINVAL;
  }
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: exec_host [fork:]FUNCTION TARGET [ARGS...]\n");
    return 2;
  }
  const char *fn = argv[1];
  const char *target = argv[2];
  char **child_argv = argv + 2;
  const int child_argc = argc - 2;
  const char *first = getenv("NP_TEST_HOST_FIRST");
  if (first != NULL && system(first) != 0) return Fail(EIO);
  fflush(stdout);
  if (strcmp(fn, "posix_spawn") == 0 || strcmp(fn, "posix_spawnp") == 0) {
    pid_t pid = 0;
    int err = strcmp(fn, "posix_spawn") == 0
                  ? posix_spawn(&pid, target, NULL, NULL, child_argv, environ)
                  : posix_spawnp(&pid, target, NULL, NULL, child_argv, environ);
    if (err != 0) return Fail(err);
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return Fail(errno);
    return Status(status);
  }
  if (strncmp(fn, "fork:", 5) == 0) {
    pid_t pid = fork();
    if (pid < 0) return Fail(errno);
    if (pid == 0) {
      Exec(fn + 5, target, child_argv, child_argc);
      /* Only async-signal-safe calls here: report the errno by exit status. */
      _exit(errno > 0 && errno < 90 ? errno : 90);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return Fail(errno);
    return Status(status);
  }
  Exec(fn, target, child_argv, child_argc);
  return Fail(errno);
}
