// A member of a copy-out archive: `docker cp CONTAINER:/etc -` and `podman
// cp` write a directory as a tar stream (POSIX ustar, with PAX extended
// headers when a field does not fit, GNU long names from some writers), its
// links as links. (A single file copied out of podman is its link's target
// under the target's name, which is why np-exec copies the directory.) Pure:
// bytes in, the member's kind and content out.
#ifndef NP_EXEC_CORE_TAR_FILE_H_
#define NP_EXEC_CORE_TAR_FILE_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace np {

struct TarFile {
  enum class Kind {
    kRegular,     // A regular file; `content` holds it.
    kNotRegular,  // A symbolic or hard link, a directory, a device, a FIFO.
    kTooLarge,    // A regular file larger than the cap.
    kMissing,     // The archive ended without it.
    kMalformed,   // Not a tar stream, a bad checksum, or cut short before it.
  };
  Kind kind = Kind::kMalformed;
  std::string content;
};

// The member of `archive` named `name` ("etc/passwd"; a leading "./" and a
// trailing "/" of a member's name are ignored), its name from a PAX `path`,
// a GNU long name or ustar's prefix and name; a PAX `size` overrides the
// header's. A regular file over `max_bytes` is kTooLarge without its content,
// even when the archive was cut short after its header.
TarFile FindTarFile(absl::string_view archive, absl::string_view name, size_t max_bytes);

}  // namespace np

#endif  // NP_EXEC_CORE_TAR_FILE_H_
