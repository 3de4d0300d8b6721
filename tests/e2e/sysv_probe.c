/* A static helper the warm sandbox e2e test copies into the project and runs
 * inside the sandbox: `make` creates one SysV shared memory segment, one
 * semaphore set and one message queue (private keys) and one POSIX message
 * queue (by mq_open, the system call, which needs no file system), all left
 * behind on purpose, and prints "made"; `count` prints "sysv=N", the number of
 * SysV IPC objects the sandbox's IPC namespace holds, then "mq=1" when that
 * POSIX queue is still there and "mq=0" when it is not; `limit-init` lowers
 * PID 1's file size limit (prlimit, as a program of the same user may) and
 * prints "lowered"; `connect-all` listens on a socket of its own, then tries
 * to connect to every Unix socket of the sandbox's network namespace that has
 * a name (a path or an abstract one, as /proc/net/unix lists them) and asks
 * each for a process, as the keeper's channel is asked, and prints
 * "own=1 others=N": its own socket answers, N others did. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int count_lines(const char *table) {
  FILE *f = fopen(table, "r");
  if (f == NULL) return 0;
  int lines = 0;
  char buffer[512];
  while (fgets(buffer, sizeof(buffer), f) != NULL) ++lines;
  fclose(f);
  return lines > 0 ? lines - 1 : 0; /* the header */
}

/* 1 when a Unix stream socket named `name` (a leading '@': abstract)
 * accepts a connection, which is then asked for a process. */
static int reached(const char *name) {
  struct sockaddr_un address = {.sun_family = AF_UNIX};
  const size_t length = strlen(name);
  if (length == 0 || length >= sizeof(address.sun_path)) return 0;
  memcpy(address.sun_path, name, length);
  if (name[0] == '@') address.sun_path[0] = '\0';
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  const socklen_t size = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + length);
  const int ok = connect(fd, (struct sockaddr *)&address, size) == 0;
  if (ok) {
    static const char request[] =
        "{\"op\":\"spawn\",\"spawn\":{\"argv\":[\"/bin/sh\",\"-c\",\"touch /tmp/ran\"]}}";
    (void)!write(fd, request, sizeof(request) - 1);
  }
  close(fd);
  return ok;
}

static int connect_all(void) {
  static const char own[] = "/tmp/np-probe.sock";
  unlink(own);
  const int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un address = {.sun_family = AF_UNIX};
  memcpy(address.sun_path, own, sizeof(own));
  if (listener < 0 || bind(listener, (struct sockaddr *)&address, sizeof(address)) != 0 ||
      listen(listener, 8) != 0) {
    return perror("listen"), 1;
  }
  FILE *table = fopen("/proc/net/unix", "r");
  if (table == NULL) return perror("/proc/net/unix"), 1;
  char line[4096];
  int own_reached = 0, others = 0;
  if (fgets(line, sizeof(line), table) == NULL) line[0] = '\0'; /* the header */
  while (fgets(line, sizeof(line), table) != NULL) {
    char path[4096] = "";
    /* Num RefCount Protocol Flags Type St Inode Path */
    if (sscanf(line, "%*s %*s %*s %*s %*s %*s %*s %4095s", path) != 1) continue;
    if (strcmp(path, own) == 0) {
      own_reached += reached(path);
    } else {
      others += reached(path);
    }
  }
  fclose(table);
  printf("own=%d others=%d\n", own_reached, others);
  return 0;
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
  if (argc == 2 && strcmp(argv[1], "connect-all") == 0) return connect_all();
  fputs("usage: sysv_probe make|count|limit-init|connect-all\n", stderr);
  return 2;
}
