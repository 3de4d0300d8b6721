// The driver table: one row per runtime of core/runtime.h.
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/config_file.h"
#include "core/errors.h"
#include "launcher/environment.h"
#include "launcher/runtime/driver.h"
#include "launcher/runtime/engine_tunnel.h"
#include "launcher/runtime/podman_service.h"
#include "launcher/runtime/trusted_binary.h"

namespace np {

// Each defined in its driver's file.
const RuntimeDriver& DockerDriver();
const RuntimeDriver& PodmanDriver();
const RuntimeDriver& BwrapDriver();

const RuntimeDriver& DriverFor(Runtime runtime) {
  switch (runtime) {
    case Runtime::kDocker:
      return DockerDriver();
    case Runtime::kPodman:
      return PodmanDriver();
    case Runtime::kBwrap:
      return BwrapDriver();
  }
  return DockerDriver();
}

ProbeResult ProbeAvailable(Runtime runtime, std::string bin, std::string version) {
  ProbeResult probe;
  probe.runtime = runtime;
  probe.available = true;
  probe.bin = std::move(bin);
  probe.version = std::move(version);
  return probe;
}

// The fix for each cause a driver names (driver.h), as the refusal's
// sentence ends it.
namespace {

std::string ProbeFix(Runtime runtime, absl::string_view reason, absl::string_view cause) {
  constexpr absl::string_view kUseBwrap =
      "or use bubblewrap, which needs no daemon and no group (sudo apt install bubblewrap, then "
      "\"runtime\": \"bwrap\" in isolation.container)";
  const bool docker = runtime == Runtime::kDocker;
  const bool podman = runtime == Runtime::kPodman;
  if (reason == kReasonNotInstalled) {
    if (docker) {
      return absl::StrCat(
          "Install docker (sudo apt install docker.io) and join the docker group (sudo usermod "
          "-aG docker $USER, then log in again), ",
          kUseBwrap);
    }
    if (podman) return absl::StrCat("Install podman (sudo apt install podman uidmap), ", kUseBwrap);
    return "Install bubblewrap (sudo apt install bubblewrap)";
  }
  if (cause == kCausePermissionDenied) {
    if (docker) {
      return absl::StrCat(
          "This user may not use the docker daemon's socket: join the docker group (sudo usermod "
          "-aG docker $USER, then log in again), ",
          kUseBwrap);
    }
    return absl::StrCat(
        "This user may not use that engine socket: unset CONTAINER_HOST (or DOCKER_HOST) to use "
        "your own rootless podman, ",
        kUseBwrap);
  }
  if (cause == kCauseRootlessIdMap) {
    return absl::StrCat(
        "Rootless podman needs newuidmap and newgidmap (sudo apt install uidmap) and subordinate "
        "ids for this user in /etc/subuid and /etc/subgid (sudo usermod --add-subuids "
        "100000-165535 --add-subgids 100000-165535 $USER, then podman system migrate), ",
        kUseBwrap);
  }
  if (cause == kCauseNoDaemon) {
    if (docker)
      return absl::StrCat("Start the docker daemon (sudo systemctl start docker), ", kUseBwrap);
    if (podman) {
      return "Start podman's API service (systemctl --user start podman.socket), or unset "
             "CONTAINER_HOST to run podman without it";
    }
  }
  return "Start the runtime";
}

}  // namespace

ProbeResult ProbeUnavailable(Runtime runtime, absl::string_view reason, std::string detail,
                             std::string bin, absl::string_view cause) {
  ProbeResult probe;
  probe.fix = ProbeFix(runtime, reason, cause);
  probe.runtime = runtime;
  probe.reason = std::string(reason);
  probe.detail = std::move(detail);
  probe.bin = std::move(bin);
  return probe;
}

absl::Status RuntimeNotExecutable(const std::string& bin, int err) {
  return MakeError(absl::StatusCode::kUnavailable, "isolation-container-unavailable",
                   absl::StrCat("cannot execute ", bin, ": ", strerror(err),
                                "; nothing ran, and np-exec does not fall back"),
                   {{"bin", bin}});
}

void ResolveTrustedBinary(absl::string_view name, const HostFacts& host, Endpoint& endpoint) {
  RuntimeBinary found =
      FindTrustedBinary(name, host.path, HostProjectRoot(host), host.self, StatFile, LstatOwner);
  endpoint.bin = found.path;
  endpoint.bin_trusted_because = found.trusted_because;
  endpoint.untrusted = found.skipped;
}

ProbeResult ProbeMissingBinary(Runtime runtime, const Endpoint& endpoint) {
  if (!endpoint.untrusted.empty()) {
    return ProbeUnavailable(
        runtime, kReasonUntrusted,
        std::string(RuntimeUntrusted(RuntimeName(runtime), endpoint.untrusted).message()));
  }
  return ProbeUnavailable(runtime, kReasonNotInstalled,
                          absl::StrCat("no ", RuntimeName(runtime), " binary on PATH"));
}

namespace {

// An accepted ssh engine through its one reused connection (engine_tunnel.h):
// the forwarded endpoint becomes the engine's socket, and every client call
// is pinned to it in place of the ssh URL. Without one, the client dials ssh
// itself on each call.
void UseEngineTunnel(const HostFacts& host, Endpoint& endpoint) {
  for (std::string& pinned : endpoint.client_set) {
    const size_t eq = pinned.find('=');
    const absl::string_view name = absl::string_view(pinned).substr(0, eq);
    if (name != "DOCKER_HOST" && name != "CONTAINER_HOST") continue;
    Endpoint ssh;
    ResolveTrustedBinary("ssh", host, ssh);
    const std::optional<std::string> socket =
        EngineTunnel(host, ssh.bin, pinned.substr(eq + 1), endpoint.timeout_ms);
    if (!socket.has_value()) return;
    endpoint.socket = *socket;
    pinned = absl::StrCat(name, "=unix://", *socket);
    return;
  }
}

}  // namespace

Endpoint ResolveEndpoint(const RuntimeDriver& driver, const HostFacts& host,
                         const ContainerConfig& container) {
  Endpoint endpoint = driver.Resolve(host);
  endpoint.remote_allowed =
      !endpoint.remote.empty() && container.remote_engine &&
      !endpoint.accepted_client_set.empty() &&
      (endpoint.reach == EngineReach::kSsh || endpoint.reach == EngineReach::kTls);
  if (endpoint.remote_allowed) endpoint.client_set = endpoint.accepted_client_set;
  if (endpoint.remote_allowed && endpoint.reach == EngineReach::kSsh &&
      GetEnv(host.envp, "NP_EXEC_ENGINE_TUNNEL") != "0") {
    UseEngineTunnel(host, endpoint);
  }
  // Warm sandboxes on podman without an API service of the caller's: the
  // questions go to np-exec's own (podman_service.h) once it answers.
  if (OwnPodmanServiceApplies(container.runtime, container.warm_idle_seconds.has_value(), endpoint,
                              host)) {
    endpoint.socket = OwnPodmanService(host, endpoint.bin, endpoint.timeout_ms);
    endpoint.own_service = endpoint.socket.has_value();
  }
  return endpoint;
}

ProbeResult ProbeRuntime(Runtime runtime, const HostFacts& host, ProbeDepth depth,
                         bool remote_engine) {
  const RuntimeDriver& driver = DriverFor(runtime);
  ContainerConfig container;
  container.runtime = runtime;
  container.remote_engine = remote_engine;
  const Endpoint endpoint = ResolveEndpoint(driver, host, container);
  ProbeResult probe = driver.Probe(host, endpoint, depth);
  if (probe.bin == endpoint.bin) probe.bin_trusted_because = endpoint.bin_trusted_because;
  return probe;
}

nlohmann::json EngineEndpointJson(const Endpoint& endpoint) {
  return {{"on_this_host", endpoint.remote.empty()},
          {"socket", endpoint.socket.has_value() ? nlohmann::json(*endpoint.socket) : nullptr},
          {"remote",
           endpoint.remote.empty() ? nlohmann::json(nullptr) : nlohmann::json(endpoint.remote)},
          {"reach", EngineReachName(endpoint.reach)},
          {"remote_allowed", endpoint.remote_allowed}};
}

}  // namespace np
