#include "launcher/runtime/image_program.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/container_argv.h"
#include "core/errors.h"
#include "core/passwd_view.h"
#include "core/paths.h"
#include "core/tar_file.h"
#include "launcher/environment.h"
#include "launcher/exec.h"
#include "launcher/runtime/engine_locality.h"
#include "launcher/runtime/reaper.h"
#include "shim/find_real_program.h"

namespace np {
namespace {

constexpr int kClientTimeoutMs = 15000;
// What docker and podman use when an image sets no PATH.
constexpr char kDefaultImagePath[] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// The image's PATH from its configured environment; the default when unset;
// "" when the image cannot be inspected.
std::string ImagePath(const std::string& bin, const std::string& image, char** envp) {
  absl::StatusOr<CaptureResult> inspect = RunAndCapture(
      {bin, "image", "inspect", "--format", "{{json .Config.Env}}", image}, envp, kClientTimeoutMs);
  if (!inspect.ok() || inspect->timed_out || inspect->exit_code != 0) return "";
  const nlohmann::json env = nlohmann::json::parse(inspect->out, nullptr, false);
  if (env.is_array()) {
    for (const nlohmann::json& entry : env) {
      if (entry.is_string() && absl::StartsWith(entry.get<std::string>(), "PATH=")) {
        return entry.get<std::string>().substr(5);
      }
    }
  }
  return kDefaultImagePath;
}

// Whether any of `candidates` exists in the plan's image; nullopt when it
// cannot be told.
std::optional<bool> AnyInImage(const SpawnPlan& plan, const std::vector<std::string>& candidates,
                               const HostFacts& host, const Endpoint& endpoint) {
  // A copy that went past the cap was there: only its archive is dropped.
  const auto copied = [](const CaptureResult& r) {
    return !r.timed_out && (r.exit_code == 0 || r.truncated);
  };
  std::optional<std::vector<CaptureResult>> results =
      CopyOutOfImage(plan.exec_path, plan.image, absl::StrCat(plan.container_name, "-probe"),
                     candidates, host, endpoint, kDefaultCaptureBytes, copied);
  if (!results.has_value()) return std::nullopt;
  return !results->empty() && copied(results->back());
}

// One account file of /etc's copy-out: its well-formed lines, or nullopt.
std::optional<std::string> AccountBaseOf(const CaptureResult& etc, absl::string_view member,
                                         AccountFile file) {
  if (etc.timed_out || etc.exit_code != 0) return std::nullopt;
  const TarFile tar = FindTarFile(etc.out, member, kMaxImageAccountBytes);
  if (tar.kind != TarFile::Kind::kRegular) return std::nullopt;
  return ImageAccountBase(tar.content, file);
}

}  // namespace

std::optional<std::vector<CaptureResult>> CopyOutOfImage(
    const std::string& bin, const std::string& image, const std::string& name,
    const std::vector<std::string>& paths, const HostFacts& host, const Endpoint& endpoint,
    size_t max_bytes, const std::function<bool(const CaptureResult&)>& enough) {
  std::vector<std::string> env = ClientEnvironment(endpoint, host.envp);
  std::vector<char*> envp = CStrings(env);
  absl::StatusOr<CaptureResult> created = RunAndCapture(
      {bin, "create", "--pull=never", "--network", "none", "--label",
       absl::StrCat(kManagedLabel, "=1"), "--label",
       absl::StrCat(kOwnerLabel, "=", OwnerLabelValue(host.pid, ProcessStartTime(host.pid))),
       "--name", name, image, "/np-exec-probe"},
      envp.data(), kClientTimeoutMs);
  if (!created.ok() || created->timed_out || created->exit_code != 0) return std::nullopt;
  std::vector<CaptureResult> results;
  for (const std::string& path : paths) {
    absl::StatusOr<CaptureResult> copied = RunAndCapture(
        {bin, "cp", absl::StrCat(name, ":", path), "-"}, envp.data(), kClientTimeoutMs, max_bytes);
    results.push_back(copied.ok() ? *std::move(copied) : CaptureResult{});
    if (enough && enough(results.back())) break;
  }
  (void)RunAndCapture({bin, "rm", "-f", name}, envp.data(), kClientTimeoutMs);
  return results;
}

std::optional<ImageAccountBases> CopyImageAccounts(const std::string& bin, const std::string& image,
                                                   const std::string& container_name,
                                                   const HostFacts& host,
                                                   const Endpoint& endpoint) {
  // The directory, not the two files: one copy, and its links stay links
  // (podman's copy of a single file is its link's target, named as that).
  // Members past the cap are not seen (the minimal base).
  constexpr size_t kMaxEtcArchiveBytes = 16 << 20;
  std::optional<std::vector<CaptureResult>> copied =
      CopyOutOfImage(bin, image, absl::StrCat(container_name, "-accounts"), {"/etc"}, host,
                     endpoint, kMaxEtcArchiveBytes);
  if (!copied.has_value() || copied->size() != 1) return std::nullopt;
  ImageAccountBases bases;
  bases.passwd = AccountBaseOf(copied->front(), "etc/passwd", AccountFile::kPasswd);
  bases.group = AccountBaseOf(copied->front(), "etc/group", AccountFile::kGroup);
  return bases;
}

std::vector<std::string> ImageCandidates(const SpawnPlan& plan, const std::string& path_list) {
  std::vector<std::string> out;
  const std::string& program = plan.program;
  if (program.empty() || program.find('\0') != std::string::npos) return out;
  if (program.front() == '/') {
    out.push_back(NormalizePath(program));
  } else if (program.find('/') != std::string::npos) {
    return out;
  } else {
    for (absl::string_view dir : absl::StrSplit(path_list, ':', absl::SkipEmpty())) {
      if (dir.front() == '/') out.push_back(JoinPath(NormalizePath(dir), program));
    }
  }
  for (const std::string& candidate : out) {
    bool shadowed = !plan.project_mount.empty() && IsInside(candidate, plan.project_mount);
    for (const ValidatedMount& mount : plan.mounts) {
      shadowed = shadowed || IsInside(candidate, mount.target);
    }
    if (shadowed) return {};
  }
  return out;
}

absl::Status ExplainExitNotFound(const SpawnPlan& plan, const HostFacts& host,
                                 const Endpoint& endpoint) {
  // On network "allowlist" np-exec's own entry point execs the program and
  // reports a failure itself.
  if (plan.image.empty() || !plan.egress_socket.empty()) return absl::OkStatus();
  std::vector<std::string> env = ClientEnvironment(endpoint, host.envp);
  std::vector<char*> envp = CStrings(env);
  const std::string path_list = ImagePath(plan.exec_path, plan.image, envp.data());
  if (path_list.empty()) return absl::OkStatus();
  const std::vector<std::string> candidates = ImageCandidates(plan, path_list);
  if (candidates.empty()) return absl::OkStatus();
  if (AnyInImage(plan, candidates, host, endpoint) != false) return absl::OkStatus();
  absl::StatusOr<std::string> on_host =
      FindRealProgram(plan.program, host.path, host.cwd, host.self, StatFile);
  const std::string host_part =
      on_host.ok() ? absl::StrCat(" It is on the host at ", *on_host,
                                  "; the container sees only the image, the project and the "
                                  "configured mounts.")
                   : std::string();
  return MakeError(
      absl::StatusCode::kNotFound, "program-not-in-image",
      absl::StrCat("\"", plan.program, "\" is not in image \"", plan.image, "\" (looked in ",
                   absl::StrJoin(candidates, ", "), ").", host_part,
                   " Use an image that has it (isolation.container.image), or mount its directory "
                   "at its own path (isolation.container.mounts) and run it by that absolute "
                   "path"),
      {{"program", plan.program},
       {"image", plan.image},
       {"looked_in", candidates},
       {"host_path", on_host.ok() ? nlohmann::json(*on_host) : nlohmann::json(nullptr)}});
}

}  // namespace np
