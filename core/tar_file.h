// The one file of a copy-out archive: `docker cp CONTAINER:PATH -` and
// `podman cp` write the path itself as a tar stream (POSIX ustar, with PAX
// extended headers when a field does not fit), a link as a link, never its
// target. Pure: bytes in, the file's kind and content out.
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
    kMalformed,   // Not a tar stream, a bad checksum, or cut short.
  };
  Kind kind = Kind::kMalformed;
  std::string content;
};

// The first file of `archive` (PAX and GNU long-name headers before it are
// read or skipped; a PAX `size` overrides the header's). A regular file over
// `max_bytes` is kTooLarge without its content, even when the archive was cut
// short after the header.
TarFile FirstTarFile(absl::string_view archive, size_t max_bytes);

}  // namespace np

#endif  // NP_EXEC_CORE_TAR_FILE_H_
