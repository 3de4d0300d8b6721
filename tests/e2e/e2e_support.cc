#include "tests/e2e/e2e_support.h"

#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace np::testing {
namespace {

std::string Trim(const std::string& s) {
  size_t end = s.find_last_not_of(" \n\r\t");
  return end == std::string::npos ? "" : s.substr(0, end + 1);
}

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> lines;
  std::stringstream in(s);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

// A containers.conf of the tests' own, for runs outside scripts/test.sh.
std::string OwnContainersConf() {
  static const std::string path = [] {
    std::string p = "/tmp/np-exec-e2e-containers.conf";
    std::ofstream file(p, std::ios::trunc);
    file << "[containers]\ndefault_ulimits = [\"nofile=20000:20000\", "
            "\"nproc=32768:32768\"]\n[engine]\nevents_logger = \"file\"\n"
            "cgroup_manager = \"cgroupfs\"\n";
    return p;
  }();
  return path;
}

std::string ComputeUnavailableReason(const std::string& runtime) {
  std::vector<std::string> env = RuntimeEnv();
  if (runtime == "bwrap") {
    RunResult r = RunProcess({"/usr/bin/env", "bwrap",     "--unshare-all", "--die-with-parent",
                              "--cap-drop",   "ALL",       "--ro-bind",     "/usr",
                              "/usr",         "--symlink", "usr/bin",       "/bin",
                              "--symlink",    "usr/lib",   "/lib",          "--symlink",
                              "usr/lib64",    "/lib64",    "--proc",        "/proc",
                              "--dev",        "/dev",      "/usr/bin/true"},
                             Options(env, 20000));
    return r.exit_code == 0 ? "" : "bwrap cannot run a no-op sandbox: " + r.err;
  }
  RunResult version = RunProcess({"/usr/bin/env", runtime, "version"}, Options(env, 30000));
  if (version.exit_code != 0) {
    return runtime + " version failed (" + std::to_string(version.exit_code) +
           "): " + Trim(version.err);
  }
  RunResult build = RunProcess({"/bin/bash", SourceDir() + "/scripts/build-images.sh", runtime},
                               Options(env, 300000));
  if (build.exit_code != 0) return "building the test images failed: " + Trim(build.err);
  for (const char* image : {"np-test:local", "np-node:local"}) {
    if (RunRuntime(runtime, {"image", "inspect", image}).exit_code != 0) {
      return std::string("image ") + image + " is missing";
    }
  }
  return "";
}

}  // namespace

RunOptions Options(const std::vector<std::string>& env, int timeout_ms, const std::string& cwd,
                   const std::string& stdin_data) {
  RunOptions options;
  options.env = env;
  options.timeout_ms = timeout_ms;
  options.cwd = cwd;
  options.stdin_data = stdin_data;
  return options;
}

std::string RuntimeUnavailableReason(const std::string& runtime) {
  static std::map<std::string, std::string> cache;
  auto it = cache.find(runtime);
  if (it == cache.end()) it = cache.emplace(runtime, ComputeUnavailableReason(runtime)).first;
  return it->second;
}

std::vector<std::string> RuntimeEnv(const std::vector<std::string>& extra) {
  std::vector<std::string> env = BaseEnv();
  const char* conf = getenv("CONTAINERS_CONF");
  SetEnv(env, "CONTAINERS_CONF", conf != nullptr && *conf ? conf : OwnContainersConf());
  for (const std::string& entry : extra) {
    size_t eq = entry.find('=');
    SetEnv(env, entry.substr(0, eq), eq == std::string::npos ? "" : entry.substr(eq + 1));
  }
  return env;
}

std::string ContainerConfig(const std::string& runtime, const std::string& image,
                            const nlohmann::json& container) {
  nlohmann::json c = {{"runtime", runtime}};
  if (runtime != "bwrap") c["image"] = image;
  c.update(container);
  nlohmann::json root = {{"isolation", {{"tier", "container"}, {"container", c}}}};
  return root.dump(2);
}

bool EndWarmSandboxes(const std::vector<std::string>& env, const std::string& cwd) {
  const char* warm = getenv("NP_E2E_WARM");
  if (warm == nullptr || std::string(warm) != "1") return true;
  RunProcess({NpExecBin(), "warm", "--stop", "--all"}, Options(env, 30000, cwd));
  return WaitFor(
      [&] {
        RunResult listed = RunProcess({NpExecBin(), "warm", "--json"}, Options(env, 30000, cwd));
        const nlohmann::json parsed = nlohmann::json::parse(listed.out, nullptr, false);
        return !parsed.is_discarded() &&
               parsed.value("warm_sandboxes", nlohmann::json::array()).empty();
      },
      30000);
}

RunResult RunRuntime(const std::string& runtime, const std::vector<std::string>& args,
                     const std::vector<std::string>& env) {
  std::vector<std::string> argv = {"/usr/bin/env", runtime};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProcess(argv, Options(env.empty() ? RuntimeEnv() : env, 60000));
}

std::vector<std::string> LabelledContainers(const std::string& runtime, const std::string& prefix,
                                            const std::vector<std::string>& env) {
  std::vector<std::string> names;
  if (runtime == "bwrap") return names;
  RunResult r = RunRuntime(
      runtime, {"ps", "-a", "--filter", "label=dev.nubos.np-exec", "--format", "{{.Names}}"}, env);
  for (const std::string& name : Lines(r.out)) {
    if (name.compare(0, prefix.size(), prefix) == 0) names.push_back(name);
  }
  if (r.exit_code != 0) names.push_back("<" + runtime + " ps failed: " + Trim(r.err) + ">");
  return names;
}

