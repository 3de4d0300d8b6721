#include "launcher/sandbox_signals.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"

namespace np {
namespace {

// The whole of a small /proc file; empty when it cannot be read.
std::string ReadProcFile(const std::string& path) {
  std::string text;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) text.append(buffer, static_cast<size_t>(n));
  close(fd);
  return text;
}

// Field 4 of /proc/PID/stat (after the command name, which may hold spaces).
pid_t ParentOf(absl::string_view pid_name) {
  const std::string stat = ReadProcFile(absl::StrCat("/proc/", pid_name, "/stat"));
  size_t close_paren = stat.rfind(')');
  if (close_paren == std::string::npos || close_paren + 2 > stat.size()) return 0;
  std::vector<absl::string_view> fields =
      absl::StrSplit(absl::string_view(stat).substr(close_paren + 2), ' ', absl::SkipEmpty());
  int parent = 0;
  return fields.size() > 1 && absl::SimpleAtoi(fields[1], &parent) ? parent : 0;
}

}  // namespace

std::optional<pid_t> SandboxInitPid(absl::string_view info_json) {
  nlohmann::json info = nlohmann::json::parse(info_json, nullptr, /*allow_exceptions=*/false);
  if (!info.is_object()) return std::nullopt;
  auto child = info.find("child-pid");
  if (child == info.end() || !child->is_number_integer()) return std::nullopt;
  const long long pid = child->get<long long>();
  if (pid <= 0 || pid > 0x3fffffff) return std::nullopt;
  return static_cast<pid_t>(pid);
}

std::vector<pid_t> ChildrenOf(pid_t pid) {
  std::vector<pid_t> children;
  const std::string listed = ReadProcFile(absl::StrCat("/proc/", pid, "/task/", pid, "/children"));
  if (!listed.empty() || access(absl::StrCat("/proc/", pid, "/task/", pid, "/children").c_str(),
                                F_OK) == 0) {
    for (absl::string_view word : absl::StrSplit(listed, ' ', absl::SkipWhitespace())) {
      int child = 0;
      if (absl::SimpleAtoi(word, &child) && child > 0) children.push_back(child);
    }
    return children;
  }
  // Kernels without CONFIG_PROC_CHILDREN: every process's parent.
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return children;
  while (dirent* entry = readdir(proc)) {
    int candidate = 0;
    if (absl::SimpleAtoi(entry->d_name, &candidate) && ParentOf(entry->d_name) == pid) {
      children.push_back(candidate);
    }
  }
  closedir(proc);
  return children;
}

int SignalSandbox(pid_t bwrap_pid, absl::string_view info_json, int sig) {
  std::optional<pid_t> init = SandboxInitPid(info_json);
  int signalled = 0;
  // Only while that pid is still bubblewrap's child: once the sandbox ended,
  // the pid (and its children's) may belong to anyone. bubblewrap itself is
  // np-exec's unreaped child, so its pid cannot be reused meanwhile.
  if (init.has_value() && ParentOf(absl::StrCat(*init)) == bwrap_pid) {
    for (pid_t program : ChildrenOf(*init)) {
      if (kill(program, sig) == 0) ++signalled;
    }
  }
  if (signalled == 0) kill(bwrap_pid, sig);
  return signalled;
}

}  // namespace np
