#include "launcher/remote_check.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "core/sha256.h"

namespace np {
namespace {

constexpr size_t kNonceBytes = 24;
// More than any nonce file np-exec writes: a longer file is another's.
constexpr size_t kMaxNonceFileBytes = 256;

// The GNU build ID note among the executable's PT_NOTE segments.
int FindBuildId(struct dl_phdr_info* info, size_t /*size*/, void* out) {
  // The first object is the executable itself (a static one has no other).
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& phdr = info->dlpi_phdr[i];
    if (phdr.p_type != PT_NOTE) continue;
    const char* at = reinterpret_cast<const char*>(info->dlpi_addr + phdr.p_vaddr);
    const char* end = at + phdr.p_memsz;
    while (at + sizeof(ElfW(Nhdr)) <= end) {
      const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(at);
      const char* name = at + sizeof(ElfW(Nhdr));
      const char* desc = name + ((note->n_namesz + 3) & ~3u);
      if (desc + note->n_descsz > end) break;
      if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
        *static_cast<std::string*>(out) =
            absl::BytesToHexString(absl::string_view(desc, note->n_descsz));
        return 1;
      }
      at = desc + ((note->n_descsz + 3) & ~3u);
    }
  }
  return 1;  // Only the executable is asked.
}

absl::StatusOr<std::string> RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  if (getrandom(raw.data(), raw.size(), 0) != static_cast<ssize_t>(raw.size())) {
    return MakeError(absl::StatusCode::kInternal, "spawn-failed",
                     absl::StrCat("getrandom: ", strerror(errno), "; nothing ran"));
  }
  return absl::BytesToHexString(raw);
}

absl::Status NonceFailed(absl::string_view what) {
  return MakeError(absl::StatusCode::kInternal, "spawn-failed",
                   absl::StrCat("cannot write the remote engine's check file into the project (",
                                what, ": ", strerror(errno), "); nothing ran"));
}

}  // namespace

std::string SelfBuildId() {
  std::string id;
  dl_iterate_phdr(FindBuildId, &id);
  return id;
}

absl::StatusOr<RemoteNonce> RemoteNonce::Create(int project_fd, const std::string& project_root) {
  RemoteCheck check;
  check.self_build_id = SelfBuildId();
  if (check.self_build_id.empty()) {
    return MakeError(absl::StatusCode::kFailedPrecondition, "isolation-engine-remote-unsupported",
                     "this np-exec carries no GNU build ID, by which the engine's host proves it "
                     "runs the same build; nothing ran",
                     {{"reason", "no-build-id"}});
  }
  absl::StatusOr<std::string> suffix = RandomHex(8);
  absl::StatusOr<std::string> nonce = suffix.ok() ? RandomHex(kNonceBytes) : suffix;
  if (!nonce.ok()) return nonce.status();
  check.nonce_name = absl::StrCat(kRemoteNoncePrefix, *suffix);
  check.nonce = *nonce;
  const int dir = project_fd >= 0
                      ? fcntl(project_fd, F_DUPFD_CLOEXEC, 3)
                      : open(project_root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0) return NonceFailed("the project folder");
  const int fd = openat(dir, check.nonce_name.c_str(),
                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    absl::Status failed = NonceFailed(check.nonce_name);
    close(dir);
    return failed;
  }
  // 0644 whatever the umask: an image's own user must read it too.
  const bool written = fchmod(fd, 0644) == 0 && write(fd, check.nonce.data(), check.nonce.size()) ==
                                                    static_cast<ssize_t>(check.nonce.size());
  // Held for the spawn: whether the entry point consumed this very file is
  // told by its link count, whatever the program puts at its name later.
  check.file_fd = fd;
  RemoteNonce made(dir, std::move(check));
  if (!written) return NonceFailed(made.check_.nonce_name);
  return made;
}

RemoteNonce::RemoteNonce(RemoteNonce&& other) noexcept
    : dir_fd_(other.dir_fd_), check_(std::move(other.check_)) {
  other.dir_fd_ = -1;
  other.check_.file_fd = -1;
}

RemoteNonce::~RemoteNonce() {
  if (check_.file_fd >= 0) close(check_.file_fd);
  if (dir_fd_ < 0) return;
  (void)unlinkat(dir_fd_, check_.nonce_name.c_str(), 0);
  close(dir_fd_);
}

absl::Status VerifyRemoteProject(const std::string& build_id, const std::string& project_target,
                                 const std::string& name, const std::string& nonce_digest) {
  const std::string own = SelfBuildId();
  if (own != build_id) return RemoteSelfMismatch(own.empty() ? "no build ID" : "another build");
  struct stat project;
  if (stat(project_target.c_str(), &project) != 0) {
    return ProjectNotShared(project_target, "nothing");
  }
  const std::string path = absl::StrCat(project_target, "/", name);
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    return ProjectNotShared(project_target, errno == ELOOP ? "a link" : "no check file");
  }
  struct stat st;
  std::string found(kMaxNonceFileBytes, '\0');
  const bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == project.st_dev;
  const ssize_t n = regular ? read(fd, found.data(), found.size()) : -1;
  close(fd);
  if (!regular) return ProjectNotShared(project_target, "a check file on another file system");
  if (n <= 0 || static_cast<size_t>(n) >= found.size() ||
      Sha256Hex(absl::string_view(found.data(), static_cast<size_t>(n))) != nonce_digest) {
    return ProjectNotShared(project_target, "a check file of other content");
  }
  // Its work is done: gone before the program starts (the launcher removes
  // it too, should the sandbox's user not be allowed to).
  (void)unlink(path.c_str());
  return absl::OkStatus();
}

}  // namespace np