int CountContainers(const std::string& runtime, const std::vector<std::string>& env) {
  RunResult r = RunRuntime(runtime, {"ps", "-aq"}, env);
  if (r.exit_code != 0) return -1;
  return static_cast<int>(Lines(r.out).size());
}

std::string ContainerPrefix(pid_t np_exec_pid) {
  return "np-exec-" + std::to_string(np_exec_pid) + "-";
}

namespace {

template <typename F>
std::vector<pid_t> PidsWhere(F match) {
  std::vector<pid_t> pids;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return pids;
  const pid_t self = getpid();
  while (dirent* entry = readdir(proc)) {
    char* end = nullptr;
    long pid = strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0' || pid == self) continue;
    if (match(ReadFile(std::string("/proc/") + entry->d_name + "/cmdline"))) {
      pids.push_back(static_cast<pid_t>(pid));
    }
  }
  closedir(proc);
  return pids;
}

}  // namespace

std::vector<pid_t> PidsWithCmdlinePrefix(const std::string& prefix) {
  return PidsWhere([&](const std::string& cmdline) { return cmdline.rfind(prefix, 0) == 0; });
}

std::vector<pid_t> PidsWithCmdline(const std::string& needle) {
  return PidsWhere(
      [&](const std::string& cmdline) { return cmdline.find(needle) != std::string::npos; });
}

void ChownTree(const std::string& path, uid_t uid, gid_t gid) {
  std::error_code ignored;
  if (lchown(path.c_str(), uid, gid) != 0) return;
  for (auto it = std::filesystem::recursive_directory_iterator(path, ignored);
       it != std::filesystem::recursive_directory_iterator(); it.increment(ignored)) {
    (void)!lchown(it->path().c_str(), uid, gid);
  }
}

std::vector<nlohmann::json> ReadAuditLog(const std::string& project, int* bad) {
  std::vector<nlohmann::json> records;
  *bad = 0;
  std::string text = ReadFile(project + "/.nubos-pilot/audit/np-exec.jsonl");
  std::stringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
    if (record.is_discarded() || !record.is_object()) {
      ++*bad;
      continue;
    }
    records.push_back(std::move(record));
  }
  // A last line without its newline was torn.
  if (!text.empty() && text.back() != '\n') ++*bad;
  return records;
}

PrivateDockerd::PrivateDockerd(const std::string& dir) : dir_(dir) {}

PrivateDockerd::~PrivateDockerd() { Stop(); }

std::string PrivateDockerd::Start() {
  std::filesystem::create_directories(dir_ + "/data");
  std::filesystem::create_directories(dir_ + "/exec");
  pid_ = StartProcess(
      {"/usr/bin/env", "dockerd", "--iptables=false", "--ip6tables=false", "--bridge=none",
       "--data-root", dir_ + "/data", "--exec-root", dir_ + "/exec", "--pidfile",
       dir_ + "/docker.pid", "-H", docker_host()},
      [] {
        RunOptions options;
        options.env = BaseEnv();
        options.new_session = true;
        return options;
      }(),
      dir_ + "/dockerd.out", dir_ + "/dockerd.log");
  const std::vector<std::string> env = RuntimeEnv({"DOCKER_HOST=" + docker_host()});
  bool up = WaitFor(
      [&] {
        if (WaitProcess(pid_, 0) != -1) return true;  // Exited: give up early.
        return RunProcess({"/usr/bin/env", "docker", "version"}, Options(env, 5000)).exit_code == 0;
      },
      30000);
  if (!up || kill(pid_, 0) != 0) {
    std::string log = ReadFile(dir_ + "/dockerd.log");
    pid_ = -1;
    return "private dockerd did not come up: " +
           log.substr(log.size() > 2000 ? log.size() - 2000 : 0);
  }
  return "";
}

void PrivateDockerd::Stop() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  if (WaitProcess(pid_, 20000) == -1) {
    kill(pid_, SIGKILL);
    WaitProcess(pid_, 5000);
  }
  pid_ = -1;
}

bool PrivateDockerd::LoadImageFromMain(const std::string& image) {
  RunResult r =
      RunProcess({"/bin/sh", "-c", "docker save \"$1\" | DOCKER_HOST=\"$2\" docker load >/dev/null",
                  "sh", image, docker_host()},
                 Options(RuntimeEnv(), 120000));
  return r.exit_code == 0;
}

RunResult RunAsUser1000(const std::string& np_exec, const std::vector<std::string>& args,
                        const std::vector<std::string>& env, const std::string& cwd) {
  std::vector<std::string> argv = {"/usr/bin/setpriv", "--reuid=1000", "--regid=1000",
                                   "--clear-groups", np_exec};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProcess(argv, Options(env, 120000, cwd));
}

std::string StartDockerdForUser1000(const std::string& dir, std::unique_ptr<PrivateDockerd>* daemon,
                                    std::vector<std::string>& env) {
  *daemon = std::make_unique<PrivateDockerd>(dir);
  const std::string started = (*daemon)->Start();
  if (!started.empty()) return started;
  if (!(*daemon)->LoadImageFromMain("np-test:local")) return "cannot load np-test:local";
  chmod(dir.c_str(), 0755);
  if (chmod((*daemon)->socket().c_str(), 0666) != 0) return "cannot open the socket to uid 1000";
  SetEnv(env, "DOCKER_HOST", (*daemon)->docker_host());
  return "";
}

}  // namespace np::testing
