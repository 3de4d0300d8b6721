#include "launcher/runtime/seccomp_rules.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "launcher/runtime/seccomp_error.h"

namespace np {
namespace {

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
    if (rc != 0) return SeccompFilterError(absl::StrCat("rule for ", name), -rc);
  }
  return absl::OkStatus();
}

// personality() with any value but those docker's default profile allows
// (SeccompAllowedPersonalities): the others turn off address-space
// randomisation (ADDR_NO_RANDOMIZE) or make every readable page executable
// (READ_IMPLIES_EXEC), which helps an exploit of the kernel or of a host
// program the sandbox shares. libseccomp takes one comparison per argument
// and rule, and rules of one action are alternatives, so the refused values
// are spelled as a union of single masked comparisons "bit b set, bit c
// clear". The allowed values other than the query 0xffffffff set no bit but
// 3 and 17 (the allowed bits); call the other 30 bits free. A value below
// 2^32 is refused exactly when it sets a free bit and is not 0xffffffff:
// - if its free bits are neither all set nor all clear, walking the free
//   bits in a ring finds a set one whose successor is clear: one rule per
//   free bit and its successor (30 rules);
// - if all its free bits are set, one of the allowed bits is clear (it is
//   not 0xffffffff): "the first free bit set, bit 3 clear" and the same for
//   bit 17 (2 rules);
// - if none is set, it is one of the allowed values and no rule matches.
// Larger values are refused outright (the kernel would read their low 32
// bits). 33 rules where a rule per bit and parity took 61: a shorter program
// for the kernel to check and compile at every sandbox's start.
absl::Status RefusePersonalities(scmp_filter_ctx ctx) {
  const int nr = seccomp_syscall_resolve_name("personality");
  if (nr == __NR_SCMP_ERROR) return absl::OkStatus();
  auto refuse = [ctx, nr](scmp_compare op, uint64_t a, uint64_t b) {
    scmp_arg_cmp cmp{};
    cmp.arg = 0;
    cmp.op = op;
    cmp.datum_a = a;
    cmp.datum_b = b;
    const int rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1, &cmp);
    return rc == 0 ? absl::OkStatus() : SeccompFilterError("rule for personality", -rc);
  };
  // "bit `set` set and bit `clear` clear"
  auto refuse_pair = [&refuse](uint64_t set, uint64_t clear) {
    return refuse(SCMP_CMP_MASKED_EQ, set | clear, set);
  };
  uint64_t allowed_bits = 0;
  for (unsigned long value : SeccompAllowedPersonalities()) {
    if (value != 0xffffffffUL) allowed_bits |= value;
  }
  std::vector<uint64_t> free_bits;
  for (int bit = 0; bit < 32; ++bit) {
    if ((allowed_bits & (uint64_t{1} << bit)) == 0) free_bits.push_back(uint64_t{1} << bit);
  }
  for (size_t i = 0; i < free_bits.size(); ++i) {
    absl::Status ring = refuse_pair(free_bits[i], free_bits[(i + 1) % free_bits.size()]);
    if (!ring.ok()) return ring;
  }
  for (int bit = 0; bit < 32; ++bit) {
    const uint64_t mask = uint64_t{1} << bit;
    if ((allowed_bits & mask) == 0) continue;
    absl::Status all_free = refuse_pair(free_bits.front(), mask);
    if (!all_free.ok()) return all_free;
  }
  return refuse(SCMP_CMP_GT, 0xffffffffULL, 0);
}

// The terminal ioctls that reach past the program's own output
// (SeccompRefusedIoctls). The kernel reads the request as a 32-bit unsigned
// int, so the comparison masks the upper half: a request with bits set above
// bit 31 is the same request to the kernel and must not slip past.
absl::Status RefuseTtyIoctls(scmp_filter_ctx ctx) {
  const int nr = seccomp_syscall_resolve_name("ioctl");
  if (nr == __NR_SCMP_ERROR) return absl::OkStatus();
  for (unsigned long request : SeccompRefusedIoctls()) {
    scmp_arg_cmp cmp{};
    cmp.arg = 1;
    cmp.op = SCMP_CMP_MASKED_EQ;
    cmp.datum_a = 0xffffffffUL;
    cmp.datum_b = request;
    const int rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1, &cmp);
    if (rc != 0) return SeccompFilterError(absl::StrCat("rule for ioctl ", request), -rc);
  }
  return absl::OkStatus();
}

