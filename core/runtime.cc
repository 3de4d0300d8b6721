#include "core/runtime.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/bwrap_argv.h"
#include "core/container_argv.h"
#include "core/errors.h"

namespace np {
namespace {

absl::StatusOr<std::vector<std::string>> BwrapArgv(const ContainerConfig& config,
                                                   const std::vector<ValidatedMount>& mounts,
                                                   const ContainerSpawn& spawn) {
  return BuildBwrapArgv(config, mounts, spawn, spawn.root_layout);
}

constexpr absl::string_view kEngineLimit =
    "a runtime daemon that is itself compromised, or a user in the docker "
    "group: access to the engine is root on the host";

std::vector<RuntimeTraits>* MakeTable() {
  return new std::vector<RuntimeTraits>{
      {Runtime::kDocker,
       "docker",
       true,
       false,
       false,
       false,
       true,
       false,
       BuildContainerArgv,
       "",
       {kEngineLimit},
       "docker",
       false,
       true,
       // A read-only mount of /run/docker hands over the endpoint of docker's
       // own containerd (/run/docker/containerd/containerd.sock); the state
       // directories hold every container's root filesystem and config;
       // /etc/docker holds dockerd's identity key and TLS material.
       {"/var/run/docker.sock", "/run/docker.sock", "/run/docker", "/var/lib/docker",
        "/run/containerd", "/var/lib/containerd", "/etc/docker"}},
      {Runtime::kPodman,
       "podman",
       true,
       false,
       false,
       false,
       true,
       true,
       BuildContainerArgv,
       "",
       {kEngineLimit},
       "podman",
       false,
       true,
       {"/run/podman", "/run/containers", "/var/lib/containers"}},
      {Runtime::kBwrap,
       "bwrap",
       false,
       true,
       true,
       true,
       false,
       false,
       BwrapArgv,
       " Runtime bwrap: no daemon and no image; the host's /usr and a few /etc "
       "files are visible read-only; no memory or cpu limits.",
       {"reads of the host's system directories (/usr and the /etc files "
        "programs need): they are bound read-only into the sandbox",
        "resource exhaustion: bubblewrap sets no memory or cpu limits"},
       "bubblewrap",
       true,
       true,
       {}},
  };
}

}  // namespace

const std::vector<RuntimeTraits>& AllRuntimes() {
  static const std::vector<RuntimeTraits>* table = MakeTable();
  return *table;
}

const RuntimeTraits& TraitsOf(Runtime runtime) {
  for (const RuntimeTraits& row : AllRuntimes()) {
    if (row.runtime == runtime) return row;
  }
  return AllRuntimes().front();
}

absl::string_view RuntimeName(Runtime runtime) { return TraitsOf(runtime).name; }

absl::StatusOr<Runtime> ParseRuntime(absl::string_view name) {
  std::vector<std::string> names;
  for (const RuntimeTraits& row : AllRuntimes()) {
    if (row.name == name) return row.runtime;
    names.emplace_back(row.name);
  }
  return MakeError(absl::StatusCode::kInvalidArgument, "isolation-invalid-runtime",
                   absl::StrCat("unknown container runtime \"", name, "\"; expected ",
                                absl::StrJoin(names, ", ")),
                   {{"runtime", name}, {"expected", names}});
}

absl::string_view EngineReachName(EngineReach reach) {
  switch (reach) {
    case EngineReach::kThisHost:
      return "this-host";
    case EngineReach::kSsh:
      return "ssh";
    case EngineReach::kTls:
      return "tls";
    case EngineReach::kInsecureTcp:
      return "insecure-tcp";
    case EngineReach::kUnvouched:
      return "unvouched";
  }
  return "unvouched";
}

}  // namespace np
