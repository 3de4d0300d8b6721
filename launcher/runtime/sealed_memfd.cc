#include "launcher/runtime/sealed_memfd.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/project_location.h"
#include "launcher/output.h"

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U  // Linux 6.3; older kernels refuse it (EINVAL).
#endif

namespace np {

int SealedMemfd(const char* name, absl::string_view bytes) {
  int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL);
  if (fd < 0 && errno == EINVAL) fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  fd = KeepAboveStandardFds(fd);
  if (fd < 0) return -1;
  int err = 0;
  errno = 0;
  if (!WriteAll(fd, bytes)) err = errno != 0 ? errno : EIO;  // A write of 0 bytes: EIO.
  if (err == 0 &&
      (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0 ||
       lseek(fd, 0, SEEK_SET) != 0)) {
    err = errno;
  }
  if (err != 0) {
    close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

}  // namespace np
