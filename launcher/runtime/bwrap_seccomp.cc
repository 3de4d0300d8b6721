#include "launcher/runtime/bwrap_seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/errors.h"

namespace np {
namespace {

absl::Status FilterError(absl::string_view what, int err) {
  return MakeError(
      absl::StatusCode::kInternal, "seccomp-filter-failed",
      absl::StrCat("cannot build the sandbox's system-call filter: ", what, ": ", strerror(err)),
      {{"step", std::string(what)}});
}

// Owns a libseccomp context.
struct Context {
  scmp_filter_ctx ctx = nullptr;
  ~Context() {
    if (ctx != nullptr) seccomp_release(ctx);
  }
};

// A call the filter refuses when `flags_arg` carries a namespace flag.
absl::Status RefuseNamespaceFlags(scmp_filter_ctx ctx, const char* name, unsigned int flags_arg) {
  int nr = seccomp_syscall_resolve_name(name);
  if (nr == __NR_SCMP_ERROR) return absl::OkStatus();
  // One rule per flag: a masked comparison matches when that bit is set.
  for (unsigned long flag : {CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWPID,
                             CLONE_NEWNET, CLONE_NEWCGROUP}) {
    scmp_arg_cmp cmp{};
    cmp.arg = flags_arg;
    cmp.op = SCMP_CMP_MASKED_EQ;
    cmp.datum_a = flag;
    cmp.datum_b = flag;
    int rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1, &cmp);
    if (rc != 0) return FilterError(absl::StrCat("rule for ", name), -rc);
  }
  return absl::OkStatus();
}

absl::Status AddRules(scmp_filter_ctx ctx) {
  for (const std::string& name : SeccompBlockedCalls()) {
    int nr = seccomp_syscall_resolve_name(name.c_str());
    // A call this libseccomp or architecture does not know cannot be made.
    if (nr == __NR_SCMP_ERROR) continue;
    int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
    if (rc != 0) return FilterError(absl::StrCat("rule for ", name), -rc);
  }
  // clone3 passes its flags in a struct the filter cannot read, so it is
  // refused with ENOSYS, which makes the C library fall back to clone (whose
  // flags the filter does read), as docker's profile does.
  int clone3 = seccomp_syscall_resolve_name("clone3");
  if (clone3 != __NR_SCMP_ERROR) {
    int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), clone3, 0);
    if (rc != 0) return FilterError("rule for clone3", -rc);
  }
  // clone's flags are its first argument on x86 (s390 swaps the first two,
  // and np-exec does not build for it).
  absl::Status clone = RefuseNamespaceFlags(ctx, "clone", 0);
  if (!clone.ok()) return clone;
  return RefuseNamespaceFlags(ctx, "unshare", 0);
}

}  // namespace

const std::vector<std::string>& SeccompBlockedCalls() {
  // docker's default profile leaves these out for a process without
  // capabilities; a program in the sandbox has none, so the kernel would
  // refuse most of them anyway, except that a nested user namespace gives it
  // a full set again. The filter closes them whatever the namespace.
  static const auto* calls = new std::vector<std::string>{
      // Namespaces and mounts, the classic and the new mount API.
      "setns", "mount", "umount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig",
      "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr",
      // The kernel keyring.
      "keyctl", "add_key", "request_key",
      // Kernel programs, tracing and other processes' memory.
      "bpf", "perf_event_open", "ptrace", "process_vm_readv", "process_vm_writev", "kcmp",
      "lookup_dcookie",
      // Replacing the kernel, modules, the machine itself.
      "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
      "create_module", "get_kernel_syms", "query_module", "reboot", "swapon", "swapoff", "acct",
      "quotactl", "nfsservctl", "uselib", "ustat", "sysfs", "_sysctl", "syslog",
      // Clocks, I/O ports, NUMA policy.
      "settimeofday", "stime", "clock_settime", "clock_adjtime", "ioperm", "iopl", "vm86",
      "vm86old", "mbind", "set_mempolicy", "move_pages",
      // Files by handle (the shocker escape), userfaultfd (race widening),
      // io_uring (runs calls the filter never sees).
      "open_by_handle_at", "name_to_handle_at", "userfaultfd", "io_uring_setup", "io_uring_enter",
      "io_uring_register"};
  return *calls;
}

unsigned long SeccompRefusedCloneFlags() {
  return CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWPID | CLONE_NEWNET |
         CLONE_NEWCGROUP;
}

absl::StatusOr<int> BuildSeccompFilterFd() {
  Context context;
  context.ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (context.ctx == nullptr) return FilterError("seccomp_init", ENOMEM);
  // Only the native ABI is listed, and a call through any other (int 0x80,
  // x32) kills the process (libseccomp's default bad-architecture action):
  // no way around the rules, and each listed ABI would cost about 0.1 ms to
  // compile on every spawn (0.05 ms for the native one alone, measured here).
  absl::Status built = AddRules(context.ctx);
  if (!built.ok()) return built;
  int fd = memfd_create("np-exec seccomp filter", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return FilterError("memfd_create", errno);
  int rc = seccomp_export_bpf(context.ctx, fd);
  if (rc != 0 || lseek(fd, 0, SEEK_SET) != 0) {
    int err = rc != 0 ? -rc : errno;
    close(fd);
    return FilterError("seccomp_export_bpf", err);
  }
  // Sealed, so nothing that gets hold of the descriptor can change the filter.
  if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) != 0) {
    int err = errno;
    close(fd);
    return FilterError("sealing the filter", err);
  }
  return fd;
}

absl::Status AddSeccompArg(std::vector<std::string>& argv, int fd) {
  if (argv.empty()) return FilterError("no bubblewrap argv", EINVAL);
  for (size_t i = 1; i < argv.size() && argv[i] != "--"; ++i) {
    if (argv[i] == "--seccomp" || argv[i] == "--add-seccomp-fd") {
      return MakeError(
          absl::StatusCode::kInvalidArgument, "seccomp-filter-failed",
          absl::StrCat("the bubblewrap argv already names a system-call filter (", argv[i],
                       "); np-exec passes its own and refuses to run "
                       "with another, since bubblewrap would apply only one"),
          {{"option", argv[i]}});
    }
  }
  argv.insert(argv.begin() + 1, {"--seccomp", absl::StrCat(fd)});
  return absl::OkStatus();
}

}  // namespace np
