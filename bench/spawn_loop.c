/* np-spawn-loop: posix_spawns PROGRAM [ARGS...] COUNT times, one after the
 * other, waiting for each; exits 1 when a spawn fails or a child exits
 * non-zero. The process the LD_PRELOAD interposer costs the most in: a host
 * that spawns many programs it does not wrap (issue 19). scripts/bench.sh
 * times it through np-spawn-harness with and without LD_PRELOAD, in one
 * interleaved run. Dynamically linked on purpose, like the hosts the
 * interposer loads into.
 *
 *   np-spawn-loop COUNT PROGRAM [ARGS...]   (PROGRAM: an absolute path) */
#define _POSIX_C_SOURCE 200809L
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

extern char **environ;

int main(int argc, char **argv) {
  if (argc < 3 || argv[2][0] != '/') {
    fprintf(stderr, "usage: np-spawn-loop COUNT /ABSOLUTE/PROGRAM [ARGS...]\n");
    return 2;
  }
  const long count = strtol(argv[1], NULL, 10);
  for (long i = 0; i < count; ++i) {
    pid_t pid = 0;
    int rc = posix_spawn(&pid, argv[2], NULL, NULL, argv + 2, environ);
    int status = 0;
    if (rc != 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
      fprintf(stderr, "np-spawn-loop: spawn %ld of %s failed\n", i, argv[2]);
      return 1;
    }
  }
  return 0;
}
