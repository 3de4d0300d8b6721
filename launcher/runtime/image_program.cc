#include "launcher/runtime/image_program.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/errors.h"
#include "core/paths.h"
#include "launcher/environment.h"
#include "launcher/exec.h"
#include "launcher/subprocess.h"
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

// Whether any of `candidates` exists in `image`: a container created (never
// started) and the engine's copy-out of each path; nullopt when it cannot be
// told.
std::optional<bool> AnyInImage(const std::string& bin, const SpawnPlan& plan,
                               const std::vector<std::string>& candidates, char** envp) {
  const std::string name = absl::StrCat(plan.container_name, "-probe");
  absl::StatusOr<CaptureResult> created =
      RunAndCapture({bin, "create", "--pull=never", "--network", "none", "--label",
                     "dev.nubos.np-exec=1", "--name", name, plan.image, "/np-exec-probe"},
                    envp, kClientTimeoutMs);
  if (!created.ok() || created->timed_out || created->exit_code != 0) return std::nullopt;
  bool found = false;
  for (const std::string& path : candidates) {
    absl::StatusOr<CaptureResult> copied =
        RunAndCapture({bin, "cp", absl::StrCat(name, ":", path), "-"}, envp, kClientTimeoutMs);
    if (copied.ok() && !copied->timed_out && copied->exit_code == 0) {
      found = true;
      break;
    }
  }
  (void)RunAndCapture({bin, "rm", "-f", name}, envp, kClientTimeoutMs);
  return found;
}

}  // namespace

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

absl::Status ExplainExitNotFound(const SpawnPlan& plan, const HostFacts& host) {
  // On network "allowlist" np-exec's own entry point execs the program and
  // reports a failure itself.
  if (plan.image.empty() || !plan.egress_socket.empty()) return absl::OkStatus();
  std::vector<std::string> env = EditEnvironment(host.envp, {}, kInterposerVars);
  std::vector<char*> envp = CStrings(env);
  const std::string path_list = ImagePath(plan.exec_path, plan.image, envp.data());
  if (path_list.empty()) return absl::OkStatus();
  const std::vector<std::string> candidates = ImageCandidates(plan, path_list);
  if (candidates.empty()) return absl::OkStatus();
  if (AnyInImage(plan.exec_path, plan, candidates, envp.data()) != false) return absl::OkStatus();
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
