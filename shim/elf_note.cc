#include "shim/elf_note.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace np {
namespace {

constexpr uint32_t kPtNote = 4;
constexpr uint16_t kPnXnum = 0xffff;  // The real count lives elsewhere: treat as too many.
constexpr uint64_t kHeadBytes = 4096;

// Decodes the fixed-width fields of an image of either byte order.
class Fields {
 public:
  Fields(absl::string_view bytes, bool big_endian) : bytes_(bytes), big_endian_(big_endian) {}

  // False when [offset, offset + width) is outside the bytes.
  bool Get(size_t offset, size_t width, uint64_t* value) const {
    if (offset > bytes_.size() || width > bytes_.size() - offset) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < width; ++i) {
      const uint64_t byte = static_cast<unsigned char>(bytes_[offset + i]);
      v |= big_endian_ ? byte << (8 * (width - 1 - i)) : byte << (8 * i);
    }
    *value = v;
    return true;
  }

 private:
  absl::string_view bytes_;
  bool big_endian_;
};

// Where each field sits, for ELFCLASS32 and ELFCLASS64.
struct Layout {
  size_t header_size, phoff_at, phoff_width, phentsize_at, phnum_at;
  size_t phdr_size, p_offset_at, p_filesz_at, p_align_at, word;
};
constexpr Layout kElf32 = {52, 28, 4, 42, 44, 32, 4, 16, 28, 4};
constexpr Layout kElf64 = {64, 32, 8, 54, 56, 56, 8, 32, 48, 8};

size_t RoundUp(size_t n, size_t align) { return (n + align - 1) / align * align; }

// Walks the notes of one segment; `align` is 4 or 8 (the segment's p_align).
bool SegmentHasNote(absl::string_view notes, bool big_endian, size_t align) {
  const Fields f(notes, big_endian);
  size_t at = 0;
  while (notes.size() - at >= 12) {
    uint64_t namesz = 0, descsz = 0, type = 0;
    if (!f.Get(at, 4, &namesz) || !f.Get(at + 4, 4, &descsz) || !f.Get(at + 8, 4, &type)) {
      return false;
    }
    const size_t name_at = at + 12;
    if (namesz > notes.size() - name_at) return false;
    // Both offsets are aligned from the note's start, as readelf reads them.
    const size_t desc_at = at + RoundUp(12 + namesz, align);
    if (desc_at > notes.size() || descsz > notes.size() - desc_at) return false;
    // The name is stored with its terminating NUL.
    if (type == kNpExecNoteType && namesz == kNpExecNoteName.size() + 1 &&
        notes.substr(name_at, kNpExecNoteName.size()) == kNpExecNoteName &&
        notes[name_at + kNpExecNoteName.size()] == '\0') {
      return true;
    }
    const size_t next = at + RoundUp(desc_at - at + descsz, align);
    if (next <= at) return false;
    at = next;
    if (at > notes.size()) return false;
  }
  return false;
}

}  // namespace

bool FindNpExecNote(const ReadAt& read) {
  std::string ident;
  if (!read(0, 16, &ident) || ident.size() != 16 ||
      ident.compare(0, 4,
                    "\x7f"
                    "ELF") != 0) {
    return false;
  }
  const bool is64 = ident[4] == 2;
  if (!is64 && ident[4] != 1) return false;
  if (ident[5] != 1 && ident[5] != 2) return false;
  const bool big_endian = ident[5] == 2;
  const Layout& l = is64 ? kElf64 : kElf32;
  std::string header;
  if (!read(0, l.header_size, &header) || header.size() != l.header_size) return false;
  const Fields h(header, big_endian);
  uint64_t phoff = 0, phentsize = 0, phnum = 0;
  if (!h.Get(l.phoff_at, l.phoff_width, &phoff) || !h.Get(l.phentsize_at, 2, &phentsize) ||
      !h.Get(l.phnum_at, 2, &phnum)) {
    return false;
  }
  if (phnum == 0 || phnum == kPnXnum || phnum > kMaxProgramHeaders) return false;
  if (phentsize < l.phdr_size || phentsize > 256) return false;
  std::string table;
  const size_t table_size = static_cast<size_t>(phnum * phentsize);
  if (!read(phoff, table_size, &table) || table.size() != table_size) return false;
  const Fields t(table, big_endian);
  size_t segments = 0;
  for (size_t i = 0; i < phnum; ++i) {
    const size_t at = i * phentsize;
    uint64_t type = 0, offset = 0, filesz = 0, align = 0;
    if (!t.Get(at, 4, &type) || type != kPtNote) continue;
    if (!t.Get(at + l.p_offset_at, l.word, &offset) ||
        !t.Get(at + l.p_filesz_at, l.word, &filesz) || !t.Get(at + l.p_align_at, l.word, &align)) {
      return false;
    }
    if (++segments > kMaxNoteSegments) return false;
    if (filesz == 0 || filesz > kMaxNoteSegmentBytes) continue;
    std::string notes;
    if (!read(offset, static_cast<size_t>(filesz), &notes) || notes.size() != filesz) continue;
    if (SegmentHasNote(notes, big_endian, align == 8 ? 8 : 4)) return true;
  }
  return false;
}

bool HasNpExecNote(const std::string& path) {
  // open(2) would stop at a NUL and read another file than the one named.
  if (path.find('\0') != std::string::npos) return false;
  // O_NONBLOCK: a FIFO swapped in after the caller's stat must not hang the
  // lookup; fstat below then refuses anything but a regular file.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st;
  bool found = false;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    auto pread_exactly = [fd](uint64_t offset, size_t length, char* out) {
      size_t done = 0;
      while (done < length) {
        const ssize_t n = pread(fd, out + done, length - done, static_cast<off_t>(offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += static_cast<size_t>(n);
      }
      return true;
    };
    // The header, the program headers and the first notes of an executable
    // sit in its first page: one read serves them, the lookup is on the path
    // of every spawn.
    std::string head(static_cast<size_t>(std::min<uint64_t>(size, kHeadBytes)), '\0');
    if (pread_exactly(0, head.size(), head.data())) {
      found = FindNpExecNote([&](uint64_t offset, size_t length, std::string* out) {
        if (offset > size || length > size - offset) return false;
        if (offset + length <= head.size()) {
          out->assign(head, static_cast<size_t>(offset), length);
          return true;
        }
        out->assign(length, '\0');
        return pread_exactly(offset, length, out->data());
      });
    }
  }
  close(fd);
  return found;
}

}  // namespace np
