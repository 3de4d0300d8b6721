#include "core/bwrap_argv.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/bwrap_targets.h"
#include "core/credentials.h"
#include "core/egress_entry.h"
#include "core/errors.h"
#include "core/git_identity.h"
#include "core/mount_pins.h"
#include "core/paths.h"
#include "core/warm.h"

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

// One bubblewrap argv in the making: the inputs, what the checks derived,
// and the arguments so far. Each step below reads and extends it.
struct BwrapBuild {
  BwrapBuild(const ContainerConfig& c, const std::vector<ValidatedMount>& m,
             const ContainerSpawn& s, const std::vector<RootEntry>& r)
      : config(c), mounts(m), spawn(s), root_layout(r) {}
  const ContainerConfig& config;
  const std::vector<ValidatedMount>& mounts;
  const ContainerSpawn& spawn;
  const std::vector<RootEntry>& root_layout;
  SandboxInputs inputs;
  std::string project_target;
  bool self_bound = false;  // np-exec's own binary is bound at kEgressSelfTarget.
  bool etc_view = false;
  bool egress = false;
  // The extra mounts, less what the sandbox's own binds already show.
  std::vector<ValidatedMount> binds;
  // The pinned binds a printed plan's entry point checks inside.
  std::vector<MountExpectation> expected;
  std::vector<std::string> argv;
  // What runs inside: entry points, then the program.
  std::vector<std::string> command;
};

// bubblewrap cannot deliver these settings: refused, never dropped.
absl::Status CheckBwrapSupports(BwrapBuild& b) {
  const ContainerConfig& config = b.config;
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
  return absl::OkStatus();
}

absl::Status CheckBwrapInputs(BwrapBuild& b) {
  absl::StatusOr<SandboxInputs> inputs = CheckSandboxInputs(b.config, b.spawn);
  if (!inputs.ok()) return inputs.status();
  b.inputs = *std::move(inputs);
  // bwrap takes each path as its own argument, so only a NUL byte (which would
  // cut it short at exec) or a relative path can make it mean something else.
  for (const ValidatedMount& mount : b.mounts) {
    absl::Status source_ok = CheckAbsolutePath(mount.source, "isolation-mount-bad-source");
    if (!source_ok.ok()) return source_ok;
    absl::Status target_ok = CheckAbsolutePath(mount.target, "isolation-mount-bad-target");
    if (!target_ok.ok()) return target_ok;
  }
  b.project_target = ProjectTarget(b.config, b.spawn);
  b.egress = b.config.network == Network::kAllowlist;
  return absl::OkStatus();
}

// One bind of the prepared /etc, unless a mount goes below /etc: bubblewrap
// would make its mount point inside the prepared copy. Nor when the copy lies
// where the program can write (a state store inside the project or a writable
// mount): another sandbox would bind what this one wrote.
absl::Status DecideEtcView(BwrapBuild& b) {
  b.etc_view = !b.spawn.etc_view.empty() && !IsInside(b.spawn.etc_view, b.spawn.project_root);
  for (const ValidatedMount& mount : b.mounts) {
    b.etc_view = b.etc_view && !IsInside(mount.target, "/etc") &&
                 !(mount.writable && IsInside(b.spawn.etc_view, mount.source));
  }
  if (!b.etc_view) return absl::OkStatus();
  return CheckAbsolutePath(b.spawn.etc_view, "isolation-mount-bad-source");
}

// The binds every sandbox starts from: /usr, the project, the root's directories.
std::vector<SandboxBind> BaseBinds(const BwrapBuild& b) {
  std::vector<SandboxBind> base = {{"/usr", "/usr"}, {b.spawn.project_root, b.project_target}};
  for (const RootEntry& entry : b.root_layout) {
    if (entry.link_target.empty()) base.push_back({entry.path, entry.path});
  }
  return base;
}

// The extra mounts, less what the sandbox's other binds already show
// (bwrap_targets.h).
absl::Status CoalesceExtraMounts(BwrapBuild& b) {
  std::vector<SandboxBind> fixed = BaseBinds(b);
  for (const char* target : {"/proc", "/dev", "/tmp"}) fixed.push_back({"", target});
  fixed.push_back({"", std::string(kContainerHome)});
  if (b.etc_view) {
    fixed.push_back({b.spawn.etc_view, "/etc"});
  } else {
    for (const std::string& file : SandboxEtcFiles()) fixed.push_back({file, file});
  }
  for (const ProtectedMount& bind : b.inputs.protected_mounts) {
    fixed.push_back({bind.source, bind.target});
  }
  if (b.egress || !b.spawn.warm_dir.empty()) fixed.push_back({"", "/run/np-exec"});
  if (!b.spawn.gitconfig_file.empty()) {
    fixed.push_back({b.spawn.gitconfig_file, std::string(kGitConfigTarget)});
  }
  b.binds = CoalesceBwrapMounts(b.mounts, fixed);
  return absl::OkStatus();
}

