// doctor: the one place an operator looks.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/advisory.h"
#include "core/errors.h"
#include "core/image_ref.h"
#include "core/plan.h"
#include "core/protected_paths.h"
#include "core/runtime.h"
#include "launcher/audit_log.h"
#include "launcher/environment.h"
#include "launcher/exec.h"
#include "launcher/image_check.h"
#include "launcher/output.h"
#include "launcher/runtime/driver.h"
#include "launcher/shim_dir.h"
#include "launcher/source_pins.h"
#include "launcher/spawn_facts.h"
#include "launcher/state/agent_home.h"
#include "launcher/subprocess.h"
#include "launcher/trust_gate.h"
#include "launcher/verbs.h"

namespace np {
namespace {

// The last refusal in the audit log (its last 64 KiB), or null.
nlohmann::json LastRefusal(const std::string& path) {
  // Never blocks on a FIFO in the log's place, never follows a link.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY);
  if (fd < 0) return nullptr;
  struct stat st;
  std::string text;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    const off_t start = st.st_size > 65536 ? st.st_size - 65536 : 0;
    text.resize(static_cast<size_t>(st.st_size - start));
    ssize_t n = pread(fd, text.data(), text.size(), start);
    text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  }
  close(fd);
  nlohmann::json last = nullptr;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
    // A refusal, or a run that ended in np-exec's error (its exit line's code).
    if (record.is_object() && (record.value("decision", "") == "refused" ||
                               (record.value("event", "") == "exit" && record.contains("code")))) {
      last = record;
    }
  }
  return last;
}

// What doctor found: the JSON it prints, filled by the named checks below,
// and the problems (the tier cannot be delivered) and warnings among them.
struct Report {
  nlohmann::json out = nlohmann::json::object();
  std::vector<std::string> problems;
  std::vector<std::string> warnings;
};

// Everything the checks share.
struct Subject {
  const HostFacts& host;
  const Settings& settings;
  const RuntimeDriver& driver;
  Endpoint endpoint;
  ProbeResult probe;
};

void CheckTier(const Subject& s, Report& r) {
  const Tier tier = s.settings.resolved.tier;
  r.out["tier"] = TierName(tier);
  r.out["effective_from"] = TierSourceName(s.settings.resolved.from);
  const TierDescription described = DescribeConfiguredTier(tier, s.settings.config.container);
  r.out["does_not_protect_against"] = described.does_not_protect_against;
  r.out["network_restricted"] = described.network_restricted;
  if (tier == Tier::kContainer && s.settings.config.container.network == Network::kAllowlist) {
    r.out["allow_hosts"] = AllowlistToStrings(s.settings.config.container.allow_hosts);
  }
  r.out["project_root"] = s.settings.project_root.empty() ? nlohmann::json(nullptr)
                                                          : nlohmann::json(s.settings.project_root);
  const std::optional<std::string> advisory = Advisory(tier, HasMilestonesAt(s.settings.project));
  if (advisory.has_value()) r.warnings.push_back(*advisory);
}

void CheckRuntime(const Subject& s, Report& r) {
  r.out["runtime"] = ProbeToJson(s.probe);
  r.out["engine"] = EngineEndpointJson(s.endpoint);
  absl::Status gate =
      AssertTierAvailable(s.settings.resolved, s.settings.config.container.runtime, &s.probe);
  if (!gate.ok()) r.problems.emplace_back(gate.message());
  absl::Status here =
      CheckEngineLocality(s.settings.config.container, s.endpoint.remote, s.endpoint.reach);
  if (s.settings.resolved.tier == Tier::kContainer && !here.ok()) {
    r.problems.emplace_back(here.message());
  }
}

void CheckImage(const Subject& s, Report& r) {
  const ContainerConfig& config = s.settings.config.container;
  const ImageCheck image = CheckConfiguredImage(s.settings, s.driver, s.endpoint, s.probe, s.host);
  r.out["image"] = nullptr;
  if (!image.uses_image) return;
  const ImagePinning pinning = ClassifyImage(config.image);
  r.out["image"] = {{"reference", config.image},
                    {"pinning", ImagePinningName(pinning)},
                    {"present", image.present.has_value() ? nlohmann::json(*image.present)
                                                          : nlohmann::json(nullptr)}};
  if (pinning == ImagePinning::kMoving) {
    r.warnings.push_back(absl::StrCat("image \"", config.image,
                                      "\" is a moving tag: the sandbox changes with no change "
                                      "to this repository; pin it by digest (name@sha256:...)"));
  }
  if (!image.status.ok()) {
    r.problems.emplace_back(image.status.message());
  } else if (s.settings.resolved.tier == Tier::kContainer && image.present == false) {
    r.warnings.push_back(absl::StrCat("image \"", config.image,
                                      "\" is not present locally; the first spawn pulls it "
                                      "(pull \"missing\")"));
  }
}

