/* A static helper the warm sandbox e2e test copies into the project and runs
 * inside the sandbox: `make` creates one SysV shared memory segment, one
 * semaphore set and one message queue (private keys) and one POSIX message
 * queue (by mq_open, the system call, which needs no file system), all left
 * behind on purpose, and prints "made"; `count` prints "sysv=N", the number of
 * SysV IPC objects the sandbox's IPC namespace holds, then "mq=1" when that
 * POSIX queue is still there and "mq=0" when it is not; `limit-init` lowers
 * PID 1's file size limit (prlimit, as a program of the same user may) and
 * prints "lowered". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/shm.h>

static int count_lines(const char *table) {
  FILE *f = fopen(table, "r");
  if (f == NULL) return 0;
  int lines = 0;
  char buffer[512];
  while (fgets(buffer, sizeof(buffer), f) != NULL) ++lines;
  fclose(f);
  return lines > 0 ? lines - 1 : 0; /* the header */
}

static const char kQueue[] = "/np-warm-left-behind";

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "make") == 0) {
    if (shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600) < 0) return perror("shmget"), 1;
    if (semget(IPC_PRIVATE, 1, IPC_CREAT | 0600) < 0) return perror("semget"), 1;
    if (msgget(IPC_PRIVATE, IPC_CREAT | 0600) < 0) return perror("msgget"), 1;
    if (mq_open(kQueue, O_CREAT | O_RDWR, 0600, NULL) == (mqd_t)-1) return perror("mq_open"), 1;
    puts("made");
    return 0;
  }
  if (argc == 2 && strcmp(argv[1], "count") == 0) {
    printf("sysv=%d\n", count_lines("/proc/sysvipc/shm") + count_lines("/proc/sysvipc/sem") +
                            count_lines("/proc/sysvipc/msg"));
    const mqd_t queue = mq_open(kQueue, O_RDONLY);
    if (queue == (mqd_t)-1 && errno != ENOENT) return perror("mq_open"), 1;
    printf("mq=%d\n", queue == (mqd_t)-1 ? 0 : 1);
    return 0;
  }
  if (argc == 2 && strcmp(argv[1], "limit-init") == 0) {
    struct rlimit small = {4096, RLIM_INFINITY};
    if (prlimit(1, RLIMIT_FSIZE, &small, NULL) != 0) return perror("prlimit"), 1;
    puts("lowered");
    return 0;
  }
  fputs("usage: sysv_probe make|count|limit-init\n", stderr);
  return 2;
}
