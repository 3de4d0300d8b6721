// doctor: the one place an operator looks.
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/advisory.h"
#include "core/errors.h"
#include "core/image_ref.h"
#include "core/plan.h"
#include "launcher/audit_log.h"
#include "launcher/container_facts.h"
#include "launcher/engine_api.h"
#include "launcher/exec.h"
#include "launcher/output.h"
#include "launcher/probe.h"
#include "launcher/reaper.h"
#include "launcher/subprocess.h"
#include "launcher/verbs.h"

namespace np {
namespace {

// Entries of PATH directories that are np-exec itself (by device and inode).
nlohmann::json ShimsOnPath(const HostFacts& host) {
  nlohmann::json found = nlohmann::json::array();
  for (absl::string_view dir : absl::StrSplit(host.path, ':', absl::SkipEmpty())) {
    const std::string d(dir);
    DIR* handle = opendir(d.c_str());
    if (handle == nullptr) continue;
    nlohmann::json names = nlohmann::json::array();
    while (dirent* entry = readdir(handle)) {
      if (entry->d_type != DT_LNK && entry->d_type != DT_REG && entry->d_type != DT_UNKNOWN) {
        continue;
      }
      absl::string_view name = entry->d_name;
      if (name == "np-exec" || name == "." || name == "..") continue;
      struct stat st;
      if (fstatat(dirfd(handle), entry->d_name, &st, 0) != 0) continue;
      if (st.st_dev == host.self.dev && st.st_ino == host.self.ino) names.push_back(name);
    }
    closedir(handle);
    if (!names.empty()) found.push_back({{"dir", d}, {"names", names}});
  }
  return found;
}

// The last refusal in the audit log (its last 64 KiB), or null.
nlohmann::json LastRefusal(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st;
  std::string text;
  if (fstat(fd, &st) == 0) {
    const off_t start = st.st_size > 65536 ? st.st_size - 65536 : 0;
    text.resize(static_cast<size_t>(st.st_size - start));
    ssize_t n = pread(fd, text.data(), text.size(), start);
    text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  }
  close(fd);
  nlohmann::json last = nullptr;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
    if (record.is_object() && record.value("decision", "") == "refused") last = record;
  }
  return last;
}

// true / false, or null when it cannot be told.
nlohmann::json ImagePresent(const ContainerConfig& config, const Endpoint& endpoint,
                            const HostFacts& host) {
  if (endpoint.bin.empty()) return nullptr;
  if (endpoint.socket.has_value()) {
    absl::StatusOr<HttpResponse> image = EngineRequest(
        *endpoint.socket, "GET", absl::StrCat("/images/", UrlEncode(config.image), "/json"));
    if (!image.ok()) return nullptr;
    if (image->status == 200) return true;
    if (image->status == 404) return false;
    return nullptr;
  }
  absl::StatusOr<CaptureResult> inspect =
      RunAndCapture({endpoint.bin, "image", "inspect", config.image}, host.envp, 15000);
  if (!inspect.ok() || inspect->timed_out) return nullptr;
  return inspect->exit_code == 0;
}

// The interposer library where `shims install --preload` looks for it: next
// to np-exec in a build tree, ../lib/np-exec/ when installed. "" if absent.
std::string InstalledInterposer(const HostFacts& host) {
  const std::string dir = host.self_path.substr(0, host.self_path.rfind('/'));
  for (const std::string& candidate :
       {absl::StrCat(dir, "/libnp-exec-preload.so"),
        absl::StrCat(dir, "/../lib/np-exec/libnp-exec-preload.so")}) {
    char real[4096];
    if (realpath(candidate.c_str(), real) != nullptr) return real;
  }
  return "";
}

}  // namespace

