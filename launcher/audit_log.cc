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
#include "core/sha256.h"
#include "launcher/output.h"
#include "launcher/state/nofollow_path.h"

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

nlohmann::json SpawnRecord(const HostFacts& host, const std::vector<std::string>& program) {
  return {
      {"pid", host.pid},
      {"program", program.empty() ? std::string() : program.front()},
      {"argv_digest", ArgvDigest(program)},
      {"cwd", host.cwd},
  };
}

nlohmann::json TierRecord(const HostFacts& host, const Settings& settings,
                          const std::vector<std::string>& program) {
  nlohmann::json record = SpawnRecord(host, program);
  record["tier"] = TierName(settings.resolved.tier);
  record["effective_from"] = TierSourceName(settings.resolved.from);
  if (settings.resolved.tier == Tier::kContainer) {
    const ContainerConfig& container = settings.config.container;
    record["runtime"] = RuntimeName(container.runtime);
    if (TraitsOf(container.runtime).uses_image) record["image"] = container.image;
  }
  return record;
}

nlohmann::json RefusalRecord(nlohmann::json base, const absl::Status& error) {
  base["decision"] = "refused";
  base["code"] = ErrorCode(error);
  return base;
}

nlohmann::json RunRecord(const HostFacts& host, const Settings& settings, const SpawnPlan& plan,
                         const std::vector<std::string>& program) {
  nlohmann::json record = TierRecord(host, settings, program);
  record["decision"] = "run";
  if (!plan.wrapped) {
    record["path"] = plan.exec_path;
    // On these tiers the program inherits the whole environment; the names
    // configured or asked for with --env are recorded as given.
    record["env"] = plan.env_names;
    return record;
  }
  if (!plan.container_name.empty()) record["container"] = plan.container_name;
  // An engine on another host: which one ran it.
  if (!plan.engine_remote.empty()) record["engine"] = plan.engine_remote;
  // Who a project-chosen user runs as in the image (never root).
  if (plan.project_user.has_value()) record["user"] = DescribeContainerUser(*plan.project_user);
  record["env"] = plan.env_names;
  nlohmann::json mounts = nlohmann::json::array();
  mounts.push_back({{"source", plan.project_real}, {"target", plan.project_mount}, {"mode", "rw"}});
  for (const ValidatedMount& m : plan.mounts) {
    mounts.push_back(
        {{"source", m.source}, {"target", m.target}, {"mode", m.writable ? "rw" : "ro"}});
  }
  record["mounts"] = mounts;
  // Warm: handed to a kept sandbox (core/warm.h); cold: a sandbox of its own,
  // and when warm was asked for, why not.
  record["warm"] = plan.warm.warm;
  if (!plan.warm.cold_reason.empty()) record["warm_cold_reason"] = plan.warm.cold_reason;
  return record;
}

nlohmann::json ExitRecord(nlohmann::json run_record, int exit_status, long long duration_ms) {
  run_record.erase("decision");
  run_record["event"] = "exit";
  run_record["exit_status"] = exit_status;
  run_record["duration_ms"] = duration_ms;
  return run_record;
}

namespace {

int OpenLogIn(int dir, const char* name, int* err);

// Opens <root>/.nubos-pilot/audit/np-exec.jsonl for appending, one
// component at a time and never through a symlink: a cloned repository (or
// the program in an earlier sandbox) could otherwise point the log at a file
// of the operator's, or out of the project, and have np-exec append to it.
// O_NONBLOCK, so a FIFO planted in its place fails at once instead of
// blocking every later spawn; and the log must be a regular file owned by
// the caller. Returns the descriptor or the errno.
// `root` is the project folder's descriptor.
int OpenAuditLogInState(int state, int* err);

int OpenAuditLogAt(int root, int* err) {
  constexpr int kDir = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  const int state = openat(root, ".nubos-pilot", kDir);
  *err = errno;
  if (state < 0) return -1;
  const int fd = OpenAuditLogInState(state, err);
  close(state);
  return fd;
}

// The same from the `.nubos-pilot` directory's descriptor (not consumed).
int OpenAuditLogInState(int state, int* err) {
  constexpr int kDir = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  int dir = openat(state, "audit", kDir);
  if (dir < 0 && errno == ENOENT) {
    if (mkdirat(state, "audit", 0700) != 0 && errno != EEXIST) {
      *err = errno;
      return -1;
    }
    dir = openat(state, "audit", kDir);
  }
  *err = errno;
  if (dir < 0) return -1;
  const int fd = OpenLogIn(dir, "np-exec.jsonl", err);
  close(dir);
  return fd;
}

// Opens `name` in the directory `dir` for appending: never a link, never
// blocking, and only a regular file the caller owns.
int OpenLogIn(int dir, const char* name, int* err) {
  int fd =
      openat(dir, name,
             O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0600);
  *err = errno;
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    *err = errno;
  } else if (!S_ISREG(st.st_mode)) {
    *err = EINVAL;  // A FIFO, a socket or a device in the log's place.
  } else if (st.st_uid != geteuid()) {
    *err = EPERM;  // Someone else's file: np-exec does not append to it.
  } else {
    return fd;
  }
  close(fd);
  return -1;
}