// --deep: a no-op container planned exactly as a real run, run for real.
void CheckDeep(const Subject& s, bool deep, Report& r) {
  r.out["deep"] = nullptr;
  if (!deep || s.settings.resolved.tier != Tier::kContainer || !s.probe.available) return;
  SpawnFacts facts = BaseFacts(s.host, s.host.cwd);
  AddContainerFacts(s.host, s.driver, s.endpoint, s.probe, "np-exec-doctor", /*owned=*/true,
                    !s.settings.config.container.mounts.empty(), facts);
  AddImageUserFacts(s.settings, s.host, s.driver, s.endpoint, facts);
  facts.agent_home =
      PlannedAgentHome(s.settings, GetEnv(s.host.envp, "XDG_STATE_HOME"), s.host.home);
  // The no-op container runs with stdin on /dev/null, never a terminal.
  facts.stdin_tty = false;
  facts.stdout_tty = false;
  // The no-op needs no network, and a printed allowlist plan has no proxy
  // behind it: the sandbox is otherwise the same, so plan it on "none".
  Settings settings = s.settings;
  if (settings.config.container.network == Network::kAllowlist) {
    settings.config.container.network = Network::kNone;
    settings.config.container.allow_hosts = {};
  }
  // Pinned as a printed plan is (core/mount_pins.h).
  SourcePins pins(/*keep_descriptors=*/false);
  facts.pin = pins.AsFunction();
  absl::StatusOr<SpawnPlan> plan = PlanSpawn(settings, &s.probe, facts, {"true"}, {});
  if (!plan.ok()) {
    r.problems.emplace_back(plan.status().message());
    r.out["deep"] = {{"ran", false}, {"error", ErrorCode(plan.status())}};
    return;
  }
  // Run exactly as a caller runs a printed plan: the printed command, with
  // the caller's own environment (sandbox-exec builds the runtime's).
  const std::vector<std::string> command = PrintedCommand(*plan);
  absl::StatusOr<CaptureResult> run = RunAndCapture(command, s.host.envp, 120000);
  const int code = run.ok() ? run->exit_code : -1;
  // A client killed at the timeout, or one that failed, may leave the
  // container behind (--rm needs the client): remove it by name.
  if (code != 0) {
    std::vector<std::string> secrets;
    for (const EnvSecret& secret : plan->env_secrets) secrets.push_back(secret.secret);
    s.driver.Cleanup(s.endpoint, plan->container_name, secrets, s.host);
  }
  r.out["deep"] = {{"ran", true}, {"exit_code", code}};
  if (code != 0) r.problems.push_back(absl::StrCat("a no-op container exited ", code));
}

// The protected paths of this project and what trust and the ratchet say.
void CheckProtectionAndTrust(const Subject& s, Report& r) {
  r.out["protected_paths"] = DefaultProtectedPaths();
  for (const std::string& extra : s.settings.config.container.protect) {
    r.out["protected_paths"].push_back(extra);
  }
  absl::StatusOr<TrustGate> trust =
      EvaluateTrust(s.settings, GetEnv(s.host.envp, "XDG_STATE_HOME"), s.host.home, s.host.uid);
  if (!trust.ok()) {
    r.out["trust"] = {{"state", "unreadable"}, {"error", ErrorCode(trust.status())}};
    r.problems.emplace_back(trust.status().message());
    return;
  }
  r.out["trust"] = TrustStatusJson(*trust);
  if (!trust->decision.status.ok()) r.problems.emplace_back(trust->decision.status.message());
}

// Where the persistent agent home is and how large (agent_home.h).
void CheckHome(const Subject& s, Report& r) {
  r.out["home"] = nullptr;
  r.out["warm_sandboxes"] = WarmSandboxesJson(s.host);
  if (s.settings.project_root.empty()) return;
  r.out["home"] = AgentHomeJson(s.settings, s.host);
  if (s.settings.config.container.persistent_home && r.out["home"].contains("error")) {
    r.problems.push_back(absl::StrCat("the persistent home cannot be used (",
                                      r.out["home"]["error"].get<std::string>(),
                                      "); run `np-exec home --reset`"));
  }
}

