// The bubblewrap sandbox's /etc as one prepared directory.
//
// bubblewrap re-reads /proc/self/mountinfo after every bind, so each bind
// costs more than the one before; binding each of the /etc files programs
// need (core's SandboxEtcFiles) one by one was a fifth of a spawn. Instead
// the launcher keeps a copy of exactly those files in the operator's state
// store (`<store>/etc-view/v-<hash>/`, the store is the caller's, mode 0700),
// and the sandbox gets that one directory read-only at /etc. The copy holds
// the same names with the same content and modes (set-id bits dropped), the
// links inside the copied directories as links (the sandbox resolves them
// as bubblewrap's per-file binds did), and for a top-level entry that is a
// link (/etc/localtime) what it points to, as bubblewrap's bind followed it.
// Nothing of the host is shared with the sandbox: every file is a copy, so
// the program inside cannot write back to the host even if a mount went
// wrong, and it cannot write the copy (a read-only bind; no capability).
//
// The copy is reused while every file and directory it was made from keeps
// its identity (device, inode, mode, size, modification and change times:
// `<store>/etc-view/current` lists them, and a spawn stats each of them,
// about twenty lstat calls); anything else makes a new copy, built in a
// private temporary directory and renamed into place, so a reader sees a
// whole copy or none. Copies replaced more than kEtcViewKeepSeconds ago are
// removed. Touches the filesystem.
#ifndef NP_EXEC_LAUNCHER_RUNTIME_BWRAP_ETC_VIEW_H_
#define NP_EXEC_LAUNCHER_RUNTIME_BWRAP_ETC_VIEW_H_

#include <sys/types.h>

#include <string>

#include "absl/status/statusor.h"

namespace np {

// How long a replaced copy stays for sandboxes (or printed plans) that still
// name it.
inline constexpr int kEtcViewKeepSeconds = 600;

// The host path of the current copy of the sandbox's /etc files under the
// state store directory `store_dir` (launcher/state/state_store.h: already opened
// and checked as the caller's), made or refreshed as needed. Code
// `etc-view-failed` when it cannot be made (a source file unreadable, the
// store not writable, a directory not the caller's); the caller then binds
// the files one by one, which gives the same sandbox.
// `dir_mode` is the mode of the directories bubblewrap would have made for the
// per-file binds (/etc itself, /etc/ssl: core's kBwrapMadeDirMode), which
// the copy's own get.
absl::StatusOr<std::string> PrepareEtcView(const std::string& store_dir, uid_t uid,
                                           unsigned dir_mode);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_RUNTIME_BWRAP_ETC_VIEW_H_
