// The floor of a static launcher: a static program that does nothing but exec
// its arguments (scripts/bench.sh compares env, it and np-exec's direct tier).
#include <stdio.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: np-exec-floor PROGRAM [ARGS...]\n");
    return 2;
  }
  execv(argv[1], argv + 1);
  perror("np-exec-floor: execv");
  return 127;
}