// The shims on PATH, and each one with nothing real behind it: a spawn of it
// on direct or worktree (or bubblewrap) finds no program and exits 127.
// In a container project on docker or podman a shim's program comes from the
// image, not the host: one the host lacks is no fault (doctor does not look
// inside the image; a program the image lacks is program-not-in-image at its
// first spawn).
void CheckShims(const Subject& s, Report& r) {
  r.out["shims_on_path"] = nlohmann::json::array();
  r.out["shims_without_program"] = nlohmann::json::array();
  const ContainerConfig& container = s.settings.config.container;
  const bool from_image = s.settings.resolved.tier == Tier::kContainer &&
                          TraitsOf(container.runtime).uses_image &&
                          !TraitsOf(container.runtime).program_from_host;
  for (const std::string& dir : ShimDirsOnPath(s.host)) {
    absl::StatusOr<std::vector<Shim>> shims = ListShims(dir, s.host);
    if (!shims.ok()) continue;
    nlohmann::json names = nlohmann::json::array();
    for (const Shim& shim : *shims) {
      names.push_back(shim.name);
      if (shim.program.ok()) continue;
      nlohmann::json entry = {
          {"dir", dir}, {"name", shim.name}, {"error", ErrorCode(shim.program.status())}};
      if (from_image) {
        entry["runs_in_image"] = ImageFor(container, shim.name);
        r.out["shims_without_program"].push_back(std::move(entry));
        continue;
      }
      r.out["shims_without_program"].push_back(std::move(entry));
      r.warnings.push_back(absl::StrCat("shim ", shim.path, ": ", shim.program.status().message(),
                                        "; a spawn of it outside a container exits 127"));
    }
    r.out["shims_on_path"].push_back({{"dir", dir}, {"names", names}});
  }
}

void CheckInterposer(const Subject& s, Report& r) {
  const absl::string_view preload = GetEnv(s.host.envp, "LD_PRELOAD");
  const std::string installed = InstalledInterposer();
  r.out["interposer"] = {
      {"active", absl::StrContains(preload, "libnp-exec-preload")},
      {"ld_preload", std::string(preload)},
      {"installed", installed.empty() ? nlohmann::json(nullptr) : nlohmann::json(installed)}};
}

void CheckAuditLog(const Subject& s, Report& r) {
  r.out["audit_log"] = nullptr;
  if (s.settings.project_root.empty()) return;
  const std::string path = AuditLogPath(s.settings.project_root);
  struct stat st;
  r.out["audit_log"] = {{"path", path},
                        {"exists", stat(path.c_str(), &st) == 0},
                        {"last_refusal", LastRefusal(path)}};
}

// The tier, what it does not protect against, and the runtime.
std::string TierAndRuntimeText(const nlohmann::json& o) {
  std::string text =
      absl::StrCat("tier: ", o["tier"].get<std::string>(), " (from ",
                   o["effective_from"].get<std::string>(), ")\n", "does not protect against:\n");
  for (const auto& limit : o["does_not_protect_against"]) {
    absl::StrAppend(&text, "  - ", limit.get<std::string>(), "\n");
  }
  const nlohmann::json& runtime = o["runtime"];
  absl::StrAppend(&text, "runtime: ", runtime["runtime"].get<std::string>(), ": ",
                  runtime["available"].get<bool>()
                      ? absl::StrCat("available, engine ", runtime["version"].get<std::string>(),
                                     " (", runtime["bin"].get<std::string>(), ": ",
                                     runtime.value("bin_trusted_because", "trust unknown"), ")")
                      : absl::StrCat("unavailable (", runtime["reason"].get<std::string>(), ": ",
                                     runtime["detail"].get<std::string>(), ")"),
                  "\n");
  return text;
}

// The image and the persistent home.
std::string ImageAndHomeText(const nlohmann::json& o) {
  std::string text;
  const nlohmann::json& image = o["image"];
  if (!image.is_null()) {
    absl::StrAppend(&text, "image: ", image["reference"].get<std::string>(), " (",
                    image["pinning"].get<std::string>(), ", ",
                    image["present"].is_null()     ? "presence unknown"
                    : image["present"].get<bool>() ? "present"
                                                   : "missing",
                    ")\n");
  }
  if (!o["home"].is_null()) absl::StrAppend(&text, "home: ", AgentHomeText(o["home"]), "\n");
  if (o.contains("warm_sandboxes") && !o["warm_sandboxes"].empty()) {
    absl::StrAppend(&text, "warm sandboxes:\n", WarmSandboxesText(o["warm_sandboxes"]));
  }
  return text;
}

// The shims on PATH, and those whose program only the image has.
std::string ShimsText(const nlohmann::json& o) {
  std::string text;
  const nlohmann::json& shims = o["shims_on_path"];
  if (shims.empty()) absl::StrAppend(&text, "shims on PATH: none\n");
  for (const auto& dir : shims) {
    std::vector<std::string> names = dir["names"].get<std::vector<std::string>>();
    absl::StrAppend(&text, "shims on PATH in ", dir["dir"].get<std::string>(), ": ",
                    absl::StrJoin(names, ", "), "\n");
  }
  for (const auto& shim : o["shims_without_program"]) {
    if (!shim.contains("runs_in_image")) continue;
    absl::StrAppend(&text, "shim ", shim["name"].get<std::string>(),
                    ": not on the host's PATH; in this project it runs in the image ",
                    shim["runs_in_image"].get<std::string>(), "\n");
  }
  return text;
}

