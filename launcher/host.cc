#include "launcher/host.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/paths.h"

namespace np {

absl::string_view GetEnv(char** envp, absl::string_view name) {
  // No environment entry's name holds a NUL byte; an empty view may have no data.
  if (envp == nullptr || name.find('\0') != absl::string_view::npos) return {};
  if (name.data() == nullptr) name = "";
  // Each entry is compared in place, never measured first, and only past its
  // first byte when that one matches: a spawn looks up a dozen names in an
  // environment of dozens of entries.
  const char first = name.empty() ? '=' : name.front();
  for (char** entry = envp; *entry != nullptr; ++entry) {
    const char* var = *entry;
    if (var[0] == first && strncmp(var, name.data(), name.size()) == 0 && var[name.size()] == '=') {
      return absl::string_view(var + name.size() + 1);
    }
  }
  return {};
}

HostFacts ReadHostFacts(char** envp) {
  HostFacts host;
  host.envp = envp;
  host.path = std::string(GetEnv(envp, "PATH"));
  host.home = std::string(GetEnv(envp, "HOME"));
  host.xdg_config_home = std::string(GetEnv(envp, "XDG_CONFIG_HOME"));
  host.xdg_runtime_dir = std::string(GetEnv(envp, "XDG_RUNTIME_DIR"));
  host.env_tier = std::string(GetEnv(envp, kTierVar));
  host.docker_host = std::string(GetEnv(envp, "DOCKER_HOST"));
  host.container_host = std::string(GetEnv(envp, "CONTAINER_HOST"));
  host.term = std::string(GetEnv(envp, "TERM"));
  // A marker that is set but not a small non-negative number was tampered
  // with or overflowed: it counts as the limit, so the loop it may hide stops.
  const absl::string_view depth_text = GetEnv(envp, kDepthVar);
  int depth = 0;
  if (!depth_text.empty()) {
    host.depth = absl::SimpleAtoi(depth_text, &depth) && depth >= 0 ? depth : kMaxDepth;
  }
  int timeout = 0;
  if (absl::SimpleAtoi(GetEnv(envp, "NP_EXEC_ENGINE_TIMEOUT_MS"), &timeout) && timeout >= 1 &&
      timeout <= 60000) {
    host.engine_timeout_ms = timeout;
  }
  int grace = 0;
  if (absl::SimpleAtoi(GetEnv(envp, "NP_EXEC_GRACE_MS"), &grace) && grace >= 100 &&
      grace <= 600000) {
    host.grace_ms = grace;
  }
  int exec_pid = 0;
  if (absl::SimpleAtoi(GetEnv(envp, kExecPidVar), &exec_pid)) host.exec_pid = exec_pid;
  host.exec_target = std::string(GetEnv(envp, kExecTargetVar));
  host.pid = getpid();
  host.uid = getuid();
  host.gid = getgid();
  host.stdin_tty = isatty(0) == 1;
  host.stdout_tty = isatty(1) == 1;
  host.json_errors = GetEnv(envp, kErrorFormatVar) == "json";
  // The kernel's name for the working directory is already its real path
  // (getcwd never returns a link, and fails for a removed or unreachable one):
  // no realpath, which would only walk it again and could see it changed.
  // The buffer is on the heap (no page of stack held under the walk) and of
  // PATH_MAX bytes: a longer path fails, as the kernel's getcwd does, rather
  // than being pieced together by glibc from the directories' entries.
  std::string cwd(PATH_MAX, '\0');
  if (getcwd(cwd.data(), cwd.size()) != nullptr) {
    host.cwd = cwd.c_str();
    // From the descriptor of the working directory itself, not its path: the
    // folder np-exec was started in is the one whose project it judges.
    host.project = LocateProject(AT_FDCWD, host.cwd);
    host.project_located = true;
  }
  // The binary this process runs, removed or replaced since the exec or not:
  // what a shim or a copy found on PATH is compared with. Its path is read
  // only where it is used (SelfPath).
  struct stat st;
  if (stat("/proc/self/exe", &st) == 0) host.self = FileId{st.st_dev, st.st_ino};
  return host;
}

std::string SelfPath() {
  char buffer[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : std::string();
}

std::string OperatorConfigPath(const HostFacts& host) {
  if (!host.xdg_config_home.empty() && host.xdg_config_home.front() == '/') {
    return JoinPath(host.xdg_config_home, "nubos-pilot/config.json");
  }
  if (!host.home.empty() && host.home.front() == '/') {
    return JoinPath(host.home, ".config/nubos-pilot/config.json");
  }
  return "";
}

absl::StatusOr<Settings> LoadHostSettings(const HostFacts& host) {
  if (host.project_located && !host.project.ok()) return host.project.status();
  SettingsInputs inputs;
  inputs.cwd = host.cwd;
  inputs.project = host.project_located ? &*host.project : nullptr;
  inputs.operator_config_path = OperatorConfigPath(host);
  inputs.env_tier = host.env_tier;
  inputs.allow_outside_project = true;
  return LoadSettings(inputs);
}

std::string HostProjectRoot(const HostFacts& host) {
  if (host.project_located) return host.project.ok() ? host.project->root : "";
  absl::StatusOr<ProjectLocation> found = LocateProjectFrom(host.cwd);
  return found.ok() ? found->root : "";
}

std::string InstalledInterposer() {
  const std::string self = SelfPath();
  const std::string dir = self.substr(0, self.rfind('/'));
  for (const std::string& candidate : {JoinPath(dir, "libnp-exec-preload.so"),
                                       JoinPath(dir, "../lib/np-exec/libnp-exec-preload.so")}) {
    char real[PATH_MAX];
    if (realpath(candidate.c_str(), real) != nullptr) return real;
  }
  return "";
}

unsigned long long ProcStatField(pid_t pid, int field) {
  const std::string path = absl::StrCat("/proc/", pid, "/stat");
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buffer[1024];
  ssize_t n = read(fd, buffer, sizeof(buffer) - 1);
  close(fd);
  if (n <= 0) return 0;
  absl::string_view stat(buffer, static_cast<size_t>(n));
  // The command name (field 2) may hold spaces and parentheses; fields after
  // the last ")" are plain, the first of them field 3.
  size_t close_paren = stat.rfind(')');
  if (close_paren == absl::string_view::npos || field < 3) return 0;
  std::vector<absl::string_view> fields =
      absl::StrSplit(stat.substr(close_paren + 2), ' ', absl::SkipEmpty());
  const size_t index = static_cast<size_t>(field - 3);
  unsigned long long value = 0;
  if (fields.size() > index && absl::SimpleAtoi(fields[index], &value)) return value;
  return 0;
}

unsigned long long ProcessStartTime(pid_t pid) { return ProcStatField(pid, 22); }

}  // namespace np
