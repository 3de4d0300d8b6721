#include "core/container_argv.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "core/credentials.h"
#include "core/egress_entry.h"
#include "core/errors.h"
#include "core/git_identity.h"
#include "core/paths.h"
#include "core/warm.h"

namespace np {
namespace {

// A CSV field as docker's --mount parser (encoding/csv) reads it.
std::string CsvField(absl::string_view field) {
  if (field.find_first_of(",\"") == absl::string_view::npos) return std::string(field);
  return absl::StrCat("\"", absl::StrReplaceAll(field, {{"\"", "\"\""}}), "\"");
}

// One `docker run` / `podman run` argv in the making: the inputs, what the
// checks derived, and the arguments so far. Each step below reads and
// extends it.
struct ContainerBuild {
  ContainerBuild(const ContainerConfig& c, const std::vector<ValidatedMount>& m,
                 const ContainerSpawn& s)
      : config(c), mounts(m), spawn(s) {}
  const ContainerConfig& config;
  const std::vector<ValidatedMount>& mounts;
  const ContainerSpawn& spawn;
  SandboxInputs inputs;
  bool egress = false;
  // The pinned binds the entry point checks inside before the program runs.
  std::vector<MountExpectation> expected;
  // On a remote engine: the host device of the project's pin (the first),
  // which every other pin must share (mount_pins.h RemoteCheck).
  std::optional<uint64_t> project_dev;
  std::vector<std::string> argv;
};

absl::Status CheckContainerInputs(ContainerBuild& b) {
  if (b.config.image.empty() || b.config.image.front() == '-') {
    return MakeError(absl::StatusCode::kInvalidArgument, "isolation-no-image",
                     "isolation.container.image is empty or starts with -",
                     {{"image", b.config.image}});
  }
  absl::StatusOr<SandboxInputs> inputs = CheckSandboxInputs(b.config, b.spawn);
  if (!inputs.ok()) return inputs.status();
  b.inputs = *std::move(inputs);
  b.egress = b.config.network == Network::kAllowlist;
  b.argv.reserve(
      40 + 2 * (b.mounts.size() + b.spawn.env_names.size() + b.inputs.protected_mounts.size()) +
      b.spawn.program.size());
  return absl::OkStatus();
}

// The hardening, the container's identity and its user.
absl::Status AddRunOptions(ContainerBuild& b) {
  const ContainerConfig& config = b.config;
  const ContainerSpawn& spawn = b.spawn;
  std::vector<std::string>& argv = b.argv;
  argv.emplace_back(RuntimeName(config.runtime));
  // allowlist: loopback only, exactly as none; the proxy is reached through
  // a unix-domain endpoint, never an interface.
  const absl::string_view network =
      NetworkName(config.network == Network::kAllowlist ? Network::kNone : config.network);
  // A keeper (core/warm.h) is the container's PID 1 itself: every process of
  // a spawn is its descendant, and none can signal it.
  const bool keeper = !spawn.warm_dir.empty();
  argv.insert(argv.end(), {"run", "--rm", "-i"});
  if (!keeper) argv.emplace_back("--init");
  argv.insert(argv.end(),
              {"--network", std::string(network), "--cap-drop", "ALL", "--security-opt",
               "no-new-privileges", "--read-only", "--tmpfs", "/tmp:rw,nosuid,nodev,size=256m"});
  if (spawn.home_source.empty()) {
    argv.insert(argv.end(),
                {"--tmpfs", absl::StrCat(kContainerHome, ":rw,nosuid,nodev,size=64m,mode=1777")});
  }
  // HOME is np-exec's own constant, not a forwarded variable: the one -e with
  // a value, and it carries nothing from the host.
  argv.insert(argv.end(), {"-e", absl::StrCat("HOME=", kContainerHome)});
  // A keeper hands each spawn its own descriptors, a terminal included.
  if (spawn.stdin_tty && spawn.stdout_tty && !keeper) argv.emplace_back("-t");
  argv.emplace_back(config.pull_missing ? "--pull=missing" : "--pull=never");
  if (config.runtime == Runtime::kPodman && !spawn.init_path.empty() && !keeper) {
    argv.push_back(absl::StrCat("--init-path=", spawn.init_path));
  }
  argv.insert(argv.end(), {"--name", spawn.name, "--label", absl::StrCat(kManagedLabel, "=1")});
  // `wrap` plans for a caller who runs the container itself and outlives
  // np-exec, so it has no owner to reap it by; a warm sandbox outlives the
  // spawn that starts it, and its holder's watchdog removes it.
  if (!spawn.owner.empty() && !keeper) {
    argv.insert(argv.end(), {"--label", absl::StrCat(kOwnerLabel, "=", spawn.owner)});
  }
  if (config.user.kind == UserSpec::Kind::kCaller) {
    argv.push_back(absl::StrCat("--user=", spawn.uid, ":", spawn.gid));
  } else if (config.user.kind == UserSpec::Kind::kExplicit) {
    argv.push_back(absl::StrCat("--user=", config.user.value));
  }
  if (config.memory.has_value()) argv.push_back(absl::StrCat("--memory=", *config.memory));
  if (config.cpus.has_value()) argv.push_back(absl::StrCat("--cpus=", *config.cpus));
  return absl::OkStatus();
}

// A remote engine proves pins by inode number on the project's file system;
// a source on another file system of this host cannot be proven there.
absl::Status RemotePinOffProject(absl::string_view source) {
  return MakeError(absl::StatusCode::kFailedPrecondition, "isolation-engine-remote-unsupported",
                   absl::StrCat("on an engine on another host, every bound path must lie on the "
                                "project's own file system, which np-exec proves there; ",
                                source, " does not; nothing ran"),
                   {{"reason", "mount-off-project"}, {"source", source}});
}

// One bind of a path a sandboxed program could swap (the project, its
// protected nodes, a worktree's git directories, the extra mounts), pinned
// (mount_pins.h): the entry point checks its target's identity inside before
// the program runs. Placeholders are pinned only when the run path made them
// before this argv (ContainerSpawn::placeholders_made).
absl::Status AddPinnedMount(ContainerBuild& b, absl::string_view source, absl::string_view target,
                            bool writable, absl::string_view code, bool placeholder = false) {
  absl::StatusOr<std::string> value =
      FormatBindMount(b.config.runtime, source, target, writable, code);
  if (!value.ok()) return value.status();
  if (b.spawn.pin && (!placeholder || b.spawn.placeholders_made)) {
    absl::StatusOr<SourcePin> pin = b.spawn.pin(std::string(source));
    if (!pin.ok()) return pin.status();
    if (b.spawn.remote_check.has_value()) {
      if (!b.project_dev.has_value()) b.project_dev = pin->dev;
      if (pin->dev != *b.project_dev) return RemotePinOffProject(source);
    }
    b.expected.push_back({std::string(target), pin->dev, pin->ino});
  }
  b.argv.insert(b.argv.end(), {"--mount", *std::move(value)});
  return absl::OkStatus();
}

// One of np-exec's own files, in its private state and made after the plan:
// by path, never pinned (the entry point's own binary is what would check it).
absl::Status AddOwnMount(ContainerBuild& b, const std::string& source, absl::string_view target,
                         bool writable) {
  absl::StatusOr<std::string> value =
      FormatBindMount(b.config.runtime, source, target, writable, "isolation-mount-bad-source");
  if (!value.ok()) return value.status();
  b.argv.insert(b.argv.end(), {"--mount", *std::move(value)});
  return absl::OkStatus();
}

// The runtime mounts by target depth, so the protected nodes land on top of
// the project mount whatever their order; their sources are the project's
// own, checked components (no link on the way, see PlanProtectedBinds).
absl::Status AddProjectAndMounts(ContainerBuild& b) {
  absl::Status bound = AddPinnedMount(b, b.spawn.project_root, ProjectTarget(b.config, b.spawn),
                                      /*writable=*/true, "isolation-project-path-unsupported");
  if (!bound.ok()) return bound;
  for (const ProtectedMount& entry : b.inputs.protected_mounts) {
    bound = AddPinnedMount(b, entry.source, entry.target, entry.writable,
                           "isolation-protected-path-unsafe", entry.placeholder);
    if (!bound.ok()) return bound;
  }
  for (const ValidatedMount& mount : b.mounts) {
    bound =
        AddPinnedMount(b, mount.source, mount.target, mount.writable, "isolation-mount-bad-source");
    if (!bound.ok()) return bound;
  }
  return absl::OkStatus();
}

// The persistent home and the caller's account and git identity.
absl::Status AddHomeAndAccount(ContainerBuild& b) {
  struct OwnFile {
    const std::string& source;
    absl::string_view target;
    bool writable;
  };
  const ContainerSpawn& spawn = b.spawn;
  for (const OwnFile& file : {OwnFile{spawn.home_source, kContainerHome, true},
                              OwnFile{spawn.passwd_file, "/etc/passwd", false},
                              OwnFile{spawn.group_file, "/etc/group", false},
                              OwnFile{spawn.gitconfig_file, kGitConfigTarget, false}}) {
    if (file.source.empty()) continue;
    absl::Status absolute = CheckAbsolutePath(file.source, "isolation-mount-bad-source");
    if (!absolute.ok()) return absolute;
    absl::Status bound = AddOwnMount(b, file.source, file.target, file.writable);
    if (!bound.ok()) return bound;
  }
  // np-exec's value, before the forwarded names (a forwarded one wins).
  if (!spawn.gitconfig_file.empty()) {
    b.argv.insert(b.argv.end(), {"-e", absl::StrCat(kGitConfigVar, "=", kGitConfigTarget)});
  }
  return absl::OkStatus();
}

// network "allowlist": the proxy's endpoint; np-exec's own binary whenever an
// entry point runs before the program (the egress entry, the mount check).
absl::Status AddEgressAndSelf(ContainerBuild& b) {
  const ContainerSpawn& spawn = b.spawn;
  if (b.egress) {
    if (spawn.egress_socket.empty() || spawn.self_binary.empty()) return AllowlistNeedsNpExec();
    absl::Status bound = AddOwnMount(b, spawn.egress_socket, kEgressSocketTarget, true);
    if (!bound.ok()) return bound;
    // The session CA's certificate and trust bundle, never its key.
    if (!spawn.credential_env.empty()) {
      bound = AddOwnMount(b, spawn.credential_ca, kCredentialCaTarget, false);
      if (bound.ok())
        bound = AddOwnMount(b, spawn.credential_bundle, kCredentialBundleTarget, false);
      if (!bound.ok()) return bound;
    }
  }
  if (!spawn.warm_dir.empty()) {
    absl::Status bound = AddOwnMount(b, spawn.warm_dir, kWarmTarget, false);
    if (!bound.ok()) return bound;
  }
  if (b.egress || !b.expected.empty() || !spawn.warm_dir.empty() ||
      spawn.remote_check.has_value()) {
    if (spawn.self_binary.empty()) return SelfBinaryMissing();
    absl::Status bound = AddOwnMount(b, spawn.self_binary, kEgressSelfTarget, false);
    if (!bound.ok()) return bound;
  }
  if (b.egress) {
    // np-exec's constants, not the caller's values: the one place -e has one.
    for (const std::string& assignment : EgressProxyEnvironment()) {
      b.argv.insert(b.argv.end(), {"-e", assignment});
    }
    // Placeholders and the CA's paths: np-exec's values, never a key.
    for (const std::string& assignment : spawn.credential_env) {
      b.argv.insert(b.argv.end(), {"-e", assignment});
    }
  }
  return absl::OkStatus();
}

// The entry point's checks in front of the program (or the keeper): by
// device and inode here; on a remote engine, the project's nonce, the
// binary's digest and inode numbers (mount_pins.h). Empty: nothing to check.
std::vector<std::string> MountCheck(const ContainerBuild& b) {
  if (b.spawn.remote_check.has_value()) {
    return RemoteMountCheckPrefix(b.expected, *b.spawn.remote_check,
                                  ProjectTarget(b.config, b.spawn));
  }
  if (b.expected.empty()) return {};
  return MountCheckPrefix(b.expected);
}

// The forwarded names, the working directory, the image and what runs in it.
absl::Status AddCommand(ContainerBuild& b) {
  std::vector<std::string>& argv = b.argv;
  const bool keeper = !b.spawn.warm_dir.empty();
  // A keeper is handed the forwarded values, the directory and the program
  // with each spawn; the container itself gets none of them.
  for (const std::string& name : keeper ? std::vector<std::string>() : b.spawn.env_names) {
    const auto secret = std::find_if(b.spawn.env_secrets.begin(), b.spawn.env_secrets.end(),
                                     [&name](const EnvSecret& s) { return s.name == name; });
    if (secret == b.spawn.env_secrets.end()) {
      argv.insert(argv.end(), {"-e", name});
    } else {
      argv.insert(argv.end(),
                  {"--secret", absl::StrCat(secret->secret, ",type=env,target=", name)});
    }
  }
  if (keeper) {
    // np-exec itself is the entry point, whatever the image's own: the
    // keeper must be the container's PID 1 (it refuses to run otherwise).
    argv.insert(argv.end(), {"--entrypoint", std::string(kEgressSelfTarget), "-w",
                             ProjectTarget(b.config, b.spawn), b.config.image});
    const std::vector<std::string> check = MountCheck(b);
    if (!check.empty()) {
      argv.insert(argv.end(), check.begin() + 1, check.end());
      argv.emplace_back(kEgressSelfTarget);
    }
    argv.emplace_back(kKeeperVerb);
    return absl::OkStatus();
  }
  argv.insert(argv.end(), {"-w", b.inputs.workdir, b.config.image});
  const std::vector<std::string> check = MountCheck(b);
  argv.insert(argv.end(), check.begin(), check.end());
  if (b.egress) {
    const std::vector<std::string> entry = EgressEntryPrefix();
    argv.insert(argv.end(), entry.begin(), entry.end());
  }
  argv.insert(argv.end(), b.spawn.program.begin(), b.spawn.program.end());
  return absl::OkStatus();
}

using ContainerStep = absl::Status (*)(ContainerBuild&);
constexpr ContainerStep kContainerSteps[] = {CheckContainerInputs, AddRunOptions,
                                             AddProjectAndMounts,  AddHomeAndAccount,
                                             AddEgressAndSelf,     AddCommand};

}  // namespace

std::string EnvSecretName(absl::string_view container, size_t i) {
  return absl::StrCat(container, "-env-", i);
}

absl::Status SelfBinaryMissing() {
  return MakeError(absl::StatusCode::kFailedPrecondition, "isolation-mount-bad-source",
                   "np-exec cannot tell its own binary's path (/proc/self/exe), which the "
                   "sandbox's entry point needs to check its mounts; nothing ran");
}

absl::Status AllowlistNeedsNpExec() {
  return MakeError(absl::StatusCode::kFailedPrecondition, "isolation-allowlist-needs-np-exec",
                   "isolation.container.network \"allowlist\" works only while np-exec "
                   "supervises the spawn and serves its egress proxy; a plan run without np-exec "
                   "would have no network at all. Run the program through np-exec "
                   "(np-exec -- PROGRAM) instead of printing a plan",
                   {{"network", "allowlist"}});
}

std::string ProjectTarget(const ContainerConfig& config, const ContainerSpawn& spawn) {
  return config.workdir.has_value() ? *config.workdir : spawn.project_root;
}

absl::StatusOr<std::string> MapWorkingDirectory(const ContainerConfig& config,
                                                const ContainerSpawn& spawn) {
  // A NUL byte would cut the path short at exec, so the runtime would see a
  // different directory than the one checked here.
  for (const std::string* path : {&spawn.project_root, &spawn.cwd}) {
    absl::Status valid = CheckAbsolutePath(*path, "invalid-path");
    if (!valid.ok()) return valid;
  }
  if (!IsInside(spawn.cwd, spawn.project_root)) {
    return MakeError(absl::StatusCode::kFailedPrecondition, "isolation-cwd-outside-project",
                     absl::StrCat("the working directory ", spawn.cwd, " is outside the project ",
                                  spawn.project_root),
                     {{"cwd", spawn.cwd}, {"project", spawn.project_root}});
  }
  const std::string target = ProjectTarget(config, spawn);
  absl::string_view rest = absl::string_view(spawn.cwd).substr(spawn.project_root.size());
  if (!rest.empty() && rest.front() == '/') rest.remove_prefix(1);
  if (spawn.project_root == "/") rest = absl::string_view(spawn.cwd).substr(1);
  return JoinPath(target, rest);
}

absl::StatusOr<std::vector<ProtectedMount>> ProtectedMounts(const ContainerConfig& config,
                                                            const ContainerSpawn& spawn) {
  std::vector<ProtectedMount> out;
  out.reserve(spawn.protected_binds.size() + spawn.git_roots.size());
  const std::string target = ProjectTarget(config, spawn);
  // `root` empty: the project's binds; else those inside that git root.
  auto add_binds = [&](absl::string_view root) -> absl::Status {
    for (const ProtectedBind& bind : spawn.protected_binds) {
      if (bind.root != root) continue;
      absl::Status valid = ValidateProtectedBind(bind);
      if (!valid.ok()) return valid;
      out.push_back({BindHostPath(spawn.project_root, bind), BindHostPath(target, bind),
                     bind.writable, bind.placeholder});
    }
    return absl::OkStatus();
  };
  absl::Status project = add_binds("");
  if (!project.ok()) return project;
  for (const std::string& root : spawn.git_roots) {
    absl::Status valid = CheckAbsolutePath(root, "isolation-protected-path-unsafe");
    if (!valid.ok()) return valid;
    out.push_back({root, root, /*writable=*/true});
    absl::Status inside = add_binds(root);
    if (!inside.ok()) return inside;
  }
  return out;
}

absl::StatusOr<std::string> FormatBindMount(Runtime runtime, absl::string_view source,
                                            absl::string_view target, bool writable,
                                            absl::string_view code) {
  for (absl::string_view path : {source, target}) {
    const bool unsupported =
        path.size() > kMaxPathBytes ||
        path.find_first_of(absl::string_view("\n\r\0", 3)) != absl::string_view::npos ||
        (runtime == Runtime::kPodman && path.find_first_of(",\"") != absl::string_view::npos);
    if (unsupported) {
      return MakeError(
          absl::StatusCode::kInvalidArgument, code,
          absl::StrCat("the path \"", path, "\" cannot be passed to ", RuntimeName(runtime),
                       "'s --mount: it contains a ",
                       runtime == Runtime::kPodman ? "newline, comma or quote" : "newline",
                       ". Rename the directory"),
          {{"path", path}, {"runtime", RuntimeName(runtime)}});
    }
  }
  // The usual case has nothing to quote: build the value in one allocation
  // (this runs for every mount of every container spawn).
  auto plain = [](absl::string_view path) {
    for (char c : path) {
      if (c == ',' || c == '"') return false;
    }
    return true;
  };
  if (plain(source) && plain(target)) {
    return absl::StrCat("type=bind,source=", source, ",target=", target,
                        writable ? "" : ",readonly");
  }
  std::string value = absl::StrCat("type=bind,", CsvField(absl::StrCat("source=", source)), ",",
                                   CsvField(absl::StrCat("target=", target)));
  if (!writable) absl::StrAppend(&value, ",readonly");
  return value;
}

absl::Status CheckProgramGiven(const ContainerSpawn& spawn) {
  if (!spawn.program.empty() && !spawn.program.front().empty()) return absl::OkStatus();
  return MakeError(absl::StatusCode::kInvalidArgument, "isolation-wrap-no-command",
                   "no program to run: give one after --");
}

absl::StatusOr<SandboxInputs> CheckSandboxInputs(const ContainerConfig& config,
                                                 const ContainerSpawn& spawn) {
  for (const std::string& name : spawn.env_names) {
    absl::Status valid = ValidateEnvName(name);
    if (!valid.ok()) return valid;
  }
  SandboxInputs inputs;
  absl::StatusOr<std::string> workdir = MapWorkingDirectory(config, spawn);
  if (!workdir.ok()) return workdir.status();
  inputs.workdir = *std::move(workdir);
  absl::StatusOr<std::vector<ProtectedMount>> protected_mounts = ProtectedMounts(config, spawn);
  if (!protected_mounts.ok()) return protected_mounts.status();
  inputs.protected_mounts = *std::move(protected_mounts);
  return inputs;
}

absl::StatusOr<std::vector<std::string>> BuildContainerArgv(
    const ContainerConfig& config, const std::vector<ValidatedMount>& mounts,
    const ContainerSpawn& spawn) {
  absl::Status given = CheckProgramGiven(spawn);
  if (!given.ok()) return given;
  ContainerBuild build(config, mounts, spawn);
  for (ContainerStep step : kContainerSteps) {
    absl::Status done = step(build);
    if (!done.ok()) return done;
  }
  return std::move(build.argv);
}

}  // namespace np
