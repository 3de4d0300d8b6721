#include "core/plan.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/bwrap_argv.h"
#include "core/container_user.h"
#include "core/credentials.h"
#include "core/egress_entry.h"
#include "core/errors.h"
#include "core/git_identity.h"
#include "core/git_mounts.h"
#include "core/paths.h"

namespace np {
namespace {

// The config's names first, then --env's, each once.
std::vector<std::string> MergeEnvNames(const std::vector<std::string>& configured,
                                       const std::vector<std::string>& requested) {
  std::vector<std::string> names = configured;
  for (const std::string& name : requested) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

// NP_EXEC_PRELOAD_NAMES for the program's descendants: what the interposer
// wraps now (default node) plus the project's isolation.interpose names.
std::string InterposeNames(absl::string_view current, const std::vector<std::string>& extra) {
  std::vector<std::string> names =
      absl::StrSplit(current.empty() ? absl::string_view("node") : current, ',', absl::SkipEmpty());
  for (const std::string& name : extra) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return absl::StrCat(kPreloadNamesVar, "=", absl::StrJoin(names, ","));
}

absl::StatusOr<std::string> Find(const SpawnFacts& facts, absl::string_view name,
                                 absl::string_view path_list, bool skip_self) {
  if (!facts.find) {
    return MakeError(absl::StatusCode::kInternal, "internal-error",
                     "PlanSpawn needs a program lookup");
  }
  return facts.find(name, path_list, skip_self);
}

absl::Status NoProgram() {
  return MakeError(absl::StatusCode::kInvalidArgument, "isolation-wrap-no-command",
                   "no program to run: give one after --");
}

// Direct and worktree: the program itself, found on the caller's PATH,
// exec'd in place with the caller's environment and np-exec's markers.
absl::Status PlanInPlace(const Settings& settings, const SpawnFacts& facts,
                         const std::vector<std::string>& program, SpawnPlan& plan) {
  absl::StatusOr<std::string> found = Find(facts, program.front(), facts.path, true);
  if (found.ok()) {
    plan.exec_path = *std::move(found);
  } else if (facts.print_only && !HasErrorCode(found.status(), "internal-error")) {
    plan.exec_path = program.front();
  } else {
    return found.status();
  }
  plan.argv = program;
  plan.env.inherit = true;
  plan.env.forward = plan.env_names;
  plan.env.set = {absl::StrCat(kDepthVar, "=", facts.depth + 1),
                  absl::StrCat(kExecPidVar, "=", facts.pid),
                  absl::StrCat(kExecTargetVar, "=", plan.exec_path)};
  if (!settings.config.interpose.empty()) {
    plan.env.set.push_back(InterposeNames(facts.preload_names, settings.config.interpose));
  }
  return absl::OkStatus();
}

// The fix for a program the host has at `host_path` (its real file at
// `real_path`, "" when it cannot be resolved) that the sandbox lacks.
absl::Status NotInSandbox(Runtime runtime, absl::string_view name, absl::string_view host_path,
                          absl::string_view real_path) {
  const std::vector<std::string> dirs = FixMounts(host_path, real_path);
  nlohmann::json mounts = nlohmann::json::array();
  for (const std::string& dir : dirs) mounts.push_back({{"source", dir}, {"target", dir}});
  const bool elsewhere = !real_path.empty() && real_path != host_path;
  return MakeError(
      absl::StatusCode::kNotFound, "program-not-in-sandbox",
      absl::StrCat("\"", name, "\" was found on the host at ", host_path,
                   elsewhere ? absl::StrCat(" (the file ", real_path, ")") : "",
                   " but is not visible in the ", TraitsOf(runtime).display_name,
                   " sandbox, which shows /usr, the project "
                   "and the configured mounts at their own paths; the program did not run. Mount "
                   "it at its own path (read-only): isolation.container.mounts ",
                   mounts.dump(), ", or install the program under /usr"),
      {{"program", name}, {"path", host_path}, {"fix_mount", dirs.front()}, {"fix_mounts", dirs}});
}

// bubblewrap shows the host's files at their own paths, so the host answers whether the program is
// there: bubblewrap would report a missing program as its own exit status 1, so it is refused here
// with 127 instead. The lookup uses the sandbox's PATH (`sandbox_path`, SandboxPathFor) and, as a
// shim's lookup does, skips np-exec's copies (its ELF note). On kSandboxPath the program runs by
// name (bubblewrap's own search inside finds the same file); on a PATH a mount extended, by the
// path found, so that what runs is what was checked even where a mounted directory holds an np-exec
// shim of that name before it. A name the sandbox's PATH lacks but the caller's PATH has (a user's
// `npm --prefix` install whose directory no mount shows) is `program-not-in-sandbox` with the fix;
// when the sandbox shows it there anyway (a mount at another path that holds it, or a link into
// one), it runs by that absolute path. Returns the program as the sandbox runs it.
// docker and podman run the image's node, which sees the project and the
// mounts, not the host: a host script outside them (a host tool written in
// node, such as /usr/bin/npm, which its `#!/usr/bin/env node` hands to a node
// shim) would end in node's own "Cannot find module". Refused before
// anything runs, with what to do instead. Only an absolute first argument
// naming a file the host has: a path that exists only in the image is left
// to the image.
absl::Status CheckScriptInImage(const std::vector<std::string>& program, const SpawnPlan& plan,
                                const std::string& image) {
  if (program.size() < 2) return absl::OkStatus();
  const std::string name = BaseName(program.front());
  const std::string& script = program[1];
  if ((name != "node" && name != "nodejs") || !absl::StartsWith(script, "/")) {
    return absl::OkStatus();
  }
  struct stat st;
  if (stat(script.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) return absl::OkStatus();
  const std::string path = NormalizePath(script);
  bool visible = IsInside(path, plan.project_real) || IsInside(path, plan.project_mount);
  for (const ValidatedMount& mount : plan.mounts) visible = visible || IsInside(path, mount.target);
  if (visible) return absl::OkStatus();
  return MakeError(
      absl::StatusCode::kNotFound, "script-not-in-image",
      absl::StrCat(name, " was asked to run ", path,
                   ", a host file outside the project and the mounts, which the image ", image,
                   " does not have (a host tool written in node, such as npm, npx or eslint, run "
                   "through a node shim); the program did not run. Run the host tool outside the "
                   "tier (take the node shim off PATH, or np-exec shims remove DIR node), or the "
                   "image's own copy by name (np-exec -- npm ...)"),
      {{"program", name}, {"script", path}, {"image", image}});
}

absl::StatusOr<std::string> ProgramInSandbox(const SpawnFacts& facts, const SpawnPlan& plan,
                                             const std::string& name,
                                             absl::string_view sandbox_path) {
  absl::StatusOr<std::string> found = Find(facts, name, sandbox_path, false);
  const bool on_caller_path = !found.ok() && HasErrorCode(found.status(), "program-not-found") &&
                              name.find('/') == std::string::npos;
  if (on_caller_path) {
    found = Find(facts, name, facts.path, true);
    if (!found.ok() || !absl::StartsWith(*found, "/")) return found.status();
  }
  if (!found.ok()) return found.status();
  std::string inside =
      absl::StartsWith(*found, "/") ? *found : NormalizePath(JoinPath(facts.cwd, *found));
  if (HasDotDot(inside)) {
    // ".." is resolved by the kernel after links: take the directory's real path.
    const size_t slash = inside.rfind('/');
    char dir[PATH_MAX];
    if (realpath(slash == 0 ? "/" : inside.substr(0, slash).c_str(), dir) != nullptr) {
      inside = JoinPath(dir, inside.substr(slash + 1));
    }
  }
  absl::StatusOr<std::string> real = ResolveRealPath(inside, "program-not-found");
  if (real.ok() &&
      VisibleInSandbox(inside, *real, plan.project_real, plan.mounts, facts.root_layout)) {
    return on_caller_path || sandbox_path != kSandboxPath ? inside : name;
  }
  return NotInSandbox(plan.runtime, name, inside,
                      real.ok() ? absl::string_view(*real) : absl::string_view());
}

// np-exec's own binary (network "allowlist") or the persistent home must not
// lie where the sandboxed program can write (the project, a writable mount):
// another sandbox of the project could put a link there before the runtime
// resolves it and have any host file mounted in.
absl::Status CheckOutsideWritable(const std::string& path, absl::string_view what,
                                  const MountPolicy& policy, const std::vector<MountSpec>& mounts) {
  std::vector<std::string> writable = {policy.project_real};
  for (const MountSpec& mount : mounts) {
    if (!mount.writable) continue;
    absl::StatusOr<std::string> real = ResolveRealPath(mount.source, "isolation-mount-bad-source");
    writable.push_back(real.ok() ? *real : mount.source);
  }
  for (const std::string& root : writable) {
    if (!IsInside(path, root)) continue;
    return MakeError(absl::StatusCode::kFailedPrecondition, "isolation-mount-bad-source",
                     absl::StrCat(what, " ", path, " lies in ", root,
                                  ", which the sandboxed program can write; move it outside the "
                                  "project and its writable mounts"),
                     {{"path", path}, {"writable", root}});
  }
  return absl::OkStatus();
}

// One container spawn being planned: the inputs, what the checks derived, and
// the plan so far. Each step below reads and extends it.
struct ContainerPlanning {
  ContainerPlanning(const Settings& s, const SpawnFacts& f, const std::vector<std::string>& p,
                    SpawnPlan& out)
      : settings(s), facts(f), program(p), plan(out), container(s.config.container) {}
  const Settings& settings;
  const SpawnFacts& facts;
  const std::vector<std::string>& program;
  SpawnPlan& plan;
  // The project's container settings, with `wrap --workdir` applied.
  ContainerConfig container;
  MountPolicy policy;
  bool egress = false;
  bool account_view = false;
  bool git_identity = false;
  ContainerSpawn spawn;
  GitMounts git;
  // The program's lookup, reported only after the argv's own refusals
  // (ReportProgramLookup).
  absl::Status program_found;
};

absl::Status FindProjectMount(ContainerPlanning& p) {
  if (p.facts.mount_point.has_value()) {
    // `wrap --workdir`: the project's mount point inside, as the reference
    // reads it; a value that cannot be planned is an error, never a fallback.
    absl::StatusOr<std::string> mount_point = ParseMountPoint(*p.facts.mount_point, "--workdir");
    if (!mount_point.ok()) return mount_point.status();
    p.container.workdir = *std::move(mount_point);
  }
  if (!p.settings.project_root.empty()) return absl::OkStatus();
  return MakeError(absl::StatusCode::kFailedPrecondition, "not-in-project",
                   absl::StrCat("the container tier needs a project to mount, and ", p.facts.cwd,
                                " is not inside one (no .nubos-pilot/ directory above it)"),
                   {{"startedFrom", p.facts.cwd}});
}

// A user the project chose is resolved in the image before anything else is
// planned: root, however spelled, is the operator's alone.
absl::Status ResolveProjectUser(ContainerPlanning& p) {
  absl::StatusOr<std::optional<ContainerUserIds>> user = CheckProjectContainerUser(
      p.container, p.facts.image_user.has_value() ? &*p.facts.image_user : nullptr);
  if (!user.ok()) return user.status();
  p.plan.project_user = *user;
  absl::StatusOr<MountPolicy> policy =
      MakeMountPolicy(p.settings.project_root, p.facts.extra_forbidden);
  if (!policy.ok()) return policy.status();
  p.policy = *std::move(policy);
  return ValidateProjectMount(p.policy, p.facts.home);
}

// np-exec's own files are bound by path, so none may lie where the sandboxed
// program can write (CheckOutsideWritable).
absl::Status CheckOwnFilesOutsideWritable(ContainerPlanning& p) {
  const SpawnFacts& facts = p.facts;
  const ContainerConfig& container = p.container;
  p.egress = container.network == Network::kAllowlist;
  if (p.egress && (facts.print_only || facts.egress_socket.empty() || facts.self_path.empty())) {
    return AllowlistNeedsNpExec();
  }
  if (p.egress && !container.credentials.empty()) {
    // The key stays on the host: never forwarded by name as well.
    absl::Status kept = CheckCredentialsNotForwarded(container.credentials, p.plan.env_names);
    if (!kept.ok()) return kept;
    if (facts.credential_ca.empty() || facts.credential_bundle.empty()) {
      return AllowlistNeedsNpExec();
    }
  }
  // np-exec's own files live in this host's state store, which an engine on
  // another host does not see: there the image's own accounts serve.
  p.account_view = container.user.kind == UserSpec::Kind::kCaller && !facts.passwd_file.empty() &&
                   facts.engine_remote.empty();
  p.git_identity = p.account_view && !facts.gitconfig_file.empty();
  if (container.persistent_home && facts.agent_home.empty()) {
    return MakeError(absl::StatusCode::kFailedPrecondition, "agent-home-invalid",
                     "isolation.container.home is \"persistent\" but np-exec has no operator "
                     "state directory to keep it in (set XDG_STATE_HOME or HOME)");
  }
  struct OwnFile {
    bool bound;
    const std::string& path;
    absl::string_view what;
  };
  for (const OwnFile& file :
       {OwnFile{p.egress, facts.self_path,
                "np-exec's own binary (the sandbox's entry point on network allowlist)"},
        OwnFile{container.persistent_home, facts.agent_home, "the persistent home"},
        OwnFile{p.account_view, facts.passwd_file, "the spawn's passwd view"},
        OwnFile{p.git_identity, facts.gitconfig_file, "the spawn's git identity"}}) {
    if (!file.bound) continue;
    absl::Status outside = CheckOutsideWritable(file.path, file.what, p.policy, container.mounts);
    if (!outside.ok()) return outside;
  }
  return absl::OkStatus();
}

// isolation.container.warm: a plan that can be warm starts a keeper in its
// sandbox instead of the program (core/warm.h); one that cannot says why.
absl::Status DecideWarm(ContainerPlanning& p) {
  if (!p.container.warm_idle_seconds.has_value()) return absl::OkStatus();
  WarmPlan& warm = p.plan.warm;
  warm.cold_reason =
      WarmColdReason(p.facts.engine_remote.empty(), p.egress, p.container.persistent_home,
                     !p.facts.warm_dir.empty() && !p.facts.print_only);
  if (warm.cold_reason.empty() && TraitsOf(p.container.runtime).uses_image) {
    warm.cold_reason = WarmImageColdReason(p.facts.image_volumes);
  }
  if (!warm.cold_reason.empty()) return absl::OkStatus();
  absl::Status absolute = CheckAbsolutePath(p.facts.warm_dir, "isolation-mount-bad-source");
  if (!absolute.ok()) return absolute;
  absl::Status outside = CheckOutsideWritable(p.facts.warm_dir, "the warm sandbox's rendezvous",
                                              p.policy, p.container.mounts);
  if (!outside.ok()) return outside;
  warm.warm = true;
  warm.idle_seconds = *p.container.warm_idle_seconds;
  warm.rendezvous_dir = p.spawn.warm_dir = p.facts.warm_dir;
  return absl::OkStatus();
}

// The forwarded names that are set, as secrets of the named container, where
// the runtime keeps `-e` values (its forwards_as_secrets trait).
std::vector<EnvSecret> PlanEnvSecrets(Runtime runtime, const SpawnFacts& facts,
                                      const std::vector<std::string>& names) {
  std::vector<EnvSecret> secrets;
  if (!TraitsOf(runtime).forwards_as_secrets || facts.container_name.empty() || !facts.env_is_set) {
    return secrets;
  }
  for (const std::string& name : names) {
    if (facts.env_is_set(name)) {
      secrets.push_back({EnvSecretName(facts.container_name, secrets.size()), name});
    }
  }
  return secrets;
}

absl::Status DescribeSpawn(ContainerPlanning& p) {
  const SpawnFacts& facts = p.facts;
  ContainerSpawn& spawn = p.spawn;
  // np-exec's own binary: the entry point on network "allowlist", and on
  // bubblewrap the way past its argument limit (bwrap_argv.h).
  spawn.self_binary = facts.self_path;
  if (p.egress) spawn.egress_socket = p.plan.egress_socket = facts.egress_socket;
  if (p.egress && !p.container.credentials.empty()) {
    spawn.credential_ca = facts.credential_ca;
    spawn.credential_bundle = facts.credential_bundle;
    spawn.credential_env = CredentialSandboxEnvironment(p.container.credentials);
  }
  spawn.project_root = p.policy.project_real;
  spawn.cwd = facts.cwd;
  spawn.uid = facts.uid;
  spawn.gid = facts.gid;
  spawn.stdin_tty = facts.stdin_tty;
  spawn.stdout_tty = facts.stdout_tty;
  spawn.name = facts.container_name;
  spawn.owner = facts.owner;
  spawn.init_path = facts.init_path;
  spawn.env_names = p.plan.env_names;
  // A keeper is handed the values with each spawn: none goes to the runtime.
  spawn.env_secrets = p.plan.env_secrets =
      p.plan.warm.warm ? std::vector<EnvSecret>()
                       : PlanEnvSecrets(p.container.runtime, facts, p.plan.env_names);
  spawn.program = p.program;
  spawn.root_layout = facts.root_layout;
  spawn.etc_view = facts.etc_view;
  spawn.pin = facts.pin;
  if (!facts.engine_remote.empty() && facts.remote_check.has_value()) {
    spawn.remote_check = facts.remote_check;
    p.plan.remote_nonce_path = JoinPath(p.policy.project_real, facts.remote_check->nonce_name);
    p.plan.remote_nonce_fd = facts.remote_check->file_fd;
  }
  if (p.container.persistent_home) spawn.home_source = p.plan.agent_home = facts.agent_home;
  if (p.account_view) {
    spawn.passwd_file = facts.passwd_file;
    spawn.group_file = facts.group_file;
    p.plan.account_dir = facts.passwd_file.substr(0, facts.passwd_file.rfind('/'));
  }
  if (p.git_identity) spawn.gitconfig_file = facts.gitconfig_file;
  p.plan.project_mount = ProjectTarget(p.container, spawn);
  p.plan.project_real = p.policy.project_real;
  return absl::OkStatus();
}

// A linked worktree's git directories, so that git works inside, and the
// configured mounts, none onto a target np-exec mounts itself.
absl::Status PlanMounts(ContainerPlanning& p) {
  SpawnPlan& plan = p.plan;
  absl::StatusOr<GitMounts> git =
      PlanGitMounts(p.policy.project_real, plan.project_mount, p.policy, p.facts.home,
                    {"/tmp", std::string(kContainerHome)}, p.settings.git.get());
  if (!git.ok()) return git.status();
  p.git = *std::move(git);
  std::vector<std::string> reserved = {plan.project_mount, "/tmp", std::string(kContainerHome)};
  if (p.account_view) reserved.insert(reserved.end(), {"/etc/passwd", "/etc/group"});
  if (p.git_identity) reserved.emplace_back(kGitConfigTarget);
  reserved.insert(reserved.end(), p.git.roots.begin(), p.git.roots.end());
  absl::StatusOr<std::vector<ValidatedMount>> mounts =
      ValidateMounts(p.container.mounts, p.policy, reserved);
  if (!mounts.ok()) return mounts.status();
  plan.mounts = *std::move(mounts);
  // bubblewrap runs host programs: the caller's PATH, as far as the sandbox
  // shows it, so a user-level install mounted at its own path is found, and
  // what it finds by name (#!/usr/bin/env node) is the caller's too.
  if (TraitsOf(p.container.runtime).program_from_host) {
    p.spawn.sandbox_path = SandboxPathFor(p.facts.path, plan.mounts);
  }
  return absl::OkStatus();
}

// The protected nodes (the config's, the git directories' own), their
// placeholders made before the argv binds them, and the working directory.
absl::Status PlanProtected(ContainerPlanning& p) {
  SpawnPlan& plan = p.plan;
  absl::StatusOr<std::vector<ProtectedBind>> protected_binds =
      ProtectedBindsForSpawn(p.policy.project_real, p.container.protect, plan.mounts,
                             p.settings.git.get(), p.settings.project.FdFor(p.policy.project_real));
  if (!protected_binds.ok()) return protected_binds.status();
  for (const ValidatedMount& mount : plan.mounts) {
    absl::Status stable = CheckMountSourceStable(mount, p.facts.uid, p.facts.gid);
    if (!stable.ok()) return stable;
  }
  protected_binds->insert(protected_binds->end(), p.git.binds.begin(), p.git.binds.end());
  if (p.facts.make_placeholders) {
    absl::Status made = p.facts.make_placeholders(p.policy.project_real, *protected_binds);
    if (!made.ok()) return made;
    p.spawn.placeholders_made = true;
  }
  p.spawn.protected_binds = plan.protected_binds = *std::move(protected_binds);
  p.spawn.git_roots = plan.git_roots = p.git.roots;
  absl::StatusOr<std::string> workdir = MapWorkingDirectory(p.container, p.spawn);
  if (!workdir.ok()) return workdir.status();
  plan.workdir = *std::move(workdir);
  return absl::OkStatus();
}

// What the sandbox runs: on a runtime that runs host programs, the file the
// host shows it (by the path found through the caller's PATH when that is
// where it is); in an image, refused when it is a host script the image
// lacks. Looked up before the argv is built, so that it is built once, with
// the program it runs.
absl::Status LookUpProgram(ContainerPlanning& p) {
  const SpawnFacts& facts = p.facts;
  if (TraitsOf(p.container.runtime).program_from_host) {
    const std::string& path = p.spawn.sandbox_path;
    absl::StatusOr<std::string> inside = ProgramInSandbox(
        facts, p.plan, p.program.front(), path.empty() ? kSandboxPath : absl::string_view(path));
    if (inside.ok()) p.spawn.program.front() = *std::move(inside);
    p.program_found = inside.status();
  } else {
    p.program_found = CheckScriptInImage(p.program, p.plan, p.container.image);
    if (p.program_found.ok() && facts.bare_word) {
      p.program_found = Find(facts, p.program.front(), facts.path, true).status();
    }
  }
  p.plan.program = p.spawn.program.front();
  return absl::OkStatus();
}

// The sandbox's own refusals (a setting the runtime cannot deliver, a mount
// through a link) come before a missing program: they name what is wrong
// with the configuration itself.
absl::Status ReportProgramLookup(ContainerPlanning& p) { return p.program_found; }

// The runtime's argv, built once from the final spawn, and the descriptors
// it binds.
absl::Status BuildArgv(ContainerPlanning& p) {
  SpawnPlan& plan = p.plan;
  absl::StatusOr<std::vector<std::string>> argv =
      TraitsOf(p.container.runtime).build_argv(p.container, plan.mounts, p.spawn);
  if (!argv.ok()) return argv.status();
  if (!p.egress && std::find(argv->begin(), argv->end(), kEgressSelfTarget) != argv->end()) {
    absl::Status self_ok = CheckOutsideWritable(
        p.facts.self_path, "np-exec's own binary (the sandbox's entry point for a long argv)",
        p.policy, p.container.mounts);
    if (!self_ok.ok()) return self_ok;
  }
  plan.argv = *std::move(argv);
  for (size_t i = 0; i + 1 < plan.argv.size() && plan.argv[i] != "--"; ++i) {
    int fd = -1;
    if ((plan.argv[i] == "--bind-fd" || plan.argv[i] == "--ro-bind-fd") &&
        absl::SimpleAtoi(plan.argv[i + 1], &fd)) {
      plan.bind_fds.push_back(fd);
    }
  }
  return absl::OkStatus();
}

// How the launcher runs the runtime: its binary, its environment, the image.
absl::Status PlanRuntimeExec(ContainerPlanning& p) {
  SpawnPlan& plan = p.plan;
  const RuntimeTraits& traits = TraitsOf(p.container.runtime);
  plan.exec_path = p.facts.runtime_bin;
  plan.wrapped = true;
  if (traits.sandbox_env_from_runtime) {
    plan.env = SandboxEnvPlan(plan.env_names);
  } else {
    // A runtime client keeps the caller's environment (DOCKER_HOST and the
    // like) and forwards only the named variables into the container.
    plan.env.inherit = true;
    plan.env.unset = kInterposerVars;
    plan.env.forward = plan.env_names;
    // Nor does the client need a credential's key: the proxy reads it.
    if (p.egress) {
      for (const Credential& credential : p.container.credentials) {
        plan.env.unset.push_back(credential.env);
      }
    }
  }
  if (traits.uses_image) {
    plan.image = p.container.image;
    plan.pull_missing = p.container.pull_missing;
  }
  if (traits.named_containers) plan.container_name = p.facts.container_name;
  plan.self_path = p.facts.self_path;
  if (plan.warm.warm) {
    // The keeper's sandbox gets no value of the caller's: TERM and the
    // forwarded variables are handed over with each spawn.
    plan.warm.pass = {"TERM"};
    for (const std::string& name : plan.env.forward) {
      if (!IsInterposerVar(name) && name != "TERM") plan.warm.pass.push_back(name);
    }
    plan.env.pass.clear();
    plan.env.forward.clear();
    plan.warm.command = p.spawn.program;
    plan.warm.workdir = plan.workdir;
  }
  return absl::OkStatus();
}

using PlanningStep = absl::Status (*)(ContainerPlanning&);
constexpr PlanningStep kContainerPlanning[] = {
    FindProjectMount,    ResolveProjectUser, CheckOwnFilesOutsideWritable,
    DecideWarm,          DescribeSpawn,      PlanMounts,
    PlanProtected,       LookUpProgram,      BuildArgv,
    ReportProgramLookup, PlanRuntimeExec};

absl::Status PlanContainer(const Settings& settings, const SpawnFacts& facts,
                           const std::vector<std::string>& program, SpawnPlan& plan) {
  ContainerPlanning planning(settings, facts, program, plan);
  for (PlanningStep step : kContainerPlanning) {
    absl::Status done = step(planning);
    if (!done.ok()) return done;
  }
  return absl::OkStatus();
}

}  // namespace

bool IsInterposerVar(absl::string_view name) {
  return std::find(kInterposerVars.begin(), kInterposerVars.end(), name) != kInterposerVars.end();
}

absl::Status CheckEngineLocality(const ContainerConfig& container, absl::string_view engine,
                                 EngineReach reach) {
  const RuntimeTraits& traits = TraitsOf(container.runtime);
  // A named engine is another host's, whatever `reach` says.
  if (engine.empty() || !traits.shares_host_filesystem) return absl::OkStatus();
  if (reach == EngineReach::kInsecureTcp) {
    return MakeError(
        absl::StatusCode::kFailedPrecondition, "isolation-engine-insecure",
        absl::StrCat("the ", traits.name, " client would run this spawn on ", engine,
                     ": plain tcp to another host, without TLS the client verifies. Whoever "
                     "reaches that port is root on the engine's host and can read or change "
                     "every spawn. Nothing ran. Use ssh:// or tcp:// with DOCKER_TLS_VERIFY=1 "
                     "and certificates, or an engine on this host"),
        {{"engine", engine}});
  }
  const bool vouched = reach == EngineReach::kSsh || reach == EngineReach::kTls;
  if (vouched && container.remote_engine) return absl::OkStatus();
  return MakeError(
      absl::StatusCode::kFailedPrecondition, "isolation-engine-remote",
      absl::StrCat("the ", traits.name, " client would run this spawn on ", engine,
                   ", which is not this host: np-exec mounts this host's paths, and an engine "
                   "elsewhere would mount whatever is at those paths there. Nothing ran. ",
                   vouched ? "To run spawns there, with the project on storage both hosts see at "
                             "the same path, set isolation.container.remote_engine to true in "
                             "the operator file ($XDG_CONFIG_HOME/nubos-pilot/config.json); or "
                           : "np-exec accepts only ssh:// and verified-TLS tcp:// endpoints on "
                             "another host. ",
                   "Use an engine on this host (a unix:// socket or a loopback port: unset "
                   "DOCKER_HOST or CONTAINER_HOST, and switch the client's context or "
                   "connection back to its default)"),
      {{"engine", engine}, {"reach", EngineReachName(reach)}});
}

// What an engine on another host cannot do (core/plan.h).
absl::Status CheckRemoteSpawn(const Settings& settings, const SpawnFacts& facts) {
  const ContainerConfig& container = settings.config.container;
  if (facts.engine_remote.empty() || !TraitsOf(container.runtime).shares_host_filesystem) {
    return absl::OkStatus();
  }
  auto refuse = [&facts](absl::string_view reason, absl::string_view why) {
    return MakeError(absl::StatusCode::kFailedPrecondition, "isolation-engine-remote-unsupported",
                     absl::StrCat("on the engine ", facts.engine_remote, ", on another host: ", why,
                                  "; nothing ran"),
                     {{"reason", reason}, {"engine", facts.engine_remote}});
  };
  if (container.network == Network::kAllowlist) {
    return refuse("allowlist",
                  "network \"allowlist\" needs np-exec's egress proxy, which "
                  "listens on this host and cannot be bound into a container there");
  }
  if (container.persistent_home) {
    return refuse("persistent-home",
                  "home \"persistent\" lives in this host's state store, which "
                  "that host does not see");
  }
  if (facts.print_only) {
    return refuse("printed-plan",
                  "a printed plan carries no per-spawn check that the project "
                  "is shared; run the program through np-exec");
  }
  if (!facts.remote_check.has_value()) {
    return refuse("no-check", "np-exec has no per-spawn check of the project for it");
  }
  for (const MountSpec& mount : container.mounts) {
    if (!IsInside(NormalizePath(mount.source), settings.project_root)) {
      return refuse("mount-off-project",
                    absl::StrCat("the extra mount ", mount.source,
                                 " is outside the project, and only the project is proven to be "
                                 "the same there"));
    }
  }
  return absl::OkStatus();
}

std::vector<std::string> FixMounts(absl::string_view path, absl::string_view real) {
  std::vector<std::string> dirs = {ParentPath(path)};
  if (real.empty() || IsInside(real, dirs.front())) return dirs;
  constexpr absl::string_view kNodeModules = "/lib/node_modules/";
  const size_t at = real.find(kNodeModules);
  std::string second = at != absl::string_view::npos
                           ? std::string(real.substr(0, at + kNodeModules.size() - 1))
                           : ParentPath(real);
  if (!IsInside(second, dirs.front())) dirs.push_back(std::move(second));
  return dirs;
}

std::string SandboxPathFor(absl::string_view caller_path,
                           const std::vector<ValidatedMount>& mounts) {
  const std::vector<std::string> defaults = absl::StrSplit(kSandboxPath, ':');
  std::vector<std::string> entries;
  bool added = false;
  auto take = [&entries](const std::string& entry) {
    if (std::find(entries.begin(), entries.end(), entry) == entries.end()) {
      entries.push_back(entry);
    }
  };
  for (absl::string_view raw : absl::StrSplit(caller_path, ':', absl::SkipEmpty())) {
    if (!absl::StartsWith(raw, "/") || HasDotDot(raw) || raw.find('\0') != raw.npos) continue;
    const std::string entry = NormalizePath(raw);
    if (std::find(defaults.begin(), defaults.end(), entry) != defaults.end()) {
      take(entry);
      continue;
    }
    // The mount that shows `entry` inside: the deepest target holding it.
    const ValidatedMount* shown = nullptr;
    for (const ValidatedMount& mount : mounts) {
      if (IsInside(entry, mount.target) &&
          (shown == nullptr || mount.target.size() > shown->target.size())) {
        shown = &mount;
      }
    }
    if (shown == nullptr) continue;
    // At its own path: the directory it shows there is the host's `entry`.
    const std::string host = entry == shown->target
                                 ? shown->source
                                 : JoinPath(shown->source, entry.substr(shown->target.size() + 1));
    absl::StatusOr<std::string> real = ResolveRealPath(entry, "invalid-path");
    absl::StatusOr<std::string> real_host = ResolveRealPath(host, "invalid-path");
    if (!real.ok() || !real_host.ok() || *real != *real_host) continue;
    take(entry);
    added = true;
  }
  if (!added) return "";
  for (const std::string& entry : defaults) take(entry);
  return absl::StrJoin(entries, ":");
}

EnvPlan SandboxEnvPlan(const std::vector<std::string>& forward) {
  EnvPlan env;
  env.set = {absl::StrCat("PATH=", kSandboxPath), absl::StrCat("HOME=", kContainerHome)};
  env.pass = {"TERM"};
  for (const std::string& name : forward) {
    // The interposer's variables never reach a sandbox, forwarded or not, as
    // they never reach a runtime client.
    if (!IsInterposerVar(name)) env.forward.push_back(name);
  }
  return env;
}

absl::StatusOr<SpawnPlan> PlanSpawn(const Settings& settings, const ProbeResult* probe,
                                    const SpawnFacts& facts,
                                    const std::vector<std::string>& program,
                                    const std::vector<std::string>& env_names) {
  if (program.empty() || program.front().empty()) return NoProgram();
  for (const std::string& name : env_names) {
    absl::Status valid = ValidateEnvName(name);
    if (!valid.ok()) return valid;
  }
  const ContainerConfig& container = settings.config.container;
  SpawnPlan plan;
  plan.resolved = settings.resolved;
  plan.runtime = container.runtime;
  plan.env_names = MergeEnvNames(container.env, env_names);
  // np-exec mounts this host's paths and pins them by device and inode: an
  // engine on another host would mount whatever sits at those paths over
  // there (another checkout, an empty folder it creates, one prepared by
  // someone on that host), and nothing here could check it. Refused before
  // anything else, the probe's answer included (the driver does not ask it).
  if (settings.resolved.tier == Tier::kContainer) {
    absl::Status here = CheckEngineLocality(container, facts.engine_remote, facts.engine_reach);
    if (here.ok()) here = CheckRemoteSpawn(settings, facts);
    if (!here.ok()) return here;
    plan.engine_remote = facts.engine_remote;
  }
  absl::Status gate = AssertTierAvailable(settings.resolved, container.runtime, probe);
  if (!gate.ok()) return gate;
  absl::Status planned = settings.resolved.tier == Tier::kContainer
                             ? PlanContainer(settings, facts, program, plan)
                             : PlanInPlace(settings, facts, program, plan);
  if (!planned.ok()) return planned;
  return plan;
}

std::vector<std::string> PrintedCommand(const SpawnPlan& plan) {
  if (!plan.wrapped) return plan.argv;
  std::vector<std::string> command = {plan.self_path, std::string(kSandboxExecVerb),
                                      "--runtime",    std::string(RuntimeName(plan.runtime)),
                                      "--project",    plan.project_real};
  // Where the project is inside, when not at its own path (a configured
  // workdir, `wrap --workdir`): sandbox-exec pins the placeholders there.
  if (plan.project_mount != plan.project_real) {
    command.insert(command.end(), {"--mount-point", plan.project_mount});
  }
  // The image the argv runs, for the runtime's own failures (a missing image
  // is named, as on the run path).
  if (!plan.image.empty()) command.insert(command.end(), {"--image", plan.image});
  // The caller's account inside: sandbox-exec makes the view the argv binds.
  if (!plan.account_dir.empty())
    command.insert(command.end(), {"--account-view", plan.account_dir});
  // Where the runtime hands its environment to the sandbox, and where the
  // values go in as podman secrets; a docker client forwards the -e names of
  // its own argv.
  const RuntimeTraits& traits = TraitsOf(plan.runtime);
  if ((traits.sandbox_env_from_runtime || traits.forwards_as_secrets) &&
      !plan.env.forward.empty()) {
    command.insert(command.end(), {"--env", absl::StrJoin(plan.env.forward, ",")});
  }
  command.emplace_back("--");
  command.push_back(plan.exec_path);
  command.insert(command.end(), plan.argv.begin() + 1, plan.argv.end());
  return command;
}

nlohmann::json PlanToJson(const SpawnPlan& plan) {
  nlohmann::json out;
  out["tier"] = TierName(plan.resolved.tier);
  out["effective_from"] = TierSourceName(plan.resolved.from);
  out["wrapped"] = plan.wrapped;
  // Names and np-exec's own values only: never a value of the caller's.
  std::vector<std::string> set_names;
  for (const std::string& entry : plan.env.set)
    set_names.push_back(entry.substr(0, entry.find('=')));
  const nlohmann::json environment = {{"inherit", plan.env.inherit},
                                      {"set", set_names},
                                      {"unset", plan.env.unset},
                                      {"pass", plan.env.pass},
                                      {"forward", plan.env.forward}};
  if (plan.wrapped) {
    const std::vector<std::string> command = PrintedCommand(plan);
    out["runtime"] = RuntimeName(plan.runtime);
    out["bin"] = command.front();
    out["args"] = std::vector<std::string>(command.begin() + 1, command.end());
    out["workdir"] = plan.workdir;
    out["project_mount"] = plan.project_mount;
    out["env"] = plan.env_names;
    out["environment"] = environment;
    return out;
  }
  out["bin"] = plan.argv.front();
  out["args"] = std::vector<std::string>(plan.argv.begin() + 1, plan.argv.end());
  out["environment"] = environment;
  out["note"] = absl::StrCat(
      "tier ", TierName(plan.resolved.tier),
      " does not wrap: the program runs in place with the host's own rights (your whole "
      "account)",
      plan.resolved.tier == Tier::kWorktree
          ? "; version isolation comes from the worktree it runs in"
          : "");
  return out;
}

}  // namespace np
