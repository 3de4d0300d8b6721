// What this machine charges for two things every process start pays before
// its own code runs (scripts/bench.sh prints both in its machine line):
//   - one CPUID instruction, which a virtual machine traps to its hypervisor;
//     glibc's start-up (init_cpu_features, dl_init_cacheinfo) executes tens of
//     them in every process, static or dynamic, and OpenSSL's a few more;
//   - exec to main: from a fork's child calling execve on this static program
//     to its main, the floor of any static launcher's own start-up.
// Prints "cpuid_us X exec_to_main_us Y" (medians).
#include <cpuid.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double NowUs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int Compare(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double Median(double* v, int n) {
  qsort(v, (size_t)n, sizeof(double), Compare);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

enum { kRounds = 31, kPerRound = 200 };

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "--started") == 0) {
    // The child: how long since the parent's child called execve.
    printf("%f\n", NowUs() - strtod(argv[2], NULL));
    return 0;
  }
  double cpuid[kRounds], exec_to_main[kRounds];
  for (int r = 0; r < kRounds; ++r) {
    unsigned a, b, c, d;
    const double start = NowUs();
    for (int i = 0; i < kPerRound; ++i) __cpuid_count(4, 0, a, b, c, d);
    cpuid[r] = (NowUs() - start) / kPerRound;
    int out[2];
    if (pipe(out) != 0) return 1;
    const pid_t pid = fork();
    if (pid == 0) {
      char started[64];
      snprintf(started, sizeof started, "%f", NowUs());
      dup2(out[1], 1);
      execl("/proc/self/exe", argv[0], "--started", started, (char*)NULL);
      _exit(127);
    }
    close(out[1]);
    char text[64] = {0};
    const ssize_t n = read(out[0], text, sizeof text - 1);
    close(out[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (n <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
    exec_to_main[r] = strtod(text, NULL);
  }
  printf("cpuid_us %.2f exec_to_main_us %.0f\n", Median(cpuid, kRounds),
         Median(exec_to_main, kRounds));
  return 0;
}
