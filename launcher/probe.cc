#include "launcher/probe.h"

#include <sys/stat.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/errors.h"
#include "launcher/engine_api.h"
#include "launcher/subprocess.h"

namespace np {
namespace {

constexpr int kCommandTimeoutMs = 10000;

ProbeResult Unavailable(Runtime runtime, absl::string_view reason, std::string detail,
                        std::string bin = "") {
  ProbeResult probe;
  probe.runtime = runtime;
  probe.reason = std::string(reason);
  probe.detail = std::move(detail);
  probe.bin = std::move(bin);
  return probe;
}

ProbeResult Available(Runtime runtime, std::string bin, std::string version) {
  ProbeResult probe;
  probe.runtime = runtime;
  probe.available = true;
  probe.bin = std::move(bin);
  probe.version = std::move(version);
  return probe;
}

// The engine version Docker names in the Server header of every response
// ("Server: Docker/20.10.24+dfsg1 (linux)", the same string /version reports);
// "" when the header is missing or names another engine.
std::string DockerServerVersion(absl::string_view headers) {
  for (absl::string_view line : absl::StrSplit(headers, "\r\n")) {
    if (!absl::StartsWithIgnoreCase(line, "server:")) continue;
    absl::string_view value = absl::StripAsciiWhitespace(line.substr(7));
    if (!absl::StartsWith(value, "Docker/")) return "";
    value.remove_prefix(7);
    return std::string(value.substr(0, value.find(' ')));
  }
  return "";
}

ProbeResult ProbeSocket(Runtime runtime, const Endpoint& endpoint) {
  // /_ping answers in about 0.1 ms; /version has the daemon ask containerd for
  // its components and takes 5 to 15 ms here, on every container spawn. Docker
  // names its version in the ping's Server header, so the ping alone answers
  // both questions; any other answer falls back to /version as before.
  absl::StatusOr<HttpResponse> ping = EngineRequest(*endpoint.socket, "GET", "/_ping");
  if (!ping.ok()) {
    return Unavailable(runtime, kReasonUnreachable, std::string(ping.status().message()),
                       endpoint.bin);
  }
  if (ping->status == 200) {
    std::string version = DockerServerVersion(ping->headers);
    if (!version.empty()) return Available(runtime, endpoint.bin, version);
  }
  absl::StatusOr<HttpResponse> response = EngineRequest(*endpoint.socket, "GET", "/version");
  if (!response.ok()) {
    return Unavailable(runtime, kReasonUnreachable, std::string(response.status().message()),
                       endpoint.bin);
  }
  if (response->status != 200) {
    return Unavailable(
        runtime, kReasonUnreachable,
        absl::StrCat("engine socket ", *endpoint.socket, " answered HTTP ", response->status),
        endpoint.bin);
  }
  nlohmann::json body = nlohmann::json::parse(response->body, nullptr, false);
  std::string version = "unknown";
  if (body.is_object() && body.contains("Version") && body["Version"].is_string()) {
    version = body["Version"].get<std::string>();
  }
  return Available(runtime, endpoint.bin, version);
}

ProbeResult ProbeCommand(Runtime runtime, const Endpoint& endpoint, const HostFacts& host,
                         const char* format) {
  absl::StatusOr<CaptureResult> result =
      RunAndCapture({endpoint.bin, "version", "--format", format}, host.envp, kCommandTimeoutMs);
  if (!result.ok()) {
    return Unavailable(runtime, kReasonUnreachable, std::string(result.status().message()),
                       endpoint.bin);
  }
  std::string version(absl::StripAsciiWhitespace(result->out));
  if (result->timed_out) {
    return Unavailable(runtime, kReasonUnreachable,
                       absl::StrCat(endpoint.bin, " version timed out"), endpoint.bin);
  }
  if (result->exit_code != 0 || version.empty()) {
    return Unavailable(runtime, kReasonUnreachable,
                       absl::StrCat(endpoint.bin, " version exited ", result->exit_code,
                                    " without an engine version"),
                       endpoint.bin);
  }
  return Available(runtime, endpoint.bin, version);
}

ProbeResult ProbeBwrap(const Endpoint& endpoint, const HostFacts& host, bool for_run_path) {
  if (for_run_path) return Available(Runtime::kBwrap, endpoint.bin, "unknown");
  absl::StatusOr<CaptureResult> sandbox =
      RunAndCapture(BwrapProbeArgs(endpoint.bin), host.envp, kCommandTimeoutMs);
  if (!sandbox.ok() || sandbox->exit_code != 0) {
    return Unavailable(Runtime::kBwrap, kReasonUnreachable,
                       sandbox.ok() ? absl::StrCat("bubblewrap cannot create its namespaces "
                                                   "here (no-op sandbox exited ",
                                                   sandbox->exit_code, ")")
                                    : std::string(sandbox.status().message()),
                       endpoint.bin);
  }
  std::string version = "unknown";
  {
    absl::StatusOr<CaptureResult> v =
        RunAndCapture({endpoint.bin, "--version"}, host.envp, kCommandTimeoutMs);
    if (v.ok() && v->exit_code == 0) {
      version = std::string(absl::StripAsciiWhitespace(v->out));
      if (version.rfind("bubblewrap ", 0) == 0) version = version.substr(11);
    }
  }
  return Available(Runtime::kBwrap, endpoint.bin, version);
}

}  // namespace

std::vector<std::string> BwrapProbeArgs(const std::string& bin) {
  return {bin,
          "--unshare-user",
          "--unshare-pid",
          "--unshare-net",
          "--unshare-ipc",
          "--unshare-uts",
          "--die-with-parent",
          "--cap-drop",
          "ALL",
          "--ro-bind",
          "/usr",
          "/usr",
          "--symlink",
          "usr/bin",
          "/bin",
          "--symlink",
          "usr/lib",
          "/lib",
          "--symlink",
          "usr/lib64",
          "/lib64",
          "--proc",
          "/proc",
          "--dev",
          "/dev",
          "--remount-ro",
          "/",
          "--",
          "/usr/bin/true"};
}

Endpoint ResolveEndpoint(Runtime runtime, const HostFacts& host) {
  Endpoint endpoint;
  absl::StatusOr<std::string> bin =
      FindRealProgram(RuntimeName(runtime), host.path, host.cwd, host.self, StatFile);
  if (bin.ok()) endpoint.bin = *bin;
  switch (runtime) {
    case Runtime::kDocker:
      endpoint.socket = UnixSocketPath(host.docker_host, "/var/run/docker.sock");
      break;
    case Runtime::kPodman: {
      const std::string fallback =
          host.uid == 0 ? std::string("/run/podman/podman.sock")
                        : absl::StrCat("/run/user/", host.uid, "/podman/podman.sock");
      endpoint.socket = UnixSocketPath(host.container_host, fallback);
      struct stat st;
      // Podman needs no daemon: without its API service the socket simply is
      // not there, and the command answers instead.
      if (host.container_host.empty() && endpoint.socket.has_value() &&
          stat(endpoint.socket->c_str(), &st) != 0) {
        endpoint.socket.reset();
      }
      break;
    }
    case Runtime::kBwrap:
      break;
  }
  return endpoint;
}

ProbeResult ProbeRuntime(Runtime runtime, const HostFacts& host, bool for_run_path) {
  Endpoint endpoint = ResolveEndpoint(runtime, host);
  if (endpoint.bin.empty()) {
    return Unavailable(runtime, kReasonNotInstalled,
                       absl::StrCat("no ", RuntimeName(runtime), " binary on PATH"));
  }
  switch (runtime) {
    case Runtime::kDocker:
      if (endpoint.socket.has_value()) return ProbeSocket(runtime, endpoint);
      return ProbeCommand(runtime, endpoint, host, "{{.Server.Version}}");
    case Runtime::kPodman:
      if (endpoint.socket.has_value()) return ProbeSocket(runtime, endpoint);
      return ProbeCommand(
          runtime, endpoint, host,
          host.container_host.empty() ? "{{.Client.Version}}" : "{{.Server.Version}}");
    case Runtime::kBwrap:
      return ProbeBwrap(endpoint, host, for_run_path);
  }
  return Unavailable(runtime, kReasonNotInstalled, "unknown runtime");
}

}  // namespace np
