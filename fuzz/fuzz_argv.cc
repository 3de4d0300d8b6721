// Fuzzes argv building. Two modes, chosen by the first byte:
//  - pure: a ContainerConfig, ContainerSpawn and mounts derived from the input
//    (project paths with spaces, commas, quotes, colons, newlines...) go
//    straight into BuildContainerArgv (docker, podman) and BuildBwrapArgv;
//  - planned: mounts drawn from a tree of real links and control surfaces go
//    through PlanSpawn, which validates them before building the argv.
// Every argv that comes out is checked (fuzz_invariants.h); every refusal
// must carry a code.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/bwrap_argv.h"
#include "core/container_argv.h"
#include "core/errors.h"
#include "core/plan.h"
#include "fuzz/fuzz_invariants.h"
#include "fuzz/fuzz_tree.h"

namespace {

using np::fuzz::Broken;

void CheckCoded(const absl::Status& status, const char* where) {
  const std::string code = np::ErrorCode(status);
  if (code.empty() || code == "internal-error")
    Broken(std::string("uncoded error in ") + where, {});
}

const std::string& Pick(FuzzedDataProvider& fdp, const std::vector<std::string>& v) {
  return v[fdp.ConsumeIntegralInRange<size_t>(0, v.size() - 1)];
}

std::string Path(FuzzedDataProvider& fdp, const std::string& base) {
  static const char* kOdd[] = {
      "/home/u/proj", "/home/u/my project", "/a,b",           "/a:b", "/q\"x",
      "/a\nb",        "/x,readonly",        "/p,target=/etc", "/",    "/home/u/proj/"};
  switch (fdp.ConsumeIntegralInRange<int>(0, 3)) {
    case 0:
      return kOdd[fdp.ConsumeIntegralInRange<size_t>(0, sizeof(kOdd) / sizeof(kOdd[0]) - 1)];
    case 1:
      return base + "/" + fdp.ConsumeRandomLengthString(24);
    case 2:
      return "/" + fdp.ConsumeRandomLengthString(32);
    default:
      return fdp.ConsumeRandomLengthString(32);
  }
}

np::ContainerConfig Config(FuzzedDataProvider& fdp) {
  np::ContainerConfig config;
  config.runtime =
      fdp.PickValueInArray({np::Runtime::kDocker, np::Runtime::kPodman, np::Runtime::kBwrap});
  if (fdp.ConsumeBool()) config.image = fdp.ConsumeRandomLengthString(40);
  config.network =
      fdp.PickValueInArray({np::Network::kNone, np::Network::kBridge, np::Network::kHost});
  config.user.kind = fdp.PickValueInArray(
      {np::UserSpec::Kind::kCaller, np::UserSpec::Kind::kImage, np::UserSpec::Kind::kExplicit});
  if (config.user.kind == np::UserSpec::Kind::kExplicit) {
    config.user.value = fdp.ConsumeRandomLengthString(16);
  }
  if (fdp.ConsumeBool()) config.memory = fdp.ConsumeRandomLengthString(8);
  if (fdp.ConsumeBool()) config.cpus = fdp.ConsumeRandomLengthString(8);
  if (fdp.ConsumeBool())
    config.workdir = fdp.ConsumeBool() ? "/work" : "/w/" + fdp.ConsumeRandomLengthString(12);
  config.pull_missing = fdp.ConsumeBool();
  return config;
}

std::vector<std::string> EnvNames(FuzzedDataProvider& fdp) {
  std::vector<std::string> names;
  const int n = fdp.ConsumeIntegralInRange<int>(0, 4);
  for (int i = 0; i < n; ++i) {
    names.push_back(fdp.ConsumeBool() ? Pick(fdp, np::fuzz::SentinelNames())
                                      : fdp.ConsumeRandomLengthString(12));
  }
  return names;
}

std::vector<std::string> Program(FuzzedDataProvider& fdp) {
  std::vector<std::string> program;
  const int n = fdp.ConsumeIntegralInRange<int>(0, 3);
  for (int i = 0; i < n; ++i) program.push_back(fdp.ConsumeRandomLengthString(16));
  return program;
}

void Check(const np::ContainerConfig& config, const np::ContainerSpawn& spawn,
           const absl::StatusOr<std::vector<std::string>>& argv, bool bwrap) {
  if (!argv.ok()) {
    CheckCoded(argv.status(), bwrap ? "BuildBwrapArgv" : "BuildContainerArgv");
    return;
  }
  if (bwrap) {
    np::fuzz::CheckBwrapArgv(config, spawn, *argv);
  } else {
    np::fuzz::CheckContainerArgv(config, spawn, *argv);
  }
}

void Pure(FuzzedDataProvider& fdp) {
  np::ContainerConfig config = Config(fdp);
  np::ContainerSpawn spawn;
  spawn.project_root = Path(fdp, "/home/u/proj");
  spawn.cwd = fdp.ConsumeBool() ? spawn.project_root : Path(fdp, spawn.project_root);
  spawn.uid = fdp.ConsumeIntegral<uint32_t>();
  spawn.gid = fdp.ConsumeIntegral<uint32_t>();
  spawn.stdin_tty = fdp.ConsumeBool();
  spawn.stdout_tty = fdp.ConsumeBool();
  spawn.name = "np-exec-" + std::to_string(fdp.ConsumeIntegral<uint16_t>());
  spawn.owner = fdp.ConsumeBool() ? "" : "1:2";
  spawn.env_names = EnvNames(fdp);
  std::vector<np::ValidatedMount> mounts;
  const int n = fdp.ConsumeIntegralInRange<int>(0, 4);
  for (int i = 0; i < n; ++i) {
    np::ValidatedMount mount;
    const bool inside = fdp.ConsumeBool();
    mount.source =
        inside ? spawn.project_root + "/" + fdp.ConsumeRandomLengthString(16) : Path(fdp, "/opt");
    mount.target = "/" + fdp.ConsumeRandomLengthString(16);
    // Validation only ever marks a mount inside the project writable.
    mount.writable = inside && fdp.ConsumeBool();
    mounts.push_back(mount);
  }
  spawn.program = Program(fdp);
  for (np::Runtime runtime : {np::Runtime::kDocker, np::Runtime::kPodman}) {
    config.runtime = runtime;
    Check(config, spawn, np::BuildContainerArgv(config, mounts, spawn), false);
  }
  config.runtime = np::Runtime::kBwrap;
  Check(config, spawn,
        np::BuildBwrapArgv(config, mounts, spawn, {{"/bin", "usr/bin"}, {"/lib64", ""}}), true);
}

void Planned(FuzzedDataProvider& fdp, const std::string& project) {
  np::Settings settings;
  settings.project_root = fdp.ConsumeBool() ? project : np::fuzz::TreePath("plink");
  settings.config.tier = np::Tier::kContainer;
  settings.resolved = {np::Tier::kContainer, np::TierSource::kConfig};
  np::ContainerConfig& config = settings.config.container;
  config = Config(fdp);
  const int n = fdp.ConsumeIntegralInRange<int>(0, 4);
  for (int i = 0; i < n; ++i) {
    np::MountSpec mount;
    mount.source = fdp.ConsumeBool() ? Pick(fdp, np::fuzz::SourcePool()) : Path(fdp, project);
    mount.target = fdp.ConsumeBool() ? "/m" + std::to_string(i) : fdp.ConsumeRandomLengthString(12);
    mount.writable = fdp.ConsumeBool();
    config.mounts.push_back(mount);
  }
  config.env = EnvNames(fdp);
  np::ProbeResult probe;
  probe.runtime = config.runtime;
  probe.available = true;
  probe.bin = "/usr/bin/runtime";
  np::SpawnFacts facts;
  facts.cwd = fdp.ConsumeBool() ? project : project + "/src";
  facts.home = np::fuzz::TreePath("home");
  facts.uid = 1000;
  facts.gid = 1000;
  facts.container_name = "np-exec-fuzz";
  // The injected lookup: a program is found in /usr/bin unless its name is odd.
  facts.find = [](absl::string_view name, absl::string_view, bool) -> absl::StatusOr<std::string> {
    if (name.empty() || name.find('/') != absl::string_view::npos) {
      return np::MakeError(absl::StatusCode::kNotFound, "program-not-found", "not found");
    }
    return absl::StrCat("/usr/bin/", name);
  };
  facts.owner = "1:2";
  std::vector<std::string> program = Program(fdp);
  std::vector<std::string> extra_env = EnvNames(fdp);
  absl::StatusOr<np::SpawnPlan> plan = np::PlanSpawn(settings, &probe, facts, program, extra_env);
  if (!plan.ok()) {
    CheckCoded(plan.status(), "PlanSpawn");
    return;
  }
  if (!plan->wrapped) Broken("container tier not wrapped", plan->argv);
  for (const np::ValidatedMount& mount : plan->mounts) {
    if (np::fuzz::TouchesControlSurface(mount.source)) {
      Broken("forbidden source mounted: " + mount.source, plan->argv);
    }
    if (mount.writable && !np::fuzz::ResolvesInside(mount.source, project)) {
      Broken("writable mount outside the project: " + mount.source, plan->argv);
    }
  }
  np::ContainerSpawn spawn;
  spawn.project_root = project;
  spawn.cwd = facts.cwd;
  spawn.program = program;
  Check(config, spawn, plan->argv, config.runtime == np::Runtime::kBwrap);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string project = [] {
    np::fuzz::SetSentinels();
    return np::fuzz::MakeTree();
  }();
  FuzzedDataProvider fdp(data, size);
  if (fdp.ConsumeBool()) {
    Pure(fdp);
  } else {
    Planned(fdp, project);
  }
  return 0;
}
