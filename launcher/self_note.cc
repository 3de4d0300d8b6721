// The ELF note that marks this binary as np-exec (shim/elf_note.h), so a shim
// reached through another copy or version of np-exec skips it on PATH as it
// skips itself. Linked into the np-exec executable only, as an object of its
// own: nothing references it, so from an archive it would never be linked.
#include <cstdint>

#include "shim/elf_note.h"

namespace np {
namespace {

// The ELF note format: namesz, descsz, type, then the NUL-terminated name and
// the descriptor, each padded to 4 bytes.
struct NpExecNote {
  uint32_t namesz;
  uint32_t descsz;
  uint32_t type;
  char name[8];
  uint32_t desc;  // The note's format version.
};
static_assert(sizeof(NpExecNote) == 24, "the note must have no padding of its own");
static_assert(kNpExecNoteName.size() + 1 == sizeof(NpExecNote::name), "name field size");

// AddressSanitizer would pad the note with a poisoned redzone, which a walk
// of the PT_NOTE segment in memory (the build ID's, remote_check.cc) then
// reads as the next note: the note is left uninstrumented (clang, which
// scripts/sanitize.sh builds with).
#if defined(__clang__)
#define NP_NOTE_UNINSTRUMENTED __attribute__((no_sanitize("address")))
#else
#define NP_NOTE_UNINSTRUMENTED
#endif

// A section named .note.* is given type SHT_NOTE, and the linker keeps such
// sections (even with --gc-sections) and places them in a PT_NOTE segment.
[[gnu::section(".note.np-exec"), gnu::used,
  gnu::aligned(4)]] NP_NOTE_UNINSTRUMENTED const NpExecNote kSelfNote = {
    sizeof(NpExecNote::name), sizeof(uint32_t), kNpExecNoteType, "np-exec", 1};

}  // namespace
}  // namespace np
