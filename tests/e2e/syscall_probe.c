/* A static helper the bubblewrap seccomp e2e test mounts into the project and
 * runs inside the sandbox: it makes each system call the sandbox's filter
 * refuses, with harmless arguments, and prints one line per call that did NOT
 * fail with EPERM ("name rc errno"), then "probed N". Without the filter most
 * of these fail differently (EFAULT, EINVAL, ENOSYS, ENOTTY) or succeed (a nested
 * user namespace, the keyring, personality), so an empty report proves the
 * filter is loaded. The last two checks are the other way round: a
 * personality query, and setting the persona back, still work. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int probed = 0;

static void expect_eperm(const char *name, long rc, int err) {
  ++probed;
  if (rc == -1 && err == EPERM) return;
  printf("%s %ld %d\n", name, rc, err);
}

/* A call the filter must let through: reported only when it failed with
 * EPERM. */
static void expect_not_eperm(const char *name, long rc, int err) {
  ++probed;
  if (!(rc == -1 && err == EPERM)) return;
  printf("%s refused\n", name);
}

#define PROBE(nr, ...)                           \
  do {                                           \
    errno = 0;                                   \
    long rc_ = syscall(nr, __VA_ARGS__);         \
    if (rc_ == 0 && (nr) == SYS_clone) _exit(0); \
    expect_eperm(#nr, rc_, errno);               \
  } while (0)

int main(void) {
  PROBE(SYS_unshare, CLONE_NEWUSER);
  PROBE(SYS_unshare, CLONE_NEWUSER | CLONE_NEWNS);
  PROBE(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
  PROBE(SYS_setns, 0, 0);
  PROBE(SYS_mount, "none", "/tmp", "tmpfs", 0, 0);
  PROBE(SYS_umount2, "/tmp", 0);
  PROBE(SYS_pivot_root, ".", ".");
  PROBE(SYS_fsopen, "tmpfs", 0);
  PROBE(SYS_open_tree, -100, "/", 0);
  PROBE(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3 /* session */, 0);
  PROBE(SYS_add_key, "user", "np-exec-probe", "x", 1, -2 /* process keyring */);
  PROBE(SYS_request_key, "user", "np-exec-none", 0, 0);
  PROBE(SYS_bpf, 0, 0, 0);
  PROBE(SYS_perf_event_open, 0, 0, -1, -1, 0);
  PROBE(SYS_ptrace, 2 /* PTRACE_PEEKDATA */, 1, 0, 0);
  PROBE(SYS_process_vm_readv, 1, 0, 0, 0, 0, 0);
  PROBE(SYS_kexec_load, 0, 0, 0, 0);
  PROBE(SYS_kexec_file_load, -1, -1, 0, 0, 0);
  PROBE(SYS_init_module, 0, 0, "");
  PROBE(SYS_finit_module, -1, "", 0);
  PROBE(SYS_delete_module, "np_exec_none", 0);
  PROBE(SYS_open_by_handle_at, -1, 0, 0);
  PROBE(SYS_userfaultfd, 0);
  PROBE(SYS_io_uring_setup, 1, 0);
  /* docker's profile allows personality() only with 0, 0x8, 0x20000,
   * 0x20008 and 0xffffffff (a query): READ_IMPLIES_EXEC (0x0400000) and
   * ADDR_NO_RANDOMIZE (0x0040000) are refused. */
  PROBE(SYS_personality, 0x0400000);
  PROBE(SYS_personality, 0x0040000);
  PROBE(SYS_personality, 0x0040008);
  PROBE(SYS_modify_ldt, 0, 0, 0);
  {
    /* The terminal's line discipline and input: on stdin (a pipe here, or
     * the caller's terminal), and with bits above 31 set in the request,
     * which the kernel drops. */
    int ldisc = 0;
    char byte = 'x';
    PROBE(SYS_ioctl, 0, TIOCSETD, &ldisc);
    PROBE(SYS_ioctl, 0, TIOCSTI, &byte);
    PROBE(SYS_ioctl, 0, TIOCLINUX, &byte);
    PROBE(SYS_ioctl, 0, 0x100000000UL | TIOCSTI, &byte);
    PROBE(SYS_ioctl, 0, 0xffffffff00000000UL | TIOCSETD, &ldisc);
  }
  {
    errno = 0;
    long rc = syscall(SYS_personality, 0xffffffffUL);
    expect_not_eperm("personality query", rc, errno);
    errno = 0;
    rc = syscall(SYS_personality, rc == -1 ? 0UL : (unsigned long)rc);
    expect_not_eperm("personality set back", rc, errno);
  }
  printf("probed %d\n", probed);
  return 0;
}