// The interposer and the project's audit log.
std::string InterposerAndAuditText(const nlohmann::json& o) {
  std::string text;
  const nlohmann::json& interposer = o["interposer"];
  absl::StrAppend(
      &text, "interposer: ", interposer["active"].get<bool>() ? "active" : "not loaded",
      interposer["installed"].is_null()
          ? std::string(" (not installed)")
          : absl::StrCat(" (installed: ", interposer["installed"].get<std::string>(), ")"),
      "\n");
  const nlohmann::json& audit = o["audit_log"];
  if (!audit.is_null()) {
    absl::StrAppend(
        &text, "audit log: ", audit["path"].get<std::string>(),
        audit["last_refusal"].is_null()
            ? "\n"
            : absl::StrCat(" (last refusal: ", audit["last_refusal"].value("code", "?"), ")\n"));
  }
  return text;
}

// The protected paths, trust and the deep check.
std::string ProtectionText(const nlohmann::json& o) {
  std::string text;
  absl::StrAppend(&text, "protected inside (read-only): ");
  bool first = true;
  for (const auto& path : o["protected_paths"]) {
    absl::StrAppend(&text, first ? "" : ", ", path.get<std::string>());
    first = false;
  }
  absl::StrAppend(&text, "\ntrust: ", o["trust"].value("state", "unknown"), "\n");
  const nlohmann::json& deep = o["deep"];
  if (!deep.is_null()) {
    absl::StrAppend(&text, "deep check: ",
                    !deep.value("ran", false)
                        ? absl::StrCat("no container was started (", deep.value("error", "?"), ")")
                    : deep.value("exit_code", -1) == 0
                        ? std::string("a no-op container planned as a real run ran and exited 0")
                        : absl::StrCat("a no-op container planned as a real run exited ",
                                       deep.value("exit_code", -1)),
                    "\n");
  }
  return text;
}

// The warnings, the problems and the verdict.
std::string VerdictText(const Report& r) {
  std::string text;
  for (const std::string& w : r.warnings) absl::StrAppend(&text, "warning: ", w, "\n");
  for (const std::string& p : r.problems) absl::StrAppend(&text, "problem: ", p, "\n");
  if (!r.problems.empty()) {
    absl::StrAppend(&text, "the configured tier cannot be delivered\n");
  } else if (!r.warnings.empty()) {
    absl::StrAppend(&text, "ok: the configured tier can be delivered; ", r.warnings.size(),
                    " warning(s) above\n");
  } else {
    absl::StrAppend(&text, "ok\n");
  }
  return text;
}

std::string ReportText(const Report& r) {
  const nlohmann::json& o = r.out;
  return absl::StrCat(TierAndRuntimeText(o), ImageAndHomeText(o), ShimsText(o),
                      InterposerAndAuditText(o), ProtectionText(o), VerdictText(r));
}

}  // namespace

absl::StatusOr<Outcome> VerbDoctor(const CommandLine& cl, const HostFacts& host) {
  absl::StatusOr<Settings> settings = LoadHostSettings(host);
  if (!settings.ok()) return settings.status();
  const RuntimeDriver& driver = DriverFor(settings->config.container.runtime);
  Subject subject{
      host, *settings, driver, ResolveEndpoint(driver, host, settings->config.container), {}};
  subject.probe = driver.Probe(host, subject.endpoint, ProbeDepth::kFull);
  if (subject.probe.bin == subject.endpoint.bin) {
    subject.probe.bin_trusted_because = subject.endpoint.bin_trusted_because;
  }
  Report report;
  CheckTier(subject, report);
  CheckRuntime(subject, report);
  CheckImage(subject, report);
  CheckDeep(subject, cl.deep, report);
  CheckProtectionAndTrust(subject, report);
  CheckHome(subject, report);
  CheckShims(subject, report);
  CheckInterposer(subject, report);
  CheckAuditLog(subject, report);
  report.out["deliverable"] = report.problems.empty();
  report.out["problems"] = report.problems;
  report.out["warnings"] = report.warnings;
  report.out["ok"] = report.problems.empty();
  if (cl.json) {
    WriteJson(report.out);
  } else {
    WriteAll(1, ReportText(report));
  }
  return Outcome{report.problems.empty() ? 0 : 1};
}

}  // namespace np
