#include "launcher/audit_log.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/errors.h"
#include "launcher/output.h"
#include "core/sha256.h"

namespace np {
namespace {

// The UTC calendar date of the Unix day `days` (Howard Hinnant's
// civil_from_days). gmtime_r would do, but glibc's first call reads
// /etc/localtime (seven system calls) on every spawn, for a zone UTC ignores.
void CivilFromDays(long long days, long long& year, int& month, int& day) {
  const long long z = days + 719468;
  const long long era = (z >= 0 ? z : z - 146096) / 146097;
  const long long doe = z - era * 146097;
  const long long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const long long mp = (5 * doy + 2) / 153;
  day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  year = yoe + era * 400 + (month <= 2 ? 1 : 0);
}

std::string UtcNow() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  const long long secs = static_cast<long long>(ts.tv_sec);
  long long days = secs / 86400;
  long long rem = secs % 86400;
  if (rem < 0) {
    rem += 86400;
    --days;
  }
  long long year = 0;
  int month = 0;
  int day = 0;
  CivilFromDays(days, year, month, day);
  return absl::StrFormat("%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", year, month, day,
                         static_cast<int>(rem / 3600), static_cast<int>(rem / 60 % 60),
                         static_cast<int>(rem % 60), static_cast<int>(ts.tv_nsec / 1000000));
}

absl::Status Unwritable(const std::string& path, int err) {
  return MakeError(absl::StatusCode::kUnavailable, "audit-log-unwritable",
                   absl::StrCat("cannot append to the audit log ", path, ": ", strerror(err),
                                "; np-exec goes on without this record"),
                   {{"path", path}});
}

}  // namespace

std::string AuditLogPath(const std::string& project_root) {
  return absl::StrCat(project_root == "/" ? "" : project_root, "/.nubos-pilot/audit/np-exec.jsonl");
}

std::string ArgvDigest(const std::vector<std::string>& argv) {
  std::string joined;
  for (const std::string& arg : argv) {
    joined.append(arg);
    joined.push_back('\0');
  }
  return absl::StrCat("sha256:", Sha256Hex(joined));
}

absl::Status AppendAudit(const std::string& project_root, nlohmann::json record) {
  const std::string path = AuditLogPath(project_root);
  const std::string dir = path.substr(0, path.rfind('/'));
  // Neither the directory nor the file may be a symlink: a cloned repository
  // could otherwise point the log at a file of the operator's and have
  // np-exec append to it.
  int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir_fd < 0 && errno == ENOENT) {
    if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return Unwritable(path, errno);
    dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  }
  if (dir_fd < 0) return Unwritable(path, errno);
  int fd =
      openat(dir_fd, "np-exec.jsonl", O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  const int open_errno = errno;
  close(dir_fd);
  if (fd < 0) return Unwritable(path, open_errno);
  nlohmann::json line = {{"time", UtcNow()}};
  line.update(record);
  const std::string text = absl::StrCat(DumpJson(line), "\n");
  // One write: with O_APPEND the kernel places it atomically at the end, so
  // lines from concurrent spawns never interleave.
  ssize_t n = write(fd, text.data(), text.size());
  const int err = errno;
  close(fd);
  if (n != static_cast<ssize_t>(text.size())) return Unwritable(path, n < 0 ? err : EIO);
  return absl::OkStatus();
}

}  // namespace np