// Appends `record` with its time as one line to `fd` (left open).
absl::Status WriteLineTo(int fd, const std::string& path, nlohmann::json record) {
  nlohmann::json line = {{"time", UtcNow()}};
  line.update(record);
  const std::string text = absl::StrCat(DumpJson(line), "\n");
  // One write: with O_APPEND the kernel places it atomically at the end, so
  // lines from concurrent spawns never interleave.
  ssize_t n = write(fd, text.data(), text.size());
  if (n != static_cast<ssize_t>(text.size())) return Unwritable(path, n < 0 ? errno : EIO);
  return absl::OkStatus();
}

// The same, closing `fd`.
absl::Status WriteLine(int fd, const std::string& path, nlohmann::json record) {
  absl::Status written = WriteLineTo(fd, path, std::move(record));
  close(fd);
  return written;
}

}  // namespace

absl::Status AppendAudit(const std::string& project_root, nlohmann::json record) {
  const std::string root_path = project_root == "" ? std::string("/") : project_root;
  const int root = open(root_path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) return Unwritable(AuditLogPath(project_root), errno);
  absl::Status written = AppendAuditAt(root, project_root, std::move(record));
  close(root);
  return written;
}

absl::Status AppendAuditAt(int project_fd, const std::string& project_root, nlohmann::json record) {
  const std::string path = AuditLogPath(project_root);
  int open_errno = 0;
  const int fd = OpenAuditLogAt(project_fd, &open_errno);
  if (fd < 0) return Unwritable(path, open_errno);
  return WriteLine(fd, path, std::move(record));
}

absl::Status ProjectAuditLog::Append(nlohmann::json record) {
  const std::string path = AuditLogPath(project_.root);
  if (log_ == nullptr) {
    int open_errno = 0;
    const int fd = state_dir_ != nullptr ? OpenAuditLogInState(state_dir_->fd(), &open_errno)
                                         : OpenAuditLogAt(project_.fd(), &open_errno);
    if (fd < 0) return Unwritable(path, open_errno);
    // Kept for the spawn's life, where np-exec's own output never reaches it.
    const int kept = KeepAboveStandardFds(fd);
    if (kept < 0) return Unwritable(path, errno);
    log_ = std::make_shared<const OpenFd>(kept);
  }
  return WriteLineTo(log_->fd(), path, std::move(record));
}

absl::Status AppendOperatorAudit(const std::string& state_dir, const std::string& project_root,
                                 nlohmann::json record) {
  const std::string path = absl::StrCat(state_dir, "/", kOperatorAuditName);
  // The store directory is the caller's own (0700, StateStore::Open made it).
  const int dir = OpenSubdirNoFollow(AT_FDCWD, state_dir.c_str());
  if (dir < 0) return Unwritable(path, errno);
  struct stat st;
  if (fstat(dir, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
    close(dir);
    return Unwritable(path, EPERM);
  }
  int open_errno = 0;
  const int fd = OpenLogIn(dir, kOperatorAuditName, &open_errno);
  close(dir);
  if (fd < 0) return Unwritable(path, open_errno);
  record["project"] = project_root;
  return WriteLine(fd, path, std::move(record));
}

}  // namespace np