int VerbDoctor(const CommandLine& cl, const HostFacts& host) {
  absl::StatusOr<Settings> settings =
      LoadSettings({host.cwd, OperatorConfigPath(host), host.env_tier, true});
  if (!settings.ok()) return VerbFail(settings.status(), host);
  const ContainerConfig& config = settings->config.container;
  const Tier tier = settings->resolved.tier;
  const bool container = tier == Tier::kContainer;
  const Endpoint endpoint = ResolveEndpoint(config.runtime, host);
  const ProbeResult probe = ProbeRuntime(config.runtime, host);
  const TierDescription description = DescribeConfiguredTier(tier, config);
  std::vector<std::string> problems;
  std::vector<std::string> warnings;

  absl::Status gate = AssertTierAvailable(settings->resolved, config.runtime, &probe);
  if (!gate.ok()) problems.emplace_back(gate.message());

  nlohmann::json image = nullptr;
  if (config.runtime != Runtime::kBwrap) {
    const ImagePinning pinning = ClassifyImage(config.image);
    nlohmann::json present = probe.available ? ImagePresent(config, endpoint, host) : nullptr;
    image = {
        {"reference", config.image}, {"pinning", ImagePinningName(pinning)}, {"present", present}};
    if (pinning == ImagePinning::kMoving) {
      warnings.push_back(absl::StrCat("image \"", config.image,
                                      "\" is a moving tag: the sandbox changes with no change "
                                      "to this repository; pin it by digest (name@sha256:...)"));
    }
    if (container && present == false) {
      problems.push_back(absl::StrCat("image \"", config.image, "\" is not present locally; ",
                                      RuntimeName(config.runtime), " pull it or build it"));
    }
  }

  nlohmann::json deep = nullptr;
  if (cl.deep && container && probe.available) {
    SpawnFacts facts = ContainerFacts(host, host.cwd, config.runtime, endpoint, "np-exec-doctor",
                                      OwnerLabelValue(host.pid, ProcessStartTime(host.pid)));
    // The no-op container runs with stdin on /dev/null, never a terminal.
    facts.stdin_tty = false;
    facts.stdout_tty = false;
    absl::StatusOr<SpawnPlan> plan = PlanSpawn(*settings, &probe, facts, {"true"}, {});
    if (!plan.ok()) {
      problems.emplace_back(plan.status().message());
      deep = {{"ran", false}, {"error", ErrorCode(plan.status())}};
    } else {
      std::vector<std::string> argv = plan->argv;
      argv[0] = endpoint.bin;
      absl::StatusOr<CaptureResult> run = RunAndCapture(argv, host.envp, 120000);
      const int code = run.ok() ? run->exit_code : -1;
      // A client killed at the timeout, or one that failed, may leave the
      // container behind (--rm needs the client): remove it by name.
      if (code != 0) {
        ForceRemoveContainer(endpoint.bin, EditEnvironment(host.envp, {}, kInterposerVars),
                             endpoint.socket,
                             facts.container_name);
      }
      deep = {{"ran", true}, {"exit_code", code}};
      if (code != 0) problems.push_back(absl::StrCat("a no-op container exited ", code));
    }
  }

  const absl::string_view preload = GetEnv(host.envp, "LD_PRELOAD");
  const bool interposer = absl::StrContains(preload, "libnp-exec-preload");
  const std::string installed = InstalledInterposer(host);
  nlohmann::json audit = nullptr;
  if (!settings->project_root.empty()) {
    const std::string path = AuditLogPath(settings->project_root);
    struct stat st;
    audit = {{"path", path},
             {"exists", stat(path.c_str(), &st) == 0},
             {"last_refusal", LastRefusal(path)}};
  }
  const std::optional<std::string> advisory = Advisory(tier, settings->has_milestones);
  if (advisory.has_value()) warnings.push_back(*advisory);
  nlohmann::json shims = ShimsOnPath(host);

  nlohmann::json out = {
      {"tier", TierName(tier)},
      {"effective_from", TierSourceName(settings->resolved.from)},
      {"deliverable", gate.ok() && problems.empty()},
      {"does_not_protect_against", description.does_not_protect_against},
      {"project_root", settings->project_root.empty() ? nlohmann::json(nullptr)
                                                      : nlohmann::json(settings->project_root)},
      {"runtime", ProbeToJson(probe)},
      {"image", image},
      {"deep", deep},
      {"shims_on_path", shims},
      {"interposer",
       {{"active", interposer},
        {"ld_preload", std::string(preload)},
        {"installed", installed.empty() ? nlohmann::json(nullptr) : nlohmann::json(installed)}}},
      {"audit_log", audit},
      {"problems", problems},
      {"warnings", warnings},
      {"ok", problems.empty()},
  };
  if (cl.json) {
    WriteJson(out);
  } else {
    std::string text =
        absl::StrCat("tier: ", TierName(tier), " (from ", TierSourceName(settings->resolved.from),
                     ")\n", "does not protect against:\n");
    for (const std::string& limit : description.does_not_protect_against) {
      absl::StrAppend(&text, "  - ", limit, "\n");
    }
    absl::StrAppend(&text, "runtime: ", RuntimeName(config.runtime), ": ",
                    probe.available
                        ? absl::StrCat("available, engine ", probe.version)
                        : absl::StrCat("unavailable (", probe.reason, ": ", probe.detail, ")"),
                    "\n");
    if (!image.is_null()) {
      absl::StrAppend(&text, "image: ", config.image, " (", image["pinning"].get<std::string>(),
                      ", ",
                      image["present"].is_null()     ? "presence unknown"
                      : image["present"].get<bool>() ? "present"
                                                     : "missing",
                      ")\n");
    }
    absl::StrAppend(&text, "shims on PATH: ", shims.empty() ? "none" : shims.dump(), "\n");
    absl::StrAppend(&text, "interposer: ", interposer ? "active" : "not loaded",
                    installed.empty() ? std::string(" (not installed)")
                                      : absl::StrCat(" (installed: ", installed, ")"),
                    "\n");
    if (!audit.is_null()) {
      absl::StrAppend(
          &text, "audit log: ", audit["path"].get<std::string>(),
          audit["last_refusal"].is_null()
              ? "\n"
              : absl::StrCat(" (last refusal: ", audit["last_refusal"].value("code", "?"), ")\n"));
    }
    for (const std::string& w : warnings) absl::StrAppend(&text, "warning: ", w, "\n");
    for (const std::string& p : problems) absl::StrAppend(&text, "problem: ", p, "\n");
    absl::StrAppend(&text, problems.empty() ? "ok\n" : "the configured tier cannot be delivered\n");
    WriteAll(1, text);
  }
  return problems.empty() ? 0 : 1;
}

}  // namespace np
