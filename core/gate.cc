#include "core/gate.h"

#include "absl/strings/str_cat.h"
#include "core/errors.h"

namespace np {

nlohmann::json ProbeToJson(const ProbeResult& probe) {
  if (probe.available) {
    nlohmann::json out = {{"available", true},
                          {"runtime", RuntimeName(probe.runtime)},
                          {"bin", probe.bin},
                          {"version", probe.version}};
    if (!probe.bin_trusted_because.empty()) out["bin_trusted_because"] = probe.bin_trusted_because;
    return out;
  }
  return {{"available", false},
          {"runtime", RuntimeName(probe.runtime)},
          {"reason", probe.reason},
          {"detail", probe.detail}};
}

absl::Status AssertTierAvailable(const ResolvedTier& resolved, Runtime runtime,
                                 const ProbeResult* probe) {
  if (resolved.tier != Tier::kContainer) return absl::OkStatus();
  const bool well_formed = probe != nullptr && probe->runtime == runtime &&
                           (probe->available ? !probe->bin.empty()
                                             : (probe->reason == kReasonNotInstalled ||
                                                probe->reason == kReasonUnreachable ||
                                                probe->reason == kReasonUntrusted));
  if (!well_formed) {
    return MakeError(
        absl::StatusCode::kInternal, "isolation-probe-required",
        absl::StrCat("the container tier needs a probe result for ", RuntimeName(runtime),
                     " before it can be asserted; none (or a malformed one) "
                     "was given"),
        {{"runtime", RuntimeName(runtime)}});
  }
  if (probe->available) return absl::OkStatus();
  std::string how_to_accept;
  switch (resolved.from) {
    case TierSource::kOperator:
      how_to_accept =
          "change the tier in the operator config "
          "($XDG_CONFIG_HOME/nubos-pilot/config.json), which asks for it, to accept direct";
      break;
    case TierSource::kEnv:
      how_to_accept = "unset NP_EXEC_TIER, which asks for it, to accept direct";
      break;
    default:
      how_to_accept =
          "to run without isolation, set \"isolation\": {\"tier\": \"direct\"} "
          "in .nubos-pilot/config.json explicitly";
      break;
  }
  // A planted runtime is refused with a code of its own: the fix is not to
  // start the runtime but to find out who put a binary where.
  const bool untrusted = probe->reason == kReasonUntrusted;
  return MakeError(
      absl::StatusCode::kFailedPrecondition,
      untrusted ? "isolation-runtime-untrusted" : "isolation-container-unavailable",
      absl::StrCat("the container tier is configured but ", RuntimeName(runtime),
                   " is not usable (", probe->reason, ": ", probe->detail,
                   "). np-exec refuses instead of falling back to direct: running the "
                   "program with your whole account while you believe it is contained is "
                   "worse than not running it. ",
                   untrusted            ? std::string("Find out who put it there")
                   : probe->fix.empty() ? std::string("Start the runtime")
                                        : probe->fix,
                   "; or ", how_to_accept, "."),
      {{"tier", "container"},
       {"effective_from", TierSourceName(resolved.from)},
       {"probe", ProbeToJson(*probe)}});
}

}  // namespace np
