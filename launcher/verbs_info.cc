// status, describe and probe: read-only verbs that report.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/advisory.h"
#include "core/config_json.h"
#include "core/errors.h"
#include "core/gate.h"
#include "core/protected_paths.h"
#include "core/settings.h"
#include "core/tier.h"
#include "launcher/image_check.h"
#include "launcher/output.h"
#include "launcher/runtime/driver.h"
#include "launcher/trust_gate.h"
#include "launcher/verbs.h"

namespace np {
namespace {

std::string DescriptionText(const TierDescription& d) {
  std::string text = absl::StrCat(
      "tier: ", TierName(d.tier), "\n  isolates versions: ", d.isolates_versions ? "yes" : "no",
      "\n  isolates rights:   ", d.isolates_rights ? "yes" : "no",
      "\n  network restricted: ", d.network_restricted ? "yes" : "no", "\n  ", d.summary,
      "\n  use when: ", d.use_when, "\n  does not protect against:\n");
  for (const std::string& limit : d.does_not_protect_against) {
    absl::StrAppend(&text, "    - ", limit, "\n");
  }
  return text;
}

std::string ProbeText(const ProbeResult& probe) {
  if (probe.available) {
    return absl::StrCat(RuntimeName(probe.runtime), ": available, engine ", probe.version, " (",
                        probe.bin, probe.bin_trusted_because.empty() ? "" : ": ",
                        probe.bin_trusted_because, ")\n");
  }
  return absl::StrCat(RuntimeName(probe.runtime), ": unavailable: ", probe.reason, " (",
                      probe.detail, ")\n");
}

absl::StatusOr<Runtime> RuntimeFor(const CommandLine& cl, const HostFacts& host) {
  if (!cl.runtime.empty()) return ParseRuntime(cl.runtime);
  absl::StatusOr<Settings> settings = LoadHostSettings(host);
  if (!settings.ok()) return settings.status();
  return settings->config.container.runtime;
}

}  // namespace

absl::StatusOr<Outcome> VerbDescribe(const CommandLine& cl, const HostFacts& /*host*/) {
  absl::StatusOr<Tier> tier = ParseTier(cl.tier);
  if (!tier.ok()) return tier.status();
  // Without --runtime: the default runtime (the first row of core's table).
  Runtime runtime = AllRuntimes().front().runtime;
  if (!cl.runtime.empty()) {
    absl::StatusOr<Runtime> parsed = ParseRuntime(cl.runtime);
    if (!parsed.ok()) return parsed.status();
    runtime = *parsed;
  }
  TierDescription description = DescribeTier(*tier, runtime);
  nlohmann::json out = DescriptionToJson(description);
  if (*tier == Tier::kContainer) out["protected_paths"] = DefaultProtectedPaths();
  if (cl.json) {
    WriteJson(out);
  } else {
    std::string text = DescriptionText(description);
    if (*tier == Tier::kContainer) {
      absl::StrAppend(&text, "  read-only inside the writable project:\n");
      for (const std::string& path : DefaultProtectedPaths()) {
        absl::StrAppend(&text, "    - ", path, "\n");
      }
    }
    WriteAll(1, text);
  }
  return Outcome{0};
}

absl::StatusOr<Outcome> VerbProbe(const CommandLine& cl, const HostFacts& host) {
  absl::StatusOr<Runtime> runtime = RuntimeFor(cl, host);
  if (!runtime.ok()) return runtime.status();
  // An engine on another host the operator file accepts is asked too.
  absl::StatusOr<Settings> settings = LoadHostSettings(host);
  ProbeResult probe = ProbeRuntime(*runtime, host, ProbeDepth::kFull,
                                   settings.ok() && settings->config.container.remote_engine);
  if (cl.json) {
    WriteJson(ProbeToJson(probe));
  } else {
    WriteAll(1, ProbeText(probe));
  }
  return Outcome{probe.available ? 0 : 1};
}

namespace {

nlohmann::json ImageJson(const ImageCheck& image, const std::string& reference) {
  if (!image.uses_image) return nullptr;
  return {{"reference", reference},
          {"present",
           image.present.has_value() ? nlohmann::json(*image.present) : nlohmann::json(nullptr)}};
}

// `status` without --json: the tier, the runtime, the image, the advisory
// and trust, from the JSON's own values.
std::string StatusText(const Settings& settings, const TierDescription& description,
                       const ProbeResult& probe, const ImageCheck& image,
                       const nlohmann::json& out) {
  std::string text = absl::StrCat("effective tier: ", TierName(settings.resolved.tier), " (from ",
                                  TierSourceName(settings.resolved.from), ")\n",
                                  DescriptionText(description), "runtime: ", ProbeText(probe));
  if (image.uses_image) {
    absl::StrAppend(&text, "image: ", settings.config.container.image, " (",
                    !image.present.has_value() ? "presence unknown"
                    : *image.present           ? "present"
                                               : "missing",
                    ")\n");
  }
  if (out["advisory"].is_string()) {
    absl::StrAppend(&text, "advisory: ", out["advisory"].get<std::string>(), "\n");
  }
  absl::StrAppend(&text, "trust: ", out["trust"].value("state", "unknown"), "\n");
  if (!out["warm_sandboxes"].empty()) {
    absl::StrAppend(&text, "warm sandboxes:\n", WarmSandboxesText(out["warm_sandboxes"]));
  }
  return text;
}

}  // namespace

absl::StatusOr<Outcome> VerbStatus(const CommandLine& cl, const HostFacts& host) {
  absl::StatusOr<Settings> settings = LoadHostSettings(host);
  if (!settings.ok()) return settings.status();
  const ContainerConfig& container = settings->config.container;
  const RuntimeDriver& driver = DriverFor(container.runtime);
  const Endpoint endpoint = ResolveEndpoint(driver, host, container);
  ProbeResult probe = driver.Probe(host, endpoint, ProbeDepth::kFull);
  if (probe.bin == endpoint.bin) probe.bin_trusted_because = endpoint.bin_trusted_because;
  const TierDescription description = DescribeConfiguredTier(settings->resolved.tier, container);
  const std::optional<std::string> advisory =
      Advisory(settings->resolved.tier, HasMilestonesAt(settings->project));
  absl::Status gate = AssertTierAvailable(settings->resolved, container.runtime, &probe);
  // Everything else a spawn needs of the runtime: the image, on the
  // container tier (doctor checks the same).
  const ImageCheck image = CheckConfiguredImage(*settings, driver, endpoint, probe, host);

  nlohmann::json out = {
      {"tier", TierName(settings->resolved.tier)},
      {"effective_from", TierSourceName(settings->resolved.from)},
      {"description", DescriptionToJson(description)},
      {"runtime", ProbeToJson(probe)},
      {"engine", EngineEndpointJson(endpoint)},
      {"advisory", advisory.has_value() ? nlohmann::json(*advisory) : nlohmann::json(nullptr)},
      {"container", ContainerConfigToJson(container)},
      {"image", ImageJson(image, container.image)},
      {"project_root", settings->project_root.empty() ? nlohmann::json(nullptr)
                                                      : nlohmann::json(settings->project_root)},
  };
  // Trust and the ratchet: what a spawn here would be told (trust_gate.h).
  absl::StatusOr<TrustGate> trust =
      EvaluateTrust(*settings, GetEnv(host.envp, "XDG_STATE_HOME"), host.home, host.uid);
  out["trust"] =
      trust.ok() ? TrustStatusJson(*trust)
                 : nlohmann::json({{"state", "unreadable"}, {"error", ErrorCode(trust.status())}});
  out["warm_sandboxes"] = WarmSandboxesJson(host);
  if (cl.json) {
    WriteJson(out);
  } else {
    WriteAll(1, StatusText(*settings, description, probe, image, out));
  }
  // The JSON is on stdout either way; the error line says why the tier
  // cannot be delivered (or a spawn here would be refused), and the exit
  // status is 1.
  // An engine on another host is not asked (the probe's unavailability is
  // that): its refusal is the cause.
  if (settings->resolved.tier == Tier::kContainer) {
    absl::Status here = CheckEngineLocality(container, endpoint.remote, endpoint.reach);
    if (!here.ok()) return here;
  }
  if (!gate.ok()) return gate;
  if (!image.status.ok()) return image.status;
  if (!trust.ok()) return trust.status();
  if (!trust->decision.status.ok()) return trust->decision.status;
  return Outcome{0};
}

}  // namespace np
