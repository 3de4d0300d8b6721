// The container runtimes as data: one row per runtime.
//
// Code that uses a runtime never branches on which one it is (conventions
// 13): it reads the runtime's traits here, and the launcher asks the
// runtime's driver (launcher/runtime/). Adding a runtime is an enum value and
// a row here, an argv builder, a driver and a row in the launcher's driver
// table (ARCHITECTURE.md lists the files). Pure.
#ifndef NP_EXEC_CORE_RUNTIME_H_
#define NP_EXEC_CORE_RUNTIME_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace np {

// Which program the container tier shells out to.
enum class Runtime { kDocker, kPodman, kBwrap };

// The runtime of a config that names none (design.md).
inline constexpr Runtime kDefaultRuntime = Runtime::kDocker;

struct ContainerConfig;
struct ValidatedMount;
struct ContainerSpawn;

// Builds a runtime's whole argument vector; element 0 is the runtime's name.
using ArgvBuilder = absl::StatusOr<std::vector<std::string>> (*)(
    const ContainerConfig& config, const std::vector<ValidatedMount>& mounts,
    const ContainerSpawn& spawn);

struct RuntimeTraits {
  Runtime runtime;
  absl::string_view name;  // As in the config, the audit log and on PATH.
  // Runs an image (docker, podman) rather than the host's own /usr (bwrap).
  bool uses_image;
  // The program is looked up on the host, through the sandbox's PATH, before
  // the runtime starts: the sandbox shows the host's files at their paths.
  bool program_from_host;
  // Weaker than the default runtime (for trust: bwrap shows the host's /usr).
  bool weaker_than_default;
  // The runtime hands its own environment to the sandbox (bubblewrap), so
  // np-exec builds that environment by name instead of handing the caller's.
  bool sandbox_env_from_runtime;
  // A daemon-backed engine whose containers can outlive their client, so
  // they are named, labelled and reaped.
  bool named_containers;
  // Keeps a container's environment values in its state database after the
  // container is gone (podman), so forwarded values go in as secrets
  // (launcher/runtime/podman_secrets.h).
  bool forwards_as_secrets;
  ArgvBuilder build_argv;
  // Added to the container tier's summary and to what it does not protect against.
  absl::string_view summary_note;
  std::vector<absl::string_view> limits;
  // How messages name it to a person ("bubblewrap" for bwrap).
  absl::string_view display_name;
  // Binds the sources np-exec opened by descriptor (bubblewrap's --bind-fd),
  // so pins are kept open for it; otherwise np-exec's entry point inside
  // compares what the runtime mounted with what was opened.
  bool binds_by_descriptor;
  // Mounts paths of this host's file system: a bind source names the same
  // file here and where the sandbox runs. A remote engine would not.
  bool shares_host_filesystem;
  // The engine's endpoints and state on the host at their default places,
  // never a mount source for any spawn (mounts.h).
  std::vector<absl::string_view> host_control_paths;
};

// Where a runtime's client reaches its engine (launcher/runtime/
// engine_locality.h decides, core/plan.h's CheckEngineLocality judges).
enum class EngineReach {
  kThisHost,     // This host's engine: a unix:// path or a loopback port.
  kSsh,          // ssh://[user@]host[:port]: another host, over ssh.
  kTls,          // tcp:// to another host with the client verifying TLS.
  kInsecureTcp,  // tcp:// to another host without verified TLS.
  kUnvouched,    // Anything np-exec cannot vouch for (a context it cannot read, ...).
};

// "this-host", "ssh", "tls", "insecure-tcp", "unvouched".
absl::string_view EngineReachName(EngineReach reach);

// Every runtime, in the order they are listed to a person.
const std::vector<RuntimeTraits>& AllRuntimes();

// The row of one runtime.
const RuntimeTraits& TraitsOf(Runtime runtime);

absl::string_view RuntimeName(Runtime runtime);

// Parses a runtime name; anything else is `isolation-invalid-runtime`.
absl::StatusOr<Runtime> ParseRuntime(absl::string_view name);

}  // namespace np

#endif  // NP_EXEC_CORE_RUNTIME_H_
