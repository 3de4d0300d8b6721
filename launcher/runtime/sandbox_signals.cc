#include "launcher/runtime/sandbox_signals.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "launcher/host.h"
#include "nlohmann/json.hpp"

namespace np {
namespace {

// The whole of a small /proc file; nullopt when it cannot be opened.
std::optional<std::string> ReadProcFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) text.append(buffer, static_cast<size_t>(n));
  close(fd);
  return text;
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
  const std::optional<std::string> listed =
      ReadProcFile(absl::StrCat("/proc/", pid, "/task/", pid, "/children"));
  if (listed.has_value()) {
    for (absl::string_view word : absl::StrSplit(*listed, ' ', absl::SkipWhitespace())) {
      int child = 0;
      if (absl::SimpleAtoi(word, &child) && child > 0) children.push_back(child);
    }
    return children;
  }
  // Kernels without CONFIG_PROC_CHILDREN (or a process already gone): every
  // process's parent.
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return children;
  while (dirent* entry = readdir(proc)) {
    int candidate = 0;
    if (absl::SimpleAtoi(entry->d_name, &candidate) &&
        ProcStatField(candidate, 4) == static_cast<unsigned long long>(pid)) {
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
  if (init.has_value() && ProcStatField(*init, 4) == static_cast<unsigned long long>(bwrap_pid)) {
    for (pid_t program : ChildrenOf(*init)) {
      if (kill(program, sig) == 0) ++signalled;
    }
  }
  if (signalled == 0) kill(bwrap_pid, sig);
  return signalled;
}

}  // namespace np