absl::Status AddRules(scmp_filter_ctx ctx) {
  for (const std::string& name : SeccompBlockedCalls()) {
    int nr = seccomp_syscall_resolve_name(name.c_str());
    // A call this libseccomp or architecture does not know cannot be made.
    if (nr == __NR_SCMP_ERROR) continue;
    int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
    if (rc != 0) return SeccompFilterError(absl::StrCat("rule for ", name), -rc);
  }
  // clone3 passes its flags in a struct the filter cannot read, so it is
  // refused with ENOSYS, which makes the C library fall back to clone (whose
  // flags the filter does read), as docker's profile does.
  int clone3 = seccomp_syscall_resolve_name("clone3");
  if (clone3 != __NR_SCMP_ERROR) {
    int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), clone3, 0);
    if (rc != 0) return SeccompFilterError("rule for clone3", -rc);
  }
  // clone's flags are its first argument on x86 (s390 swaps the first two,
  // and np-exec does not build for it).
  absl::Status clone = RefuseNamespaceFlags(ctx, "clone", 0);
  if (!clone.ok()) return clone;
  absl::Status unshare = RefuseNamespaceFlags(ctx, "unshare", 0);
  if (!unshare.ok()) return unshare;
  absl::Status persona = RefusePersonalities(ctx);
  if (!persona.ok()) return persona;
  return RefuseTtyIoctls(ctx);
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
      "io_uring_register",
      // Per-process segment descriptors: 16-bit segments and a kernel
      // surface with a history of bugs; docker leaves it out.
      "modify_ldt"};
  return *calls;
}

const std::vector<unsigned long>& SeccompAllowedPersonalities() {
  // docker's default profile: PER_LINUX (0), PER_LINUX32 (0x0008), UNAME26
  // (0x20000), PER_LINUX32 | UNAME26, and 0xffffffff, which only asks for the
  // current persona.
  static const auto* values =
      new std::vector<unsigned long>{0x0UL, 0x0008UL, 0x20000UL, 0x20008UL, 0xffffffffUL};
  return *values;
}

const std::vector<unsigned long>& SeccompRefusedIoctls() {
  // TIOCSTI pushes bytes into a terminal's input (the host shell reads them
  // as typed once the program exits); TIOCLINUX does the same on a virtual
  // console and more; TIOCSETD swaps the line discipline, loading kernel code
  // that has had use-after-free bugs. docker refuses TIOCSTI and TIOCLINUX
  // outright where the kernel allows them.
  static const auto* requests = new std::vector<unsigned long>{TIOCSTI, TIOCLINUX, TIOCSETD};
  return *requests;
}

unsigned long SeccompRefusedCloneFlags() {
  return CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWPID | CLONE_NEWNET |
         CLONE_NEWCGROUP;
}

absl::StatusOr<std::string> CompileSeccompFilter() {
  Context context;
  context.ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (context.ctx == nullptr) return SeccompFilterError("seccomp_init", ENOMEM);
  // Only the native ABI is listed, and a call through any other (int 0x80,
  // x32) kills the whole process, not only the calling thread (libseccomp's
  // default): no way around the rules, and no program left running without
  // the thread it lost.
  int bad_arch = seccomp_attr_set(context.ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  if (bad_arch != 0) return SeccompFilterError("seccomp_attr_set", -bad_arch);
  // A binary tree of system-call numbers instead of a list: the kernel
  // walks the program once per call number when it loads it (to learn which
  // calls it can always allow), so a list costs every sandbox's start about
  // three times the tree's. The same rules, the same decisions.
  int optimize = seccomp_attr_set(context.ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
  if (optimize != 0) return SeccompFilterError("seccomp_attr_set", -optimize);
  absl::Status built = AddRules(context.ctx);
  if (!built.ok()) return built;
  // libseccomp 2.5 exports to a descriptor only.
  const int fd = memfd_create("np-exec seccomp filter", MFD_CLOEXEC);
  if (fd < 0) return SeccompFilterError("memfd_create", errno);
  std::string bpf;
  int rc = seccomp_export_bpf(context.ctx, fd);
  int err = rc != 0 ? -rc : 0;
  if (rc == 0 && lseek(fd, 0, SEEK_SET) != 0) err = errno;
  char buffer[4096];
  ssize_t n = 0;
  while (err == 0 && (n = read(fd, buffer, sizeof(buffer))) != 0) {
    if (n < 0) {
      err = errno;
    } else {
      bpf.append(buffer, static_cast<size_t>(n));
    }
  }
  close(fd);
  if (err != 0) return SeccompFilterError("seccomp_export_bpf", err);
  return bpf;
}

}  // namespace np
