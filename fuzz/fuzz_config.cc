// Fuzzes config loading: ParseConfigText, then ParseProjectConfig and
// ParseOperatorTier on what parsed, then builds the docker, podman and bwrap
// argv from any config that validated and checks their invariants.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/bwrap_argv.h"
#include "core/config.h"
#include "core/config_file.h"
#include "core/config_json.h"
#include "core/container_argv.h"
#include "core/errors.h"
#include "core/mounts.h"
#include "fuzz/fuzz_invariants.h"
#include "fuzz/fuzz_tree.h"

namespace {

using np::fuzz::Broken;

void CheckCoded(const absl::Status& status, const char* where) {
  const std::string code = np::ErrorCode(status);
  if (code.empty() || code == "internal-error")
    Broken(std::string("uncoded error in ") + where, {});
}

const np::MountPolicy& Policy() {
  static const np::MountPolicy* policy = [] {
    np::fuzz::SetSentinels();
    absl::StatusOr<np::MountPolicy> p = np::MakeMountPolicy(np::fuzz::MakeTree(), {});
    if (!p.ok()) abort();
    return new np::MountPolicy(*p);
  }();
  return *policy;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const np::MountPolicy& policy = Policy();
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<nlohmann::json> json = np::ParseConfigText(text, "config.json");
  if (!json.ok()) {
    CheckCoded(json.status(), "ParseConfigText");
    return 0;
  }
  if (!json->is_object()) Broken("ParseConfigText returned a non-object", {});
  absl::StatusOr<std::optional<np::Tier>> operator_tier = np::ParseOperatorTier(*json);
  if (!operator_tier.ok()) CheckCoded(operator_tier.status(), "ParseOperatorTier");
  absl::StatusOr<np::ProjectConfig> config = np::ParseProjectConfig(*json);
  if (!config.ok()) {
    CheckCoded(config.status(), "ParseProjectConfig");
    return 0;
  }

  // What validation promises about a config it accepted.
  const np::ContainerConfig& c = config->container;
  if (c.image.empty() || c.image[0] == '-') Broken("accepted image " + c.image, {});
  for (const std::string& name : c.env) {
    if (!np::ValidateEnvName(name).ok()) Broken("accepted env name " + name, {});
  }
  if (c.workdir.has_value() &&
      (c.workdir->empty() || (*c.workdir)[0] != '/' || *c.workdir == "/")) {
    Broken("accepted workdir " + *c.workdir, {});
  }
  (void)np::ContainerConfigToJson(c).dump();  // `status --json` must not throw.

  // Build every runtime's argv from it, as PlanSpawn would.
  const std::string& project = policy.project_real;
  absl::StatusOr<std::vector<np::ValidatedMount>> mounts =
      np::ValidateMounts(c.mounts, policy, {project, "/tmp", "/home/np-exec"});
  if (!mounts.ok()) {
    CheckCoded(mounts.status(), "ValidateMounts");
    return 0;
  }
  for (const np::ValidatedMount& mount : *mounts) {
    if (np::fuzz::TouchesControlSurface(mount.source))
      Broken("forbidden source " + mount.source, {});
    if (mount.writable && !np::fuzz::ResolvesInside(mount.source, project)) {
      Broken("writable mount outside the project " + mount.source, {});
    }
  }
  np::ContainerSpawn spawn;
  spawn.project_root = project;
  spawn.cwd = project + "/src";
  spawn.uid = 1000;
  spawn.gid = 1000;
  spawn.name = "np-exec-fuzz";
  spawn.owner = "1:2";
  spawn.env_names = c.env;
  for (const std::string& name : np::fuzz::SentinelNames()) spawn.env_names.push_back(name);
  spawn.program = {"node", "agent.js"};
  for (np::Runtime runtime : {np::Runtime::kDocker, np::Runtime::kPodman, np::Runtime::kBwrap}) {
    np::ContainerConfig with_runtime = c;
    with_runtime.runtime = runtime;
    absl::StatusOr<std::vector<std::string>> argv =
        runtime == np::Runtime::kBwrap
            ? np::BuildBwrapArgv(with_runtime, *mounts, spawn, {{"/bin", "usr/bin"}})
            : np::BuildContainerArgv(with_runtime, *mounts, spawn);
    if (!argv.ok()) {
      CheckCoded(argv.status(), "argv");
      continue;
    }
    if (runtime == np::Runtime::kBwrap) {
      np::fuzz::CheckBwrapArgv(with_runtime, spawn, *argv);
    } else {
      np::fuzz::CheckContainerArgv(with_runtime, spawn, *argv);
    }
  }
  return 0;
}
