// Recognising np-exec by content: the ELF note every np-exec carries.
//
// A copy of np-exec (a second installation, another version, a `cp` under
// another name) has its own inode, so file identity cannot tell it is np-exec.
// Each np-exec binary therefore carries a small ELF note (section
// `.note.np-exec`, owner "np-exec", type kNpExecNoteType; see
// launcher/self_note.cc), which the linker places in a PT_NOTE segment. The
// shim's lookup reads a candidate's program headers and note segments, a few
// KB with bounded reads, and skips a file that carries the note.
//
// FindNpExecNote is pure: it parses bytes it gets through an injected reader,
// so hostile and truncated images are unit-tested without files.
// HasNpExecNote reads a real file (open + pread; no exec).
#ifndef NP_EXEC_SHIM_ELF_NOTE_H_
#define NP_EXEC_SHIM_ELF_NOTE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/strings/string_view.h"

namespace np {

// The note's owner name (the ELF note "name" field, NUL-terminated on disk).
inline constexpr absl::string_view kNpExecNoteName = "np-exec";
// The note's type within that owner's namespace: "this file is np-exec".
inline constexpr uint32_t kNpExecNoteType = 1;

// Bounds on what is read from a candidate, so a hostile file (a huge program
// header table, a note segment of gigabytes) costs at most a few reads.
inline constexpr size_t kMaxProgramHeaders = 128;
inline constexpr size_t kMaxNoteSegmentBytes = 16 * 1024;
inline constexpr size_t kMaxNoteSegments = 8;

// Reads exactly `length` bytes at `offset` into *out; false when the file is
// shorter or unreadable.
using ReadAt = std::function<bool(uint64_t offset, size_t length, std::string* out)>;

// True when the ELF image behind `read` (32- or 64-bit, either byte order) has
// a PT_NOTE segment holding a note of owner kNpExecNoteName and type
// kNpExecNoteType. Anything else (not ELF, truncated, malformed, over the
// bounds) is false: such a file is simply not np-exec.
bool FindNpExecNote(const ReadAt& read);

// FindNpExecNote on the file at `path`; false when it cannot be opened for
// reading (an execute-only file is not recognised, and runs as a program).
bool HasNpExecNote(const std::string& path);

}  // namespace np

#endif  // NP_EXEC_SHIM_ELF_NOTE_H_
