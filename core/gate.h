// The availability gate: a configured tier is never silently downgraded.
//
// The gate cannot find out for itself whether a container runtime is usable:
// the caller must hand it a probe result, and must say where it came from. A
// default either way was rejected (ADR-0029): "available" would make the gate
// a rubber stamp, "unavailable" would send a caller who forgot the probe off
// debugging a runtime that is fine. Pure.
#ifndef NP_EXEC_CORE_GATE_H_
#define NP_EXEC_CORE_GATE_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/resolve_tier.h"
#include "core/tier.h"
#include "nlohmann/json.hpp"

namespace np {

inline constexpr absl::string_view kReasonNotInstalled = "runtime-not-installed";
inline constexpr absl::string_view kReasonUnreachable = "daemon-unreachable";
// Only untrusted matches of the runtime binary were found (a planted `bwrap`
// in the project's node_modules/.bin, say); the gate refuses with
// `isolation-runtime-untrusted`.
inline constexpr absl::string_view kReasonUntrusted = "runtime-untrusted";

// What the launcher's probe found out about one runtime.
struct ProbeResult {
  Runtime runtime = kDefaultRuntime;
  bool available = false;
  std::string bin;                  // Absolute path of the runtime binary, when found.
  std::string version;              // Engine version, when available.
  std::string reason;               // kReasonNotInstalled or kReasonUnreachable.
  std::string detail;               // What exactly failed, for a person.
  std::string bin_trusted_because;  // Why `bin` is a trusted location, when known.
  // The fix the refusal names when the driver could tell the cause (what to
  // install, which group to join, how to start the daemon, podman's uid map,
  // bubblewrap); empty: "Start the runtime".
  std::string fix;
};

// The probe as nubos-pilot's JSON: {available, bin, version} or
// {available:false, reason, detail}.
nlohmann::json ProbeToJson(const ProbeResult& probe);

// OK when `tier` can be delivered. direct and worktree always can. container
// needs a well-formed probe of the configured runtime (else
// `isolation-probe-required`) that found it available (else
// `isolation-container-unavailable`, whose message says why refusing beats
// falling back and how to accept direct explicitly).
absl::Status AssertTierAvailable(const ResolvedTier& resolved, Runtime runtime,
                                 const ProbeResult* probe);

}  // namespace np

#endif  // NP_EXEC_CORE_GATE_H_
