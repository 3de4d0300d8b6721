// The driver table: one row per runtime of core/runtime.h.
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/config_file.h"
#include "core/errors.h"
#include "launcher/runtime/driver.h"
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

ProbeResult ProbeUnavailable(Runtime runtime, absl::string_view reason, std::string detail,
                             std::string bin) {
  ProbeResult probe;
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

ProbeResult ProbeRuntime(Runtime runtime, const HostFacts& host, ProbeDepth depth) {
  const RuntimeDriver& driver = DriverFor(runtime);
  const Endpoint endpoint = driver.Resolve(host);
  ProbeResult probe = driver.Probe(host, endpoint, depth);
  if (probe.bin == endpoint.bin) probe.bin_trusted_because = endpoint.bin_trusted_because;
  return probe;
}

}  // namespace np
