// A sealed memfd holding bytes np-exec hands a runtime by descriptor (the
// seccomp filter, a handed-off argv, the account view's files): written
// once, sealed so nothing that gets hold of the descriptor can change what
// the reader sees, read from its start, close-on-exec until the child that
// needs it clears that, and never on 0, 1 or 2 (a standard descriptor closed
// at np-exec's start would otherwise make it a child's stdin or stdout).
// Not executable where the kernel asks memfds to say so (vm.memfd_noexec).
// Touches descriptors.
#ifndef NP_EXEC_LAUNCHER_RUNTIME_SEALED_MEMFD_H_
#define NP_EXEC_LAUNCHER_RUNTIME_SEALED_MEMFD_H_

#include "absl/strings/string_view.h"

namespace np {

// The descriptor, or -1 with errno.
int SealedMemfd(const char* name, absl::string_view bytes);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_RUNTIME_SEALED_MEMFD_H_
