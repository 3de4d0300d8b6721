#include "core/bwrap_argv.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/bwrap_targets.h"
#include "core/egress_entry.h"
#include "core/errors.h"
#include "core/git_identity.h"
#include "core/mount_pins.h"
#include "core/paths.h"

namespace np {
namespace {

const std::string kNoView;

absl::Status Unsupported(absl::string_view what) {
  return MakeError(absl::StatusCode::kInvalidArgument, "isolation-bwrap-unsupported",
                   absl::StrCat("runtime \"bwrap\" cannot deliver ", what,
                                "; remove the setting or use runtime \"docker\" or "
                                "\"podman\""),
                   {{"setting", what}});
}

absl::Status TooManyArguments(size_t count) {
  return MakeError(absl::StatusCode::kInvalidArgument, "isolation-bwrap-too-many-arguments",
                   absl::StrCat("the bubblewrap sandbox needs ", count,
                                " arguments and bubblewrap takes at most ", kBwrapMaxArgs,
                                "; use fewer mounts or protected paths, or runtime \"docker\" "
                                "or \"podman\""),
                   {{"arguments", count}, {"limit", kBwrapMaxArgs}});
}

}  // namespace

std::vector<RootEntry> ReadHostRootLayout() {
  std::vector<RootEntry> layout;
  for (const char* path : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) {
    struct stat st;
    if (lstat(path, &st) != 0) continue;
    RootEntry entry{path, ""};
    if (S_ISLNK(st.st_mode)) {
      char target[PATH_MAX];
      ssize_t n = readlink(path, target, sizeof(target) - 1);
      if (n <= 0) continue;
      entry.link_target.assign(target, static_cast<size_t>(n));
    } else if (!S_ISDIR(st.st_mode)) {
      continue;
    }
    layout.push_back(std::move(entry));
  }
  return layout;
}

const std::vector<std::string>& SandboxEtcFiles() {
  static const auto* files = new std::vector<std::string>{
      "/etc/ld.so.cache", "/etc/ld.so.conf",     "/etc/ld.so.conf.d", "/etc/passwd",
      "/etc/group",       "/etc/nsswitch.conf",  "/etc/localtime",    "/etc/alternatives",
      "/etc/ssl/certs",   "/etc/ca-certificates"};
  return *files;
}

std::vector<std::string> BwrapBaseEnvironment(absl::string_view term) {
  std::vector<std::string> env = {absl::StrCat("PATH=", kSandboxPath),
                                  absl::StrCat("HOME=", kContainerHome)};
  if (!term.empty()) env.push_back(absl::StrCat("TERM=", term));
  return env;
}

absl::StatusOr<std::vector<std::string>> BuildBwrapArgv(const ContainerConfig& config,
                                                        const std::vector<ValidatedMount>& mounts,
                                                        const ContainerSpawn& spawn,
                                                        const std::vector<RootEntry>& root_layout) {
  if (spawn.program.empty() || spawn.program.front().empty()) {
    return MakeError(absl::StatusCode::kInvalidArgument, "isolation-wrap-no-command",
                     "no program to run: give one after --");
  }
  if (config.memory.has_value()) return Unsupported("isolation.container.memory");
  if (config.cpus.has_value()) return Unsupported("isolation.container.cpus");
  if (config.network == Network::kBridge) return Unsupported("network \"bridge\"");
  // bubblewrap has no image whose user "image" could name: the sandbox is
  // the host's /usr in a user namespace that maps the caller's own uid and
  // gid only, so it cannot run as anyone else, the image's user or root.
  if (config.user.kind == UserSpec::Kind::kImage) {
    return Unsupported(
        "isolation.container.user \"image\" (it has no image: its sandbox always runs as your "
        "own uid:gid)");
  }
  if (config.user.kind != UserSpec::Kind::kCaller) return Unsupported("isolation.container.user");
  for (const std::string& name : spawn.env_names) {
    absl::Status valid = ValidateEnvName(name);
    if (!valid.ok()) return valid;
  }
  absl::StatusOr<std::string> workdir = MapWorkingDirectory(config, spawn);
  if (!workdir.ok()) return workdir.status();
  absl::StatusOr<std::vector<ProtectedMount>> protected_mounts = ProtectedMounts(config, spawn);
  if (!protected_mounts.ok()) return protected_mounts.status();
  // bwrap takes each path as its own argument, so only a NUL byte (which would
  // cut it short at exec) or a relative path can make it mean something else.
  for (const ValidatedMount& mount : mounts) {
    absl::Status source_ok = CheckAbsolutePath(mount.source, "isolation-mount-bad-source");
    if (!source_ok.ok()) return source_ok;
    absl::Status target_ok = CheckAbsolutePath(mount.target, "isolation-mount-bad-target");
    if (!target_ok.ok()) return target_ok;
  }
  const std::string project_target = ProjectTarget(config, spawn);
  // One bind of the prepared /etc, unless a mount goes below /etc: bubblewrap
  // would make its mount point inside the prepared copy.
  // Nor when the copy lies where the program can write (a state store
  // inside the project or a writable mount): another sandbox would bind
  // what this one wrote.
  bool etc_view = !spawn.etc_view.empty() && !IsInside(spawn.etc_view, spawn.project_root);
  for (const ValidatedMount& mount : mounts) {
    etc_view = etc_view && !IsInside(mount.target, "/etc") &&
               !(mount.writable && IsInside(spawn.etc_view, mount.source));
  }
  if (etc_view) {
    absl::Status valid = CheckAbsolutePath(spawn.etc_view, "isolation-mount-bad-source");
    if (!valid.ok()) return valid;
  }
  const bool egress = config.network == Network::kAllowlist;
  // The sandbox's binds other than the extra mounts, for the link check and
  // for leaving out what they already show (bwrap_targets.h).
  std::vector<SandboxBind> fixed = {{"/usr", "/usr"}, {spawn.project_root, project_target}};
  for (const RootEntry& entry : root_layout) {
    if (entry.link_target.empty()) fixed.push_back({entry.path, entry.path});
  }
  for (const char* target : {"/proc", "/dev", "/tmp"}) fixed.push_back({"", target});
  fixed.push_back({"", std::string(kContainerHome)});
  if (etc_view) {
    fixed.push_back({spawn.etc_view, "/etc"});
  } else {
    for (const std::string& file : SandboxEtcFiles()) fixed.push_back({file, file});
  }
  for (const ProtectedMount& bind : *protected_mounts) fixed.push_back({bind.source, bind.target});
  if (egress) fixed.push_back({"", "/run/np-exec"});
  if (!spawn.gitconfig_file.empty()) {
    fixed.push_back({spawn.gitconfig_file, std::string(kGitConfigTarget)});
  }
  const std::vector<ValidatedMount> binds = CoalesceBwrapMounts(mounts, fixed);
  // --- Issue 15 item 5: no mount target through a host-visible link
  // (core/bwrap_targets.h). ---
  {
    std::vector<SandboxBind> seen = {{"/usr", "/usr"}, {spawn.project_root, project_target}};
    for (const RootEntry& entry : root_layout) {
      if (entry.link_target.empty()) seen.push_back({entry.path, entry.path});
    }
    // bubblewrap mounts in argv order: each target is made under the binds
    // before it.
    for (const ValidatedMount& mount : binds) {
      absl::Status no_link = CheckMountTargetHasNoLink(mount.target, seen);
      if (!no_link.ok()) return no_link;
      seen.push_back({mount.source, mount.target});
    }
  }
  // --- end of item 5 ---

  // Every bind of a path a sandboxed program could swap (the project, its
  // protected nodes, a worktree's git directories, the extra mounts), pinned
  // (mount_pins.h): bound from the descriptor the launcher opened, or, in a
  // printed plan, which carries none, checked inside by the entry point.
  // np-exec's own files (the /etc view, the account view, the persistent
  // home, the egress endpoint: in its private state, made after the plan)
  // go by path, and so do placeholders unless the run path made them before
  // this argv (ContainerSpawn::placeholders_made; a printed plan's are made
  // and pinned by sandbox-exec).
  std::vector<MountExpectation> expected;
  auto bind = [&](std::vector<std::string>& out, const std::string& source,
                  absl::string_view target, bool writable,
                  bool placeholder = false) -> absl::Status {
    if (spawn.pin && (!placeholder || spawn.placeholders_made)) {
      absl::StatusOr<SourcePin> pin = spawn.pin(source);
      if (!pin.ok()) return pin.status();
      if (pin->fd >= 0) {
        out.insert(out.end(), {writable ? "--bind-fd" : "--ro-bind-fd", absl::StrCat(pin->fd),
                               std::string(target)});
        return absl::OkStatus();
      }
      expected.push_back({std::string(target), pin->dev, pin->ino});
    }
    out.insert(out.end(), {writable ? "--bind" : "--ro-bind", source, std::string(target)});
    return absl::OkStatus();
  };

  std::vector<std::string> argv = {"bwrap",
                                   "--unshare-user",
                                   "--unshare-pid",
                                   "--unshare-ipc",
                                   "--unshare-uts",
                                   "--unshare-cgroup-try",
                                   "--die-with-parent",
                                   "--new-session",
                                   "--cap-drop",
                                   "ALL"};
  if (config.network != Network::kHost) argv.emplace_back("--unshare-net");
  argv.insert(argv.end(), {"--ro-bind", "/usr", "/usr"});
  for (const RootEntry& entry : root_layout) {
    if (entry.link_target.empty()) {
      argv.insert(argv.end(), {"--ro-bind", entry.path, entry.path});
    } else {
      argv.insert(argv.end(), {"--symlink", entry.link_target, entry.path});
    }
  }
  // The caller's account (core/passwd_view.h) replaces the host's files.
  for (const std::string* view : {&spawn.passwd_file, &spawn.group_file, &spawn.gitconfig_file}) {
    if (view->empty()) continue;
    absl::Status absolute = CheckAbsolutePath(*view, "isolation-mount-bad-source");
    if (!absolute.ok()) return absolute;
  }
  if (etc_view) {
    argv.insert(argv.end(), {"--ro-bind", spawn.etc_view, "/etc"});
  } else {
    for (const std::string& file : SandboxEtcFiles()) {
      const bool replaced = (file == "/etc/passwd" && !spawn.passwd_file.empty()) ||
                            (file == "/etc/group" && !spawn.group_file.empty());
      if (!replaced) argv.insert(argv.end(), {"--ro-bind-try", file, file});
    }
  }
  if (!spawn.passwd_file.empty()) {
    argv.insert(argv.end(), {"--ro-bind", spawn.passwd_file, "/etc/passwd"});
  }
  if (!spawn.group_file.empty()) {
    argv.insert(argv.end(), {"--ro-bind", spawn.group_file, "/etc/group"});
  }
  if (!spawn.gitconfig_file.empty()) {
    argv.insert(argv.end(),
                {"--ro-bind", spawn.gitconfig_file, std::string(kGitConfigTarget), "--setenv",
                 std::string(kGitConfigVar), std::string(kGitConfigTarget)});
  }
  argv.insert(argv.end(), {"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"});
  if (spawn.home_source.empty()) {
    argv.insert(argv.end(), {"--tmpfs", std::string(kContainerHome)});
  } else {
    absl::Status absolute = CheckAbsolutePath(spawn.home_source, "isolation-mount-bad-source");
    if (!absolute.ok()) return absolute;
    argv.insert(argv.end(), {"--bind", spawn.home_source, std::string(kContainerHome)});
  }
  absl::Status bound = bind(argv, spawn.project_root, project_target, /*writable=*/true);
  if (!bound.ok()) return bound;
  // bubblewrap mounts in argv order: writable parents (pinned as mount
  // points) first, then the read-only nodes on top, before the extra mounts.
  for (const ProtectedMount& entry : *protected_mounts) {
    bound = bind(argv, entry.source, entry.target, entry.writable, entry.placeholder);
    if (!bound.ok()) return bound;
  }
  for (const ValidatedMount& mount : binds) {
    bound = bind(argv, mount.source, mount.target, mount.writable);
    if (!bound.ok()) return bound;
  }
  // np-exec's value, not the caller's: their PATH as far as the sandbox shows it.
  if (!spawn.sandbox_path.empty())
    argv.insert(argv.end(), {"--setenv", "PATH", spawn.sandbox_path});
  // What runs inside: the program, after the egress entry point on network
  // "allowlist".
  std::vector<std::string> command;
  // --- egress allowlist (issue 16): the proxy's endpoint, np-exec as entry. ---
  if (egress) {
    if (spawn.egress_socket.empty() || spawn.self_binary.empty()) return AllowlistNeedsNpExec();
    for (const std::string* path : {&spawn.egress_socket, &spawn.self_binary}) {
      absl::Status valid = CheckAbsolutePath(*path, "isolation-mount-bad-source");
      if (!valid.ok()) return valid;
    }
    argv.insert(argv.end(), {"--bind", spawn.egress_socket, std::string(kEgressSocketTarget),
                             "--ro-bind", spawn.self_binary, std::string(kEgressSelfTarget)});
    // np-exec's constants, not the caller's values.
    for (const std::string& assignment : EgressProxyEnvironment()) {
      const size_t eq = assignment.find('=');
      argv.insert(argv.end(), {"--setenv", assignment.substr(0, eq), assignment.substr(eq + 1)});
    }
    command = EgressEntryPrefix();
  }
  // --- end egress allowlist ---
  if (!expected.empty()) {
    if (spawn.self_binary.empty()) return SelfBinaryMissing();
    absl::Status valid = CheckAbsolutePath(spawn.self_binary, "isolation-mount-bad-source");
    if (!valid.ok()) return valid;
    if (!egress) {
      argv.insert(argv.end(), {"--ro-bind", spawn.self_binary, std::string(kEgressSelfTarget)});
    }
    const std::vector<std::string> check = MountCheckPrefix(expected);
    command.insert(command.begin(), check.begin(), check.end());
  }
  const bool self_bound = egress || !expected.empty();
  command.insert(command.end(), spawn.program.begin(), spawn.program.end());
  // Last, so the tmpfs root and its mount points become read-only while the
  // mounts on top of them (/tmp, HOME, the project) keep their own modes.
  const std::vector<std::string> tail = {"--remount-ro", "/", "--chdir", *workdir, "--"};
  // --- Issue 19 item 3: more arguments than bubblewrap takes go through a
  // descriptor to np-exec's own entry point inside (kArgvEntryVerb). ---
  if (argv.size() + tail.size() + command.size() + kBwrapLauncherArgs > kBwrapMaxArgs) {
    if (spawn.self_binary.empty()) return TooManyArguments(argv.size() + command.size());
    absl::Status valid = CheckAbsolutePath(spawn.self_binary, "isolation-mount-bad-source");
    if (!valid.ok()) return valid;
    if (!self_bound) {
      argv.insert(argv.end(), {"--ro-bind", spawn.self_binary, std::string(kEgressSelfTarget)});
    }
    command.insert(command.begin(),
                   {std::string(kEgressSelfTarget), std::string(kArgvEntryVerb), "--"});
    // What bubblewrap itself then gets: the options, the entry point, the
    // verb and "--fd N".
    if (argv.size() + tail.size() + 4 + kBwrapLauncherArgs > kBwrapMaxArgs) {
      return TooManyArguments(argv.size());
    }
  }
  argv.insert(argv.end(), tail.begin(), tail.end());
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

size_t ArgvHandoffStart(const std::vector<std::string>& argv) {
  const auto dashes = std::find(argv.begin(), argv.end(), "--");
  const size_t at = static_cast<size_t>(dashes - argv.begin());
  if (dashes == argv.end() || argv.size() < at + 4 || argv[at + 1] != kEgressSelfTarget ||
      argv[at + 2] != kArgvEntryVerb || argv[at + 3] != "--") {
    return std::string::npos;
  }
  return at + 4;
}

bool VisibleInSandbox(absl::string_view path, absl::string_view real_path,
                      absl::string_view project, const std::vector<ValidatedMount>& mounts,
                      const std::vector<RootEntry>& root_layout) {
  auto under_common = [&](absl::string_view p) {
    if (IsInside(p, "/usr") || IsInside(p, project)) return true;
    for (const std::string& file : SandboxEtcFiles()) {
      if (IsInside(p, file)) return true;
    }
    return false;
  };
  bool seen = under_common(path);
  for (const RootEntry& entry : root_layout) seen = seen || IsInside(path, entry.path);
  for (const ValidatedMount& mount : mounts) seen = seen || IsInside(path, mount.target);
  if (!seen) return false;
  if (under_common(real_path)) return true;
  for (const RootEntry& entry : root_layout) {
    if (entry.link_target.empty() && IsInside(real_path, entry.path)) return true;
  }
  for (const ValidatedMount& mount : mounts) {
    if (IsInside(real_path, mount.source)) return true;
  }
  return false;
}

}  // namespace np
