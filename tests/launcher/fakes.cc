#include "tests/launcher/fakes.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "nlohmann/json.hpp"
#include "tests/support/temp_dir.h"

namespace np::testing {
namespace {

int BoundSocket(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof(address.sun_path)) throw std::runtime_error("socket path too long");
  std::memcpy(address.sun_path, path.data(), path.size());
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  unlink(path.c_str());
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    throw std::runtime_error("bind failed: " + path);
  }
  return fd;
}

void SendAll(int fd, const std::string& text) {
  size_t sent = 0;
  while (sent < text.size()) {
    ssize_t n = send(fd, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    sent += static_cast<size_t>(n);
  }
}

std::string Response(int status, const std::string& body) {
  const char* reason = status == 200 ? "OK" : status == 204 ? "No Content" : "Not Found";
  std::ostringstream out;
  out << "HTTP/1.1 " << status << " " << reason << "\r\nContent-Type: application/json\r\n"
      << "Content-Length: " << body.size() << "\r\n\r\n"
      << body;
  return out.str();
}

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

FakeEngine::FakeEngine(std::string socket_path) : socket_path_(std::move(socket_path)) {
  listen_fd_ = BoundSocket(socket_path_);
  if (listen(listen_fd_, 64) != 0) throw std::runtime_error("listen failed");
  if (pipe2(stop_pipe_, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  thread_ = std::thread([this] { Serve(); });
}

FakeEngine::~FakeEngine() {
  (void)!write(stop_pipe_[1], "x", 1);
  thread_.join();
  close(stop_pipe_[0]);
  close(stop_pipe_[1]);
  close(listen_fd_);
  unlink(socket_path_.c_str());
}

std::vector<std::string> FakeEngine::requests() {
  std::lock_guard<std::mutex> lock(mutex_);
  return requests_;
}

void FakeEngine::Serve() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if (fds[0].revents & POLLIN) {
      int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) {
        Answer(fd);
        close(fd);
      }
    }
  }
}

void FakeEngine::Answer(int fd) {
  std::string request;
  char buffer[4096];
  // A short receive timeout: a client that connects and says nothing must not
  // stall the engine for the other clients.
  timeval timeout{2, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  while (request.find("\r\n\r\n") == std::string::npos) {
    ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    request.append(buffer, static_cast<size_t>(n));
  }
  const std::string line = request.substr(0, request.find("\r\n"));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    requests_.push_back(line.substr(0, line.rfind(' ')));
  }
  std::istringstream parts(line);
  std::string method, target;
  parts >> method >> target;
  const std::string path = target.substr(0, target.find('?'));
  if (method == "GET" && path == "/_ping") {
    SendAll(fd, Response(200, "OK"));
  } else if (method == "GET" && path == "/version") {
    SendAll(fd, Response(200, R"({"Version":"99.0-fake","ApiVersion":"1.99"})"));
  } else if (method == "GET" && StartsWith(path, "/images/") && EndsWith(path, "/json")) {
    SendAll(fd, image_present_ ? Response(200, R"({"Id":"sha256:fake"})")
                               : Response(404, R"({"message":"No such image"})"));
  } else if (method == "GET" && path == "/info") {
    std::string root;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      root = root_dir_;
    }
    SendAll(fd, root.empty() ? Response(404, R"({"message":"page not found"})")
                             : Response(200, nlohmann::json({{"DockerRootDir", root}}).dump()));
  } else if (method == "GET" && path == "/containers/json") {
    SendAll(fd, Response(200, "[]"));
  } else if (method == "DELETE" && StartsWith(path, "/containers/")) {
    SendAll(fd, Response(204, ""));
  } else if (method == "POST" && StartsWith(path, "/containers/") && EndsWith(path, "/kill")) {
    SendAll(fd, Response(204, ""));
  } else {
    SendAll(fd, Response(404, R"({"message":"page not found"})"));
  }
}

void MakeRefusingSocket(const std::string& path) { close(BoundSocket(path)); }

SilentSocket::SilentSocket(const std::string& path) {
  fd_ = BoundSocket(path);
  if (listen(fd_, 16) != 0) throw std::runtime_error("listen failed");
}

SilentSocket::~SilentSocket() { close(fd_); }

void WriteExecutable(const std::string& path, const std::string& content) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
  if (fd < 0) throw std::runtime_error("cannot write " + path);
  (void)!write(fd, content.data(), content.size());
  close(fd);
  chmod(path.c_str(), 0755);
}

std::string WriteFakeRuntime(const std::string& dir, const std::string& name,
                             const FakeRuntimeOptions& options) {
  const std::string base = dir + "/" + name;
  std::ostringstream script;
  script << "#!/bin/sh\n"
         << "rec='" << base << "'\n"
         << "printf '%s\\n' \"$*\" >> \"$rec.calls\"\n"
         // podman's secret calls around a run (podman_secrets.h) are only
         // in the calls file: the argv and environment stay the run's.
         << "if [ \"$1\" != secret ]; then\n"
         << ": > \"$rec.argv\"\n"
         << "for a in \"$@\"; do printf '%s\\0' \"$a\" >> \"$rec.argv\"; done\n"
         << "/usr/bin/env -0 > \"$rec.env\"\n"
         << "fi\n"
         << "case \"$1\" in\n"
         << "  version) printf '%s\\n' '" << options.version_out << "'; exit "
         << options.version_exit
         << ";;\n"
         // An engine that cannot say its version cannot answer for an image.
         << "  image) exit " << options.version_exit << ";;\n"
         << "  run) echo fake-run-output; echo '" << options.run_stderr << "' >&2; exit "
         << options.run_exit << ";;\n"
         << "esac\n"
         << "exit 0\n";
  WriteExecutable(base, script.str());
  return base;
}

