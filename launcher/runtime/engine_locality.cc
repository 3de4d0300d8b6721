#include "launcher/runtime/engine_locality.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/paths.h"
#include "core/sha256.h"
#include "nlohmann/json.hpp"

namespace np {
namespace {

constexpr size_t kMaxConfigBytes = 1 << 20;

// A small JSON file of the client's, or null (missing, too big, not JSON).
nlohmann::json ReadJsonFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return nullptr;
  struct stat st;
  std::string text;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      static_cast<size_t>(st.st_size) <= kMaxConfigBytes) {
    text.resize(static_cast<size_t>(st.st_size));
    const ssize_t n = read(fd, text.data(), text.size());
    text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  }
  close(fd);
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

std::string StringAt(const nlohmann::json& value, const char* key) {
  if (!value.is_object() || !value.contains(key) || !value[key].is_string()) return "";
  return value[key].get<std::string>();
}

// Whether a tcp:// endpoint's host is this host's loopback.
bool LoopbackTcp(absl::string_view url) {
  if (!absl::ConsumePrefix(&url, "tcp://")) return false;
  const absl::string_view host =
      absl::StartsWith(url, "[") ? url.substr(0, url.find(']') + 1) : url.substr(0, url.find(':'));
  if (host == "localhost" || host == "[::1]") return true;
  // 127.0.0.0/8 as four decimal numbers: a name such as 127.0.0.1.example
  // is resolved by the client, to anywhere.
  const std::vector<absl::string_view> parts = absl::StrSplit(host, '.');
  int octet = 0;
  return parts.size() == 4 && parts[0] == "127" &&
         std::all_of(parts.begin(), parts.end(), [&octet](absl::string_view part) {
           return !part.empty() && part.size() <= 3 && absl::SimpleAtoi(part, &octet) &&
                  octet <= 255 && std::all_of(part.begin(), part.end(), absl::ascii_isdigit);
         });
}

// An endpoint URL as np-exec reaches it: a unix:// socket, or a tcp:// port
// on the loopback, is this host; any other scheme or host is another one.
EngineLocation FromUrl(const std::string& url, const std::string& shown) {
  if (absl::StartsWith(url, "unix://") && url.size() > 7) return {url.substr(7), ""};
  if (LoopbackTcp(url)) return {std::nullopt, ""};
  return {std::nullopt, absl::StrCat(shown, " (", url.empty() ? "unreadable" : url, ")")};
}

}  // namespace

EngineLocation DockerLocation(const HostFacts& host) {
  if (!host.docker_host.empty()) return FromUrl(host.docker_host, "DOCKER_HOST");
  std::string name(GetEnv(host.envp, "DOCKER_CONTEXT"));
  std::string config_dir(GetEnv(host.envp, "DOCKER_CONFIG"));
  if (config_dir.empty() && !host.home.empty()) config_dir = JoinPath(host.home, ".docker");
  if (name.empty() && !config_dir.empty()) {
    name = StringAt(ReadJsonFile(JoinPath(config_dir, "config.json")), "currentContext");
  }
  if (name.empty() || name == "default") return {std::string("/var/run/docker.sock"), ""};
  const nlohmann::json meta = ReadJsonFile(
      JoinPath(config_dir, absl::StrCat("contexts/meta/", Sha256Hex(name), "/meta.json")));
  std::string url;
  if (meta.is_object() && meta.contains("Endpoints") && meta["Endpoints"].is_object()) {
    url = StringAt(meta["Endpoints"].value("docker", nlohmann::json()), "Host");
  }
  return FromUrl(url, absl::StrCat("docker context ", name));
}

EngineLocation PodmanLocation(const HostFacts& host, const std::string& fallback) {
  if (!host.container_host.empty()) return FromUrl(host.container_host, "CONTAINER_HOST");
  const std::string connection(GetEnv(host.envp, "CONTAINER_CONNECTION"));
  if (!connection.empty()) {
    return {std::nullopt, absl::StrCat("podman connection ", connection)};
  }
  return {fallback, ""};
}

}  // namespace np
