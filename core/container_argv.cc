#include "core/container_argv.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "core/egress_entry.h"
#include "core/errors.h"
#include "core/git_identity.h"
#include "core/paths.h"

namespace np {
namespace {

// A CSV field as docker's --mount parser (encoding/csv) reads it.
std::string CsvField(absl::string_view field) {
  if (field.find_first_of(",\"") == absl::string_view::npos) return std::string(field);
  return absl::StrCat("\"", absl::StrReplaceAll(field, {{"\"", "\"\""}}), "\"");
}

}  // namespace

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

absl::StatusOr<std::vector<std::string>> BuildContainerArgv(
    const ContainerConfig& config, const std::vector<ValidatedMount>& mounts,
    const ContainerSpawn& spawn) {
  if (spawn.program.empty() || spawn.program.front().empty()) {
    return MakeError(absl::StatusCode::kInvalidArgument, "isolation-wrap-no-command",
                     "no program to run: give one after --");
  }
  if (config.image.empty() || config.image.front() == '-') {
    return MakeError(absl::StatusCode::kInvalidArgument, "isolation-no-image",
                     "isolation.container.image is empty or starts with -",
                     {{"image", config.image}});
  }
  for (const std::string& name : spawn.env_names) {
    absl::Status valid = ValidateEnvName(name);
    if (!valid.ok()) return valid;
  }
  absl::StatusOr<std::string> workdir = MapWorkingDirectory(config, spawn);
  if (!workdir.ok()) return workdir.status();
  absl::StatusOr<std::vector<ProtectedMount>> protected_mounts = ProtectedMounts(config, spawn);
  if (!protected_mounts.ok()) return protected_mounts.status();
  // Every bind of a path a sandboxed program could swap (the project, its
  // protected nodes, a worktree's git directories, the extra mounts), pinned
  // (mount_pins.h): the entry point checks each target's identity inside
  // before the program runs. np-exec's own files (in its private state, made
  // after the plan) go by path, and so do placeholders unless the run path
  // made them before this argv (ContainerSpawn::placeholders_made).
  std::vector<MountExpectation> expected;
  auto bind = [&](std::vector<std::string>& out, absl::string_view source, absl::string_view target,
                  bool writable, absl::string_view code, bool placeholder = false) -> absl::Status {
    absl::StatusOr<std::string> value =
        FormatBindMount(config.runtime, source, target, writable, code);
    if (!value.ok()) return value.status();
    if (spawn.pin && (!placeholder || spawn.placeholders_made)) {
      absl::StatusOr<SourcePin> pin = spawn.pin(std::string(source));
      if (!pin.ok()) return pin.status();
      expected.push_back({std::string(target), pin->dev, pin->ino});
    }
    out.insert(out.end(), {"--mount", *std::move(value)});
    return absl::OkStatus();
  };

  std::vector<std::string> argv;
  argv.reserve(40 + 2 * (mounts.size() + spawn.env_names.size() + protected_mounts->size()) +
               spawn.program.size());
  argv.emplace_back(RuntimeName(config.runtime));
  for (const char* flag :
       {"run", "--rm", "-i", "--init", "--network", "", "--cap-drop", "ALL", "--security-opt",
        "no-new-privileges", "--read-only", "--tmpfs", "/tmp:rw,nosuid,nodev,size=256m"}) {
    argv.emplace_back(flag);
  }
  // allowlist: loopback only, exactly as none; the proxy is reached through
  // a unix-domain endpoint, never an interface.
  argv[6] = std::string(
      NetworkName(config.network == Network::kAllowlist ? Network::kNone : config.network));
  if (spawn.home_source.empty()) {
    argv.emplace_back("--tmpfs");
    argv.push_back(absl::StrCat(kContainerHome, ":rw,nosuid,nodev,size=64m,mode=1777"));
  }
  // HOME is np-exec's own constant, not a forwarded variable: the one -e with
  // a value, and it carries nothing from the host.
  argv.emplace_back("-e");
  argv.push_back(absl::StrCat("HOME=", kContainerHome));
  if (spawn.stdin_tty && spawn.stdout_tty) argv.emplace_back("-t");
  argv.emplace_back(config.pull_missing ? "--pull=missing" : "--pull=never");
  if (config.runtime == Runtime::kPodman && !spawn.init_path.empty()) {
    argv.push_back(absl::StrCat("--init-path=", spawn.init_path));
  }
  argv.emplace_back("--name");
  argv.push_back(spawn.name);
  argv.emplace_back("--label");
  argv.push_back(absl::StrCat(kManagedLabel, "=1"));
  // `wrap` plans for a caller who runs the container itself and outlives
  // np-exec, so it has no owner to reap it by.
  if (!spawn.owner.empty()) {
    argv.emplace_back("--label");
    argv.push_back(absl::StrCat(kOwnerLabel, "=", spawn.owner));
  }
  switch (config.user.kind) {
    case UserSpec::Kind::kCaller:
      argv.push_back(absl::StrCat("--user=", spawn.uid, ":", spawn.gid));
      break;
    case UserSpec::Kind::kExplicit:
      argv.push_back(absl::StrCat("--user=", config.user.value));
      break;
    case UserSpec::Kind::kImage:
      break;
  }
  if (config.memory.has_value()) argv.push_back(absl::StrCat("--memory=", *config.memory));
  if (config.cpus.has_value()) argv.push_back(absl::StrCat("--cpus=", *config.cpus));
  absl::Status bound = bind(argv, spawn.project_root, ProjectTarget(config, spawn),
                            /*writable=*/true, "isolation-project-path-unsupported");
  if (!bound.ok()) return bound;
  // The runtime mounts by target depth, so these land on top of the project
  // mount whatever their order; sources are the project's own, checked
  // components (no link on the way, see PlanProtectedBinds).
  for (const ProtectedMount& entry : *protected_mounts) {
    bound = bind(argv, entry.source, entry.target, entry.writable,
                 "isolation-protected-path-unsafe", entry.placeholder);
    if (!bound.ok()) return bound;
  }
  for (const ValidatedMount& mount : mounts) {
    bound = bind(argv, mount.source, mount.target, mount.writable, "isolation-mount-bad-source");
    if (!bound.ok()) return bound;
  }
  // --- issue 17: the persistent home and the caller's account. ---
  struct ExtraBind {
    const std::string& source;
    absl::string_view target;
    bool writable;
  };
  for (const ExtraBind& extra : {ExtraBind{spawn.home_source, kContainerHome, true},
                                 ExtraBind{spawn.passwd_file, "/etc/passwd", false},
                                 ExtraBind{spawn.group_file, "/etc/group", false},
                                 ExtraBind{spawn.gitconfig_file, kGitConfigTarget, false}}) {
    if (extra.source.empty()) continue;
    absl::Status absolute = CheckAbsolutePath(extra.source, "isolation-mount-bad-source");
    if (!absolute.ok()) return absolute;
    absl::StatusOr<std::string> value = FormatBindMount(
        config.runtime, extra.source, extra.target, extra.writable, "isolation-mount-bad-source");
    if (!value.ok()) return value.status();
    argv.insert(argv.end(), {"--mount", *std::move(value)});
  }
  // np-exec's value, before the forwarded names (a forwarded one wins).
  if (!spawn.gitconfig_file.empty()) {
    argv.insert(argv.end(), {"-e", absl::StrCat(kGitConfigVar, "=", kGitConfigTarget)});
  }
  // --- egress allowlist (issue 16): the proxy's endpoint, np-exec as entry. ---
  const bool egress = config.network == Network::kAllowlist;
  if (egress) {
    if (spawn.egress_socket.empty() || spawn.self_binary.empty()) return AllowlistNeedsNpExec();
    absl::StatusOr<std::string> endpoint =
        FormatBindMount(config.runtime, spawn.egress_socket, kEgressSocketTarget,
                        /*writable=*/true, "isolation-mount-bad-source");
    if (!endpoint.ok()) return endpoint.status();
    argv.insert(argv.end(), {"--mount", *std::move(endpoint)});
  }
  // np-exec's own binary, the entry point: not pinned (its identity is what
  // would check it).
  if (egress || !expected.empty()) {
    if (spawn.self_binary.empty()) return SelfBinaryMissing();
    absl::StatusOr<std::string> self =
        FormatBindMount(config.runtime, spawn.self_binary, kEgressSelfTarget,
                        /*writable=*/false, "isolation-mount-bad-source");
    if (!self.ok()) return self.status();
    argv.insert(argv.end(), {"--mount", *std::move(self)});
  }
  if (egress) {
    // np-exec's constants, not the caller's values: the one place -e has one.
    for (const std::string& assignment : EgressProxyEnvironment()) {
      argv.insert(argv.end(), {"-e", assignment});
    }
  }
  // --- end egress allowlist ---
  for (const std::string& name : spawn.env_names) {
    argv.emplace_back("-e");
    argv.push_back(name);
  }
  argv.emplace_back("-w");
  argv.push_back(*std::move(workdir));
  argv.push_back(config.image);
  if (!expected.empty()) {
    const std::vector<std::string> check = MountCheckPrefix(expected);
    argv.insert(argv.end(), check.begin(), check.end());
  }
  if (egress) {
    const std::vector<std::string> entry = EgressEntryPrefix();
    argv.insert(argv.end(), entry.begin(), entry.end());
  }
  argv.insert(argv.end(), spawn.program.begin(), spawn.program.end());
  return argv;
}

}  // namespace np