std::string WriteSentinelProgram(const std::string& path, const std::string& sentinel) {
  WriteExecutable(path, "#!/bin/sh\necho ran > '" + sentinel + "'\nexit 0\n");
  return path;
}

std::string MakeToolsDir(const std::string& dir, const std::vector<std::string>& names) {
  std::filesystem::create_directories(dir);
  for (const std::string& name : names) {
    const std::string link = dir + "/" + name;
    unlink(link.c_str());
    if (symlink(("/usr/bin/" + name).c_str(), link.c_str()) != 0) {
      throw std::runtime_error("symlink failed: " + link);
    }
  }
  return dir;
}

std::vector<std::string> ReadNulSeparated(const std::string& path) {
  const std::string text = ReadFile(path);
  std::vector<std::string> parts;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\0', start);
    if (end == std::string::npos) end = text.size();
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

namespace {

std::string LastLine(const std::string& err) {
  std::istringstream lines(err);
  std::string line, last;
  while (std::getline(lines, line)) {
    if (!line.empty()) last = line;
  }
  return last;
}

}  // namespace

nlohmann::json LastEnvelope(const std::string& err) {
  nlohmann::json parsed = nlohmann::json::parse(LastLine(err), nullptr, false);
  return parsed.is_discarded() ? nlohmann::json(nullptr) : parsed;
}

std::string TextErrorCodeOf(const std::string& err) {
  static const std::regex kLine(R"(^np-exec: error: .* \(([a-z0-9-]+)\)$)");
  std::smatch match;
  const std::string last = LastLine(err);
  return std::regex_match(last, match, kLine) ? match[1].str() : "";
}

std::string ErrorCodeOf(const std::string& err) {
  const std::string text = TextErrorCodeOf(err);
  if (!text.empty()) return text;
  nlohmann::json envelope = LastEnvelope(err);
  if (!envelope.is_object() || !envelope.contains("code") || !envelope["code"].is_string()) {
    return "";
  }
  return envelope["code"].get<std::string>();
}

nlohmann::json ParseJson(const std::string& out) {
  nlohmann::json parsed = nlohmann::json::parse(out, nullptr, false);
  return parsed.is_discarded() ? nlohmann::json(nullptr) : parsed;
}

std::vector<nlohmann::json> ReadJsonLines(const std::string& path) {
  std::istringstream lines(ReadFile(path));
  std::string line;
  std::vector<nlohmann::json> records;
  while (std::getline(lines, line)) {
    if (!line.empty()) records.push_back(nlohmann::json::parse(line, nullptr, false));
  }
  return records;
}

std::vector<std::string> IsolatedEnv(const std::string& scratch, const std::string& path,
                                     const std::string& docker_host) {
  std::filesystem::create_directories(scratch + "/home");
  std::filesystem::create_directories(scratch + "/xdg");
  std::vector<std::string> env = {"PATH=" + path, "HOME=" + scratch + "/home",
                                  "XDG_CONFIG_HOME=" + scratch + "/xdg", "LANG=C.UTF-8"};
  // Never the machine's own daemon: an empty endpoint would mean
  // /var/run/docker.sock, so it becomes a socket that does not exist.
  env.push_back("DOCKER_HOST=" +
                (docker_host.empty() ? "unix://" + scratch + "/no-engine.sock" : docker_host));
  return env;
}

bool IsRoot() { return geteuid() == 0; }

std::vector<std::string> AsNobody(const std::vector<std::string>& argv) {
  std::vector<std::string> out = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
                                  "--clear-groups", "--"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

}  // namespace np::testing

namespace np::testing {

Lab::Lab() {
  MakeProject(project());
  std::filesystem::create_directories(fakes());
  MakeToolsDir(tools(), {"sh", "env", "cat", "true", "false", "echo", "sleep", "kill", "touch",
                         "printf", "id"});
  WriteSentinelProgram(sentinel_program(), sentinel());
}

void Lab::Config(const std::string& json) const {
  tmp_.Write("proj/.nubos-pilot/config.json", json);
  // The operator who wrote this config trusts it, in the lab's own store.
  RunOptions options;
  options.env = Env();
  options.cwd = project();
  options.timeout_ms = 30000;
  (void)RunProcess({NpExecBin(), "trust"}, options);
}

std::string Lab::FakeDocker(const FakeRuntimeOptions& options) const {
  return WriteFakeRuntime(fakes(), "docker", options);
}

std::string Lab::FakePath() const { return fakes() + ":" + tools() + ":" + tmp_.Path("bin"); }

std::vector<std::string> Lab::Env(const std::string& docker_host) const {
  return IsolatedEnv(tmp_.Path("scratch"), FakePath(), docker_host);
}

RunResult Lab::Run(const std::vector<std::string>& args, const std::vector<std::string>& env,
                   const std::string& cwd) const {
  std::vector<std::string> argv = {NpExecBin()};
  argv.insert(argv.end(), args.begin(), args.end());
  RunOptions options;
  options.cwd = cwd.empty() ? project() : cwd;
  options.env = env;
  options.timeout_ms = 30000;
  return RunProcess(argv, options);
}

bool Lab::Invoked(const std::string& name) const {
  return FileExists(fakes() + "/" + name + ".calls");
}

}  // namespace np::testing