// No mount target through a host-visible link (core/bwrap_targets.h).
// bubblewrap mounts in argv order: each target is made under the binds
// before it.
absl::Status CheckNoLinkOnTheWay(BwrapBuild& b) {
  std::vector<SandboxBind> seen = BaseBinds(b);
  for (const ValidatedMount& mount : b.binds) {
    absl::Status no_link = CheckMountTargetHasNoLink(mount.target, seen);
    if (!no_link.ok()) return no_link;
    seen.push_back({mount.source, mount.target});
  }
  return absl::OkStatus();
}

absl::Status AddNamespacesAndRoot(BwrapBuild& b) {
  b.argv = {"bwrap",
            "--unshare-user",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL"};
  // A keeper is the sandbox's PID 1 itself (core/warm.h): every process of a
  // spawn is its descendant, and none can signal it.
  if (!b.spawn.warm_dir.empty()) b.argv.insert(b.argv.begin() + 3, "--as-pid-1");
  if (b.config.network != Network::kHost) b.argv.emplace_back("--unshare-net");
  b.argv.insert(b.argv.end(), {"--ro-bind", "/usr", "/usr"});
  for (const RootEntry& entry : b.root_layout) {
    if (entry.link_target.empty()) {
      b.argv.insert(b.argv.end(), {"--ro-bind", entry.path, entry.path});
    } else {
      b.argv.insert(b.argv.end(), {"--symlink", entry.link_target, entry.path});
    }
  }
  return absl::OkStatus();
}

// /etc, with the caller's account (core/passwd_view.h) and git identity in
// place of the host's files.
absl::Status AddEtcAndAccount(BwrapBuild& b) {
  const ContainerSpawn& spawn = b.spawn;
  for (const std::string* view : {&spawn.passwd_file, &spawn.group_file, &spawn.gitconfig_file}) {
    if (view->empty()) continue;
    absl::Status absolute = CheckAbsolutePath(*view, "isolation-mount-bad-source");
    if (!absolute.ok()) return absolute;
  }
  if (b.etc_view) {
    b.argv.insert(b.argv.end(), {"--ro-bind", spawn.etc_view, "/etc"});
  } else {
    for (const std::string& file : SandboxEtcFiles()) {
      const bool replaced = (file == "/etc/passwd" && !spawn.passwd_file.empty()) ||
                            (file == "/etc/group" && !spawn.group_file.empty());
      if (!replaced) b.argv.insert(b.argv.end(), {"--ro-bind-try", file, file});
    }
  }
  if (!spawn.passwd_file.empty()) {
    b.argv.insert(b.argv.end(), {"--ro-bind", spawn.passwd_file, "/etc/passwd"});
  }
  if (!spawn.group_file.empty()) {
    b.argv.insert(b.argv.end(), {"--ro-bind", spawn.group_file, "/etc/group"});
  }
  if (!spawn.gitconfig_file.empty()) {
    b.argv.insert(b.argv.end(),
                  {"--ro-bind", spawn.gitconfig_file, std::string(kGitConfigTarget), "--setenv",
                   std::string(kGitConfigVar), std::string(kGitConfigTarget)});
  }
  return absl::OkStatus();
}

absl::Status AddScratchAndHome(BwrapBuild& b) {
  b.argv.insert(b.argv.end(), {"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"});
  // A kept sandbox's IPC namespace outlives a spawn: its POSIX message queues
  // are listed, and removed between spawns, through an mqueue mount of its
  // own, as an engine's /dev/mqueue is.
  if (!b.spawn.warm_dir.empty()) b.argv.insert(b.argv.end(), {"--mqueue", "/dev/mqueue"});
  if (b.spawn.home_source.empty()) {
    b.argv.insert(b.argv.end(), {"--tmpfs", std::string(kContainerHome)});
    return absl::OkStatus();
  }
  absl::Status absolute = CheckAbsolutePath(b.spawn.home_source, "isolation-mount-bad-source");
  if (!absolute.ok()) return absolute;
  b.argv.insert(b.argv.end(), {"--bind", b.spawn.home_source, std::string(kContainerHome)});
  return absl::OkStatus();
}

// One bind of a path a sandboxed program could swap, pinned (mount_pins.h):
// bound from the descriptor the launcher opened, or, in a printed plan,
// which carries none, checked inside by the entry point. np-exec's own files
// (the /etc view, the account view, the persistent home, the egress
// endpoint: in its private state) go by path, and so do placeholders unless
// the run path made them before this argv (ContainerSpawn::placeholders_made;
// a printed plan's are made and pinned by sandbox-exec).
absl::Status AddPinnedBind(BwrapBuild& b, const std::string& source, absl::string_view target,
                           bool writable, bool placeholder = false) {
  if (b.spawn.pin && (!placeholder || b.spawn.placeholders_made)) {
    absl::StatusOr<SourcePin> pin = b.spawn.pin(source);
    if (!pin.ok()) return pin.status();
    if (pin->fd >= 0) {
      b.argv.insert(b.argv.end(), {writable ? "--bind-fd" : "--ro-bind-fd", absl::StrCat(pin->fd),
                                   std::string(target)});
      return absl::OkStatus();
    }
    b.expected.push_back({std::string(target), pin->dev, pin->ino});
  }
  b.argv.insert(b.argv.end(), {writable ? "--bind" : "--ro-bind", source, std::string(target)});
  return absl::OkStatus();
}

// bubblewrap mounts in argv order: the project, its writable parents
// (pinned as mount points), the read-only nodes on top, then the extra mounts.
absl::Status AddProjectAndMounts(BwrapBuild& b) {
  absl::Status bound = AddPinnedBind(b, b.spawn.project_root, b.project_target, true);
  if (!bound.ok()) return bound;
  for (const ProtectedMount& entry : b.inputs.protected_mounts) {
    bound = AddPinnedBind(b, entry.source, entry.target, entry.writable, entry.placeholder);
    if (!bound.ok()) return bound;
  }
  for (const ValidatedMount& mount : b.binds) {
    bound = AddPinnedBind(b, mount.source, mount.target, mount.writable);
    if (!bound.ok()) return bound;
  }
  // np-exec's value, not the caller's: their PATH as far as the sandbox shows it.
  if (!b.spawn.sandbox_path.empty()) {
    b.argv.insert(b.argv.end(), {"--setenv", "PATH", b.spawn.sandbox_path});
  }
  return absl::OkStatus();
}

// network "allowlist": the proxy's endpoint, np-exec as the entry point.
absl::Status AddEgress(BwrapBuild& b) {
  if (!b.egress) return absl::OkStatus();
  const ContainerSpawn& spawn = b.spawn;
  if (spawn.egress_socket.empty() || spawn.self_binary.empty()) return AllowlistNeedsNpExec();
  for (const std::string* path : {&spawn.egress_socket, &spawn.self_binary}) {
    absl::Status valid = CheckAbsolutePath(*path, "isolation-mount-bad-source");
    if (!valid.ok()) return valid;
  }
  b.argv.insert(b.argv.end(), {"--bind", spawn.egress_socket, std::string(kEgressSocketTarget),
                               "--ro-bind", spawn.self_binary, std::string(kEgressSelfTarget)});
  // The session CA's certificate and trust bundle, never its key.
  if (!spawn.credential_env.empty()) {
    for (const std::string* path : {&spawn.credential_ca, &spawn.credential_bundle}) {
      absl::Status valid = CheckAbsolutePath(*path, "isolation-mount-bad-source");
      if (!valid.ok()) return valid;
    }
    b.argv.insert(b.argv.end(),
                  {"--ro-bind", spawn.credential_ca, std::string(kCredentialCaTarget), "--ro-bind",
                   spawn.credential_bundle, std::string(kCredentialBundleTarget)});
  }
  // np-exec's constants and the credentials' placeholders, not the caller's values.
  std::vector<std::string> assignments = EgressProxyEnvironment();
  assignments.insert(assignments.end(), spawn.credential_env.begin(), spawn.credential_env.end());
  for (const std::string& assignment : assignments) {
    const size_t eq = assignment.find('=');
    b.argv.insert(b.argv.end(), {"--setenv", assignment.substr(0, eq), assignment.substr(eq + 1)});
  }
  b.command = EgressEntryPrefix();
  return absl::OkStatus();
}

// np-exec's own binary inside, bound once whichever entry point needs it.
absl::Status BindSelf(BwrapBuild& b, bool already_bound) {
  if (b.spawn.self_binary.empty()) return SelfBinaryMissing();
  absl::Status valid = CheckAbsolutePath(b.spawn.self_binary, "isolation-mount-bad-source");
  if (!valid.ok()) return valid;
  if (!already_bound) {
    b.argv.insert(b.argv.end(), {"--ro-bind", b.spawn.self_binary, std::string(kEgressSelfTarget)});
  }
  return absl::OkStatus();
}

// isolation.container.warm: the rendezvous directory, and np-exec's keeper as
// the command in place of the program (core/warm.h).
absl::Status AddKeeper(BwrapBuild& b) {
  if (b.spawn.warm_dir.empty()) return absl::OkStatus();
  absl::Status valid = CheckAbsolutePath(b.spawn.warm_dir, "isolation-mount-bad-source");
  if (!valid.ok()) return valid;
  absl::Status self = BindSelf(b, b.egress);
  if (!self.ok()) return self;
  b.self_bound = true;
  b.argv.insert(b.argv.end(), {"--ro-bind", b.spawn.warm_dir, std::string(kWarmTarget)});
  b.command = {std::string(kEgressSelfTarget), std::string(kKeeperVerb)};
  return absl::OkStatus();
}

// The pins a printed plan could not bind by descriptor, checked inside first.
absl::Status AddMountCheck(BwrapBuild& b) {
  if (b.expected.empty()) return absl::OkStatus();
  absl::Status self = BindSelf(b, b.egress || b.self_bound);
  if (!self.ok()) return self;
  const std::vector<std::string> check = MountCheckPrefix(b.expected);
  b.command.insert(b.command.begin(), check.begin(), check.end());
  return absl::OkStatus();
}

// Last the read-only root (its mount points become read-only while the
// mounts on top keep their modes), the working directory and the command.
// More arguments than bubblewrap takes go through a descriptor to np-exec's
// own entry point inside (kArgvEntryVerb).
absl::Status AddCommand(BwrapBuild& b) {
  const bool self_bound = b.egress || b.self_bound || !b.expected.empty();
  const bool keeper = !b.spawn.warm_dir.empty();
  // A keeper is handed each spawn's program and directory; it starts in the project.
  if (!keeper) b.command.insert(b.command.end(), b.spawn.program.begin(), b.spawn.program.end());
  const std::vector<std::string> tail = {"--remount-ro", "/", "--chdir",
                                         keeper ? b.project_target : b.inputs.workdir, "--"};
  if (b.argv.size() + tail.size() + b.command.size() + kBwrapLauncherArgs > kBwrapMaxArgs) {
    if (b.spawn.self_binary.empty()) return TooManyArguments(b.argv.size() + b.command.size());
    absl::Status self = BindSelf(b, self_bound);
    if (!self.ok()) return self;
    b.command.insert(b.command.begin(),
                     {std::string(kEgressSelfTarget), std::string(kArgvEntryVerb), "--"});
    // What bubblewrap itself then gets: the options, the entry point, the
    // verb and "--fd N".
    if (b.argv.size() + tail.size() + 4 + kBwrapLauncherArgs > kBwrapMaxArgs) {
      return TooManyArguments(b.argv.size());
    }
  }
  b.argv.insert(b.argv.end(), tail.begin(), tail.end());
  b.argv.insert(b.argv.end(), b.command.begin(), b.command.end());
  return absl::OkStatus();
}

using BwrapStep = absl::Status (*)(BwrapBuild&);

constexpr BwrapStep kBwrapSteps[] = {CheckBwrapSupports,  CheckBwrapInputs,    DecideEtcView,
                                     CoalesceExtraMounts, CheckNoLinkOnTheWay, AddNamespacesAndRoot,
                                     AddEtcAndAccount,    AddScratchAndHome,   AddProjectAndMounts,
                                     AddEgress,           AddKeeper,           AddMountCheck,
                                     AddCommand};

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
  absl::Status given = CheckProgramGiven(spawn);
  if (!given.ok()) return given;
  BwrapBuild build(config, mounts, spawn, root_layout);
  for (BwrapStep step : kBwrapSteps) {
    absl::Status done = step(build);
    if (!done.ok()) return done;
  }
  return std::move(build.argv);
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
