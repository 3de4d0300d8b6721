// The hardened `docker run` / `podman run` argument vector.
//
// Built from typed inputs as a vector, never a shell string. Hardening is
// spelled out rather than left to daemon defaults, which change between
// versions (ADR-0029): no network, no capabilities, no new privileges, a
// read-only root with a tmpfs /tmp, the project read-write and nothing else
// writable, an init process so signals reach the program. Environment
// variables are forwarded by name only. Pure.
#ifndef NP_EXEC_CORE_CONTAINER_ARGV_H_
#define NP_EXEC_CORE_CONTAINER_ARGV_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/config.h"
#include "core/mount_pins.h"
#include "core/mounts.h"
#include "core/protected_paths.h"

namespace np {

// Where the container's writable, throw-away HOME is mounted.
inline constexpr absl::string_view kContainerHome = "/home/np-exec";
// Label keys that identify the owning np-exec, so leftovers can be reaped.
inline constexpr absl::string_view kOwnerLabel = "dev.nubos.np-exec.owner";
inline constexpr absl::string_view kManagedLabel = "dev.nubos.np-exec";

// One top-level entry of the host root that programs expect (/bin, /lib, ...):
// a symlink into /usr on a merged-/usr system, or a directory to bind.
// bubblewrap only; read by the launcher (ReadHostRootLayout) and handed in.
struct RootEntry {
  std::string path;         // "/bin"
  std::string link_target;  // "usr/bin" when a symlink; empty for a directory.
};

// Per-spawn facts, read by the launcher and handed in.
// A forwarded variable whose value goes in as the runtime's secret of type
// env (RuntimeTraits::forwards_as_secrets: podman keeps `-e` values in its
// state database): `--secret SECRET,type=env,target=NAME` in the argv in place
// of `-e NAME`; the launcher's driver creates SECRET from NAME's value just
// before the run and removes it after (launcher/runtime/podman_secrets.h).
struct EnvSecret {
  std::string secret;
  std::string name;
};

// The secret that carries the i-th forwarded variable that is set, for the
// container `container`.
std::string EnvSecretName(absl::string_view container, size_t i);

struct ContainerSpawn {
  std::string project_root;  // Real path on the host.
  std::string cwd;           // Real path on the host, inside the project.
  uint32_t uid = 0;
  uint32_t gid = 0;
  bool stdin_tty = false;
  bool stdout_tty = false;
  std::string name;   // Unique container name.
  std::string owner;  // "<pid>:<start time>" of the owning np-exec; "" for none.
  // Podman only: the --init binary. Podman's default, catatonit, exits 1 when
  // the program is not found; tini (the init docker uses) exits 127 and 126
  // as the run path promises. Empty: the runtime's default.
  std::string init_path;
  std::vector<std::string> env_names;  // Validated; config's and --env's.
  // Those of env_names forwarded as the runtime's secrets (EnvSecret).
  std::vector<EnvSecret> env_secrets;
  std::vector<std::string> program;    // The program and its arguments.
  std::vector<RootEntry> root_layout;  // bubblewrap: the host's /bin, /lib*, /sbin.
  // bubblewrap: the host path of a prepared copy of SandboxEtcFiles bound
  // read-only at /etc in one bind (launcher/runtime/bwrap_etc_view.h); empty:
  // each file is bound by itself.
  std::string etc_view;
  // Bound after the project mount, each onto itself below the project target
  // (see protected_paths.h). Placeholders must exist when the argv runs.
  std::vector<ProtectedBind> protected_binds;
  // A linked worktree's git directories (git_mounts.h), each mounted writable
  // at its own path, before the protected binds whose `root` it is.
  std::vector<std::string> git_roots;
  // network "allowlist" only (core/egress_entry.h): the host paths of the
  // egress proxy's unix-domain endpoint and of np-exec's own binary, both bind-mounted in.
  std::string egress_socket;
  std::string self_binary;
  // network "allowlist" with credentials (core/credentials.h): the host
  // paths of the session CA's certificate and of the trust bundle, bound
  // read-only at kCredentialCaTarget and kCredentialBundleTarget, and the
  // variables set inside (CredentialSandboxEnvironment: placeholders, never
  // a key); all empty without credentials.
  std::string credential_ca;
  std::string credential_bundle;
  std::vector<std::string> credential_env;
  // A persistent home (isolation.container.home "persistent"): its directory
  // on the host, bound read-write at kContainerHome in place of the tmpfs.
  std::string home_source;
  // The caller's account inside (core/passwd_view.h): host paths of the two
  // files bound read-only at /etc/passwd and /etc/group; empty: none.
  std::string passwd_file;
  std::string group_file;
  // The caller's git identity (core/git_identity.h): the host path of the
  // file bound read-only at kGitConfigTarget and named by kGitConfigVar;
  // empty: none.
  std::string gitconfig_file;
  // Pins every bind source after the checks (mount_pins.h); empty: sources
  // go by path alone (unit tests).
  PinSourceFn pin;
  // An engine on another host: the entry point proves the project and np-exec's
  // own binary there (mount_pins.h RemoteCheck); every pin must then lie on
  // the project's file system. nullopt: the engine is this host's.
  std::optional<RemoteCheck> remote_check;
  // The placeholders of `protected_binds` exist (SpawnFacts::make_placeholders),
  // so they are pinned too; false: they are bound by path.
  bool placeholders_made = false;
  // bubblewrap: PATH inside when it is not kSandboxPath (core/plan.h's
  // SandboxPathFor), set with --setenv; empty: kSandboxPath.
  std::string sandbox_path;
  // isolation.container.warm (core/warm.h): the host directory bound at
  // kWarmTarget; non-empty: the sandbox runs np-exec's keeper as its PID 1
  // instead of the program, which it is handed per spawn.
  std::string warm_dir;
};

// The project's mount target: `workdir` when configured, else its host path.
std::string ProjectTarget(const ContainerConfig& config, const ContainerSpawn& spawn);

// The working directory inside the container: `cwd` mapped below the project
// target. Error `isolation-cwd-outside-project` when cwd is not in the project,
// `invalid-path` when either path is relative, too long or holds a NUL byte.
absl::StatusOr<std::string> MapWorkingDirectory(const ContainerConfig& config,
                                                const ContainerSpawn& spawn);

// The protected binds as (host source, target inside, writable), validated:
// the project's, then each git root followed by the binds inside it.
// Code `isolation-protected-path-unsafe`.
struct ProtectedMount {
  std::string source;
  std::string target;
  bool writable = false;
  // Made by the launcher only after the plan (ProtectedBind::placeholder), so
  // it is bound by path, never pinned (mount_pins.h).
  bool placeholder = false;
};
absl::StatusOr<std::vector<ProtectedMount>> ProtectedMounts(const ContainerConfig& config,
                                                            const ContainerSpawn& spawn);

// What both argv builders check and derive before their first argument:
// the variable names (code `isolation-bad-env-name`), the working directory
// inside (MapWorkingDirectory) and the protected mounts (ProtectedMounts).
struct SandboxInputs {
  std::string workdir;
  std::vector<ProtectedMount> protected_mounts;
};
absl::StatusOr<SandboxInputs> CheckSandboxInputs(const ContainerConfig& config,
                                                 const ContainerSpawn& spawn);
// A program to run was given. Code `isolation-wrap-no-command`.
absl::Status CheckProgramGiven(const ContainerSpawn& spawn);

// One `--mount` value. Docker reads it as a CSV record, so a field holding a
// comma or quote is quoted; podman splits on commas, so there a comma is
// refused. A newline or NUL is refused for both. Code: `code`.
absl::StatusOr<std::string> FormatBindMount(Runtime runtime, absl::string_view source,
                                            absl::string_view target, bool writable,
                                            absl::string_view code);

// The full argument vector; element 0 is the runtime's name ("docker" or
// "podman"), which the launcher resolves to a binary. Codes:
// `isolation-no-image`, `isolation-bad-env-name`, `isolation-wrap-no-command`,
// `isolation-cwd-outside-project`, `isolation-project-path-unsupported`,
// `isolation-protected-path-unsafe`.
// `isolation-allowlist-needs-np-exec` (network "allowlist" without the
// proxy's endpoint or np-exec's binary).
// network "allowlist" without what it needs to reach the proxy: the spawn
// has no proxy (a printed plan, which nothing would serve). Shared by the
// argv builders and the planner.
absl::Status AllowlistNeedsNpExec();
// np-exec's own binary is needed inside (the entry point) and its path is not
// known. Code `isolation-mount-bad-source`.
absl::Status SelfBinaryMissing();

absl::StatusOr<std::vector<std::string>> BuildContainerArgv(
    const ContainerConfig& config, const std::vector<ValidatedMount>& mounts,
    const ContainerSpawn& spawn);

}  // namespace np

#endif  // NP_EXEC_CORE_CONTAINER_ARGV_H_
