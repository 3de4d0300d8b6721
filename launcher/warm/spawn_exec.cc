#include "launcher/warm/spawn_exec.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "launcher/exec.h"

namespace np::warm {
namespace {

std::vector<std::string> ProgramEnvironment(char** envp, const std::vector<std::string>& spawn) {
  std::map<std::string, std::string> entries;
  for (char** entry = envp; *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const size_t eq = text.find('=');
    if (eq == std::string::npos || text.compare(0, eq, "TERM") == 0) continue;
    entries[text.substr(0, eq)] = text;
  }
  for (const std::string& text : spawn) entries[text.substr(0, text.find('='))] = text;
  std::vector<std::string> out;
  out.reserve(entries.size());
  for (auto& [name, text] : entries) out.push_back(std::move(text));
  return out;
}

// In vfork's child: one line on stderr, from pieces made before.
void WriteFailure(const std::string& prefix, int err) {
  const char* what = strerrordesc_np(err);
  if (what == nullptr) what = "unknown error";
  iovec parts[3] = {{const_cast<char*>(prefix.data()), prefix.size()},
                    {const_cast<char*>(what), strlen(what)},
                    {const_cast<char*>("\n"), 1}};
  (void)!writev(2, parts, 3);
}

[[noreturn]] void Fail(const std::string& prefix, int err, int code) {
  WriteFailure(prefix, err);
  _exit(code);
}

// In vfork's child: `candidate`, or the shell for a file without #!; the
// error that decides whether the search goes on.
int TryExec(PreparedExec& exec, char* candidate) {
  execve(candidate, exec.argv_pointers.data(), exec.env_pointers.data());
  int err = errno;
  if (err == ENOEXEC) {
    exec.shell_pointers[1] = candidate;
    execve("/bin/sh", exec.shell_pointers.data(), exec.env_pointers.data());
    err = errno;
  }
  return err;
}

bool SearchGoesOn(int err) {
  return err == EACCES || err == ENOENT || err == ESTALE || err == ENOTDIR || err == ENODEV ||
         err == ETIMEDOUT;
}

// In vfork's child: execvpe's search along exec.path, each candidate written
// into the buffer PrepareExec sized.
[[noreturn]] void Search(PreparedExec& exec) {
  const std::string& file = exec.argv.front();
  if (file.find('/') != std::string::npos) {
    const int err = TryExec(exec, exec.argv.front().data());
    Fail(exec.run_error, err, err == ENOENT ? 127 : 126);
  }
  if (file.empty() || file.size() > NAME_MAX) {
    Fail(exec.run_error, file.empty() ? ENOENT : ENAMETOOLONG, file.empty() ? 127 : 126);
  }
  bool denied = false;
  int err = ENOENT;
  const char* element = exec.path.data();
  const char* const end = element + exec.path.size();
  for (;;) {
    const char* colon = static_cast<const char*>(memchr(element, ':', end - element));
    const char* stop = colon == nullptr ? end : colon;
    const size_t length = static_cast<size_t>(stop - element);
    if (length < PATH_MAX) {
      char* out = exec.candidate.data();
      memcpy(out, element, length);
      size_t at = length;
      if (length > 0) out[at++] = '/';
      memcpy(out + at, file.c_str(), file.size() + 1);
      err = TryExec(exec, out);
      if (err == EACCES) denied = true;
      if (!SearchGoesOn(err)) Fail(exec.run_error, err, 126);
    }
    if (colon == nullptr) break;
    element = colon + 1;
  }
  if (denied) err = EACCES;
  Fail(exec.run_error, err, err == ENOENT ? 127 : 126);
}

// In vfork's child: system calls only, on what PrepareExec made. The keeper
// installs no signal handler (SIGPIPE is ignored, the rest is read from a
// signalfd), so none can run here on its memory once the mask is cleared.
[[noreturn]] void ExecInChild(PreparedExec& exec, const int stdio[3]) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGPIPE, &dfl, nullptr);
  setsid();
  for (int i = 0; i < 3; ++i) {
    if (dup2(stdio[i], i) < 0) _exit(126);
  }
  close_range(3, ~0U, 0);
  if (chdir(exec.cwd.c_str()) != 0) Fail(exec.cwd_error, errno, 126);
  Search(exec);
}

}  // namespace

PreparedExec PrepareExec(const WarmRequest& request, char** envp) {
  PreparedExec exec;
  exec.env = ProgramEnvironment(envp, request.env);
  exec.argv = request.argv;
  exec.cwd = request.cwd;
  exec.path = "/bin:/usr/bin";
  for (const std::string& entry : exec.env) {
    if (absl::StartsWith(entry, "PATH=")) exec.path = entry.substr(5);
  }
  exec.candidate.resize(PATH_MAX + 1 + NAME_MAX + 1);
  exec.cwd_error = absl::StrCat("np-exec: cannot change to ", exec.cwd, ": ");
  exec.run_error = absl::StrCat("np-exec: cannot run ", exec.argv.front(), ": ");
  exec.env_pointers = CStrings(exec.env);
  exec.argv_pointers = CStrings(exec.argv);
  exec.shell_pointers.push_back(const_cast<char*>("/bin/sh"));
  exec.shell_pointers.push_back(nullptr);  // the candidate, set by the child
  exec.shell_pointers.insert(exec.shell_pointers.end(), exec.argv_pointers.begin() + 1,
                             exec.argv_pointers.end());
  return exec;
}

pid_t StartPrepared(PreparedExec& exec, const int stdio[3]) {
  const pid_t pid = vfork();
  if (pid == 0) ExecInChild(exec, stdio);
  return pid;
}

}  // namespace np::warm
