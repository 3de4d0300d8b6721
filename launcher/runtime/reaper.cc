#include "launcher/runtime/reaper.h"

#include <unistd.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/container_argv.h"
#include "core/errors.h"
#include "launcher/exec.h"
#include "launcher/host.h"
#include "launcher/runtime/engine_api.h"
#include "launcher/subprocess.h"
#include "nlohmann/json.hpp"

namespace np {

std::string OwnerLabelValue(int pid, unsigned long long start_time) {
  return absl::StrCat(pid, ":", start_time);
}

bool OwnerAlive(absl::string_view owner) {
  std::pair<absl::string_view, absl::string_view> parts = absl::StrSplit(owner, ':');
  int pid = 0;
  unsigned long long start = 0;
  if (!absl::SimpleAtoi(parts.first, &pid) || !absl::SimpleAtoi(parts.second, &start) || pid <= 0) {
    return false;
  }
  return ProcessStartTime(pid) == start;
}

absl::Status RemoveContainer(const std::string& socket_path, absl::string_view name) {
  absl::StatusOr<HttpResponse> response = EngineRequest(
      socket_path, "DELETE", absl::StrCat("/containers/", UrlEncode(name), "?force=1&v=1"));
  if (!response.ok()) return response.status();
  if (response->status != 204 && response->status != 404 && response->status != 409) {
    return MakeError(absl::StatusCode::kUnavailable, "engine-error",
                     absl::StrCat("removing container ", name, ": HTTP ", response->status),
                     {{"container", name}});
  }
  return absl::OkStatus();
}

absl::StatusOr<int> ReapOrphans(const std::string& socket_path) {
  const std::string filter =
      UrlEncode(nlohmann::json({{"label", {std::string(kOwnerLabel)}}}).dump());
  absl::StatusOr<HttpResponse> response =
      EngineRequest(socket_path, "GET", absl::StrCat("/containers/json?all=1&filters=", filter));
  if (!response.ok()) return response.status();
  nlohmann::json list = nlohmann::json::parse(response->body, nullptr, false);
  if (response->status != 200 || !list.is_array()) return 0;
  int removed = 0;
  for (const nlohmann::json& container : list) {
    if (!container.is_object() || !container.contains("Labels") ||
        !container["Labels"].is_object() || !container.contains("Id")) {
      continue;
    }
    const nlohmann::json& labels = container["Labels"];
    auto owner = labels.find(std::string(kOwnerLabel));
    if (owner == labels.end() || !owner->is_string()) continue;
    if (OwnerAlive(owner->get<std::string>())) continue;
    if (RemoveContainer(socket_path, container["Id"].get<std::string>()).ok()) ++removed;
  }
  return removed;
}

// How long a forced removal waits for the engine to finish removing.
constexpr int kRemovalWaitMs = 10000;

void ForceRemoveContainer(const std::string& bin, const std::vector<std::string>& env,
                          const std::optional<std::string>& socket_path, const std::string& name) {
  if (name.empty()) return;
  // Killed first: podman's forced removal stops a running container with its
  // stop timeout (SIGTERM, 10 s by default, then SIGKILL), which a program
  // that ignores SIGTERM would sit out once more after np-exec's own grace.
  // Killing a container that is not running is refused, harmlessly.
  if (socket_path.has_value()) {
    (void)EngineRequest(*socket_path, "POST",
                        absl::StrCat("/containers/", UrlEncode(name), "/kill?signal=KILL"));
    if (RemoveContainer(*socket_path, name).ok()) {
      // The killed container's client may have the engine remove it (--rm)
      // at the same moment; the DELETE then answers "in progress" (409).
      // Gone means gone: wait (briefly) until the engine no longer has it.
      for (int waited_ms = 0; waited_ms < kRemovalWaitMs; waited_ms += 100) {
        absl::StatusOr<HttpResponse> inspect = EngineRequest(
            *socket_path, "GET", absl::StrCat("/containers/", UrlEncode(name), "/json"));
        if (!inspect.ok() || inspect->status == 404) break;
        usleep(100 * 1000);
      }
      return;
    }
  }
  std::vector<char*> envp = CStrings(env);
  (void)RunAndCapture({bin, "kill", "--signal", "KILL", name}, envp.data(), 15000);
  (void)RunAndCapture({bin, "rm", "-f", name}, envp.data(), 15000);
}

}  // namespace np
