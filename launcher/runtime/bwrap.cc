// The bubblewrap runtime: no daemon and no image. bubblewrap runs as
// np-exec's supervised child with an environment np-exec built by name, so no
// value ever enters an argv; it reports on --info-fd once its namespaces are
// set up (the run path's proof that the sandbox came up), and it forwards no
// signal, so forwarded signals are handed to the program inside
// (sandbox_signals.h).
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "core/bwrap_argv.h"
#include "core/errors.h"
#include "launcher/environment.h"
#include "launcher/runtime/argv_handoff.h"
#include "launcher/runtime/bwrap_data.h"
#include "launcher/runtime/bwrap_etc_view.h"
#include "launcher/runtime/bwrap_probe_cache.h"
#include "launcher/runtime/bwrap_seccomp.h"
#include "launcher/runtime/driver.h"
#include "launcher/runtime/sandbox_signals.h"
#include "launcher/state/state_store.h"
#include "launcher/subprocess.h"

namespace np {
namespace {

constexpr int kCommandTimeoutMs = 10000;

// The no-op sandbox the full probe builds.
std::vector<std::string> ProbeArgs(const std::string& bin) {
  return {bin,
          "--unshare-user",
          "--unshare-pid",
          "--unshare-net",
          "--unshare-ipc",
          "--unshare-uts",
          "--die-with-parent",
          "--cap-drop",
          "ALL",
          "--ro-bind",
          "/usr",
          "/usr",
          "--symlink",
          "usr/bin",
          "/bin",
          "--symlink",
          "usr/lib",
          "/lib",
          "--symlink",
          "usr/lib64",
          "/lib64",
          "--proc",
          "/proc",
          "--dev",
          "/dev",
          "--remount-ro",
          "/",
          "--",
          "/usr/bin/true"};
}

// The prepared /etc in the operator's state store (bwrap_etc_view.h); "" when
// it cannot be had, and then core binds the files one by one, which makes the
// same sandbox.
std::string EtcView(const HostFacts& host) {
  absl::StatusOr<StateStore> store = OpenStateStore(host);
  if (!store.ok()) return "";
  absl::StatusOr<std::string> view = PrepareEtcView(store->dir(), host.uid, kBwrapMadeDirMode);
  return view.ok() ? *view : "";
}

// The descriptors one bubblewrap run hands in (--info-fd's write end, the
// seccomp filter, the handed-off argv) and keeps (--info-fd's read end),
// closed however the run ends.
struct RunDescriptors {
  RunDescriptors() = default;
  RunDescriptors(const RunDescriptors&) = delete;
  RunDescriptors& operator=(const RunDescriptors&) = delete;
  ~RunDescriptors() {
    CloseSandboxEnds();
    if (info_read >= 0) close(info_read);
  }
  // What only bubblewrap needed: closed once it has exited.
  void CloseSandboxEnds() {
    for (int* fd : {&handed, &seccomp, &info_write}) {
      if (*fd >= 0) close(*fd);
      *fd = -1;
    }
  }
  int info_read = -1;
  int info_write = -1;
  int seccomp = -1;
  int handed = -1;
};

// bubblewrap's supervised run of `plan`: the seccomp filter, the argv past
// its argument limit handed off, --info-fd and --sync-fd, the environment,
// and every descriptor it must inherit.
absl::StatusOr<SuperviseRequest> BwrapRequest(const SpawnPlan& plan, const HostFacts& host,
                                              const std::vector<Companion>& companions,
                                              RunDescriptors& fds) {
  int info[2];
  if (pipe2(info, O_CLOEXEC | O_NONBLOCK) != 0) {
    return MakeError(absl::StatusCode::kInternal, "spawn-failed",
                     absl::StrCat("pipe: ", strerror(errno)));
  }
  fds.info_read = info[0];
  fds.info_write = info[1];
  absl::StatusOr<int> seccomp = BuildSeccompFilterFd();
  if (!seccomp.ok()) return seccomp.status();
  fds.seccomp = *seccomp;
  SuperviseRequest request;
  request.companions = companions;
  request.grace_ms = host.grace_ms;
  request.bin = plan.exec_path;
  request.argv = plan.argv;
  absl::Status data = UseDataFiles(request.argv, plan.data_files, request.keep_fds);
  if (!data.ok()) return data;
  absl::Status filtered = AddSeccompArg(request.argv, fds.seccomp);
  if (!filtered.ok()) return filtered;
  absl::StatusOr<int> handed = HandOffArgv(request.argv);
  if (!handed.ok()) return handed.status();
  fds.handed = *handed;
  request.argv.insert(request.argv.begin() + 1, {"--info-fd", absl::StrCat(fds.info_write)});
  if (plan.sandbox_sync_fd >= 0) {
    // bubblewrap's init holds it, the program never gets it: its end tells
    // the watchdog the sandbox is gone.
    request.argv.insert(request.argv.begin() + 3,
                        {"--sync-fd", absl::StrCat(plan.sandbox_sync_fd)});
  }
  request.env = BuildEnvironment(plan.env, host.envp);
  request.keep_fds.insert(request.keep_fds.end(), {fds.info_write, fds.seccomp});
  if (plan.sandbox_sync_fd >= 0) request.keep_fds.push_back(plan.sandbox_sync_fd);
  // The pinned mount sources (--bind-fd); bubblewrap closes them once bound.
  request.keep_fds.insert(request.keep_fds.end(), plan.bind_fds.begin(), plan.bind_fds.end());
  if (fds.handed >= 0) request.keep_fds.push_back(fds.handed);
  request.parent_death_signal = SIGKILL;
  request.own_process_group = true;
  return request;
}

class BwrapDriverImpl : public RuntimeDriver {
 public:
  Endpoint Resolve(const HostFacts& host) const override {
    Endpoint endpoint;
    ResolveTrustedBinary("bwrap", host, endpoint);
    return endpoint;
  }

  ProbeResult Probe(const HostFacts& host, const Endpoint& endpoint,
                    ProbeDepth depth) const override {
    if (endpoint.bin.empty()) return ProbeMissingBinary(Runtime::kBwrap, endpoint);
    // The run path's own sandbox proves the namespaces can be created (its
    // --info-fd report), so it does not pay for a second, no-op sandbox.
    if (depth == ProbeDepth::kForRun)
      return ProbeAvailable(Runtime::kBwrap, endpoint.bin, "unknown");
    const std::string key = BwrapProbeKey(endpoint.bin, host.uid);
    if (depth == ProbeDepth::kForPlan) {
      std::optional<std::string> cached = CachedBwrapProbe(host, key);
      if (cached.has_value()) return ProbeAvailable(Runtime::kBwrap, endpoint.bin, *cached);
    }
    absl::StatusOr<CaptureResult> sandbox =
        RunAndCapture(ProbeArgs(endpoint.bin), host.envp, kCommandTimeoutMs);
    if (!sandbox.ok() || sandbox->exit_code != 0) {
      return ProbeUnavailable(Runtime::kBwrap, kReasonUnreachable,
                              sandbox.ok() ? absl::StrCat("bubblewrap cannot create its namespaces "
                                                          "here (no-op sandbox exited ",
                                                          sandbox->exit_code, ")")
                                           : std::string(sandbox.status().message()),
                              endpoint.bin);
    }
    std::string version = "unknown";
    absl::StatusOr<CaptureResult> v =
        RunAndCapture({endpoint.bin, "--version"}, host.envp, kCommandTimeoutMs);
    if (v.ok() && v->exit_code == 0) {
      version = std::string(absl::StripAsciiWhitespace(v->out));
      if (version.rfind("bubblewrap ", 0) == 0) version = version.substr(11);
    }
    RememberBwrapProbe(host, key, version);
    return ProbeAvailable(Runtime::kBwrap, endpoint.bin, version);
  }

  void AddSpawnFacts(const HostFacts& host, const Endpoint& /*endpoint*/,
                     SpawnFacts& facts) const override {
    facts.root_layout = ReadHostRootLayout();
    facts.etc_view = EtcView(host);
  }

  std::vector<std::string> EngineStatePaths(const Endpoint& /*endpoint*/) const override {
    return {};
  }

  absl::StatusOr<RunOutcome> Run(const SpawnPlan& plan, const Endpoint& /*endpoint*/,
                                 const HostFacts& host,
                                 const std::vector<Companion>& companions) const override {
    RunDescriptors fds;
    absl::StatusOr<SuperviseRequest> request = BwrapRequest(plan, host, companions, fds);
    if (!request.ok()) return request.status();
    // What bubblewrap wrote to --info-fd so far: {"child-pid": N} once the
    // sandbox is set up. Read when a signal is to be handed to the program.
    std::string info_text;
    auto read_info = [&info_text, fd = fds.info_read] {
      char buffer[512];
      ssize_t n;
      while ((n = read(fd, buffer, sizeof(buffer))) > 0) {
        info_text.append(buffer, static_cast<size_t>(n));
      }
    };
    request->forward = [&info_text, &read_info](pid_t bwrap, int sig, bool /*from_terminal*/) {
      read_info();
      SignalSandbox(bwrap, info_text, sig);
    };
    RunOutcome outcome;
    outcome.result = Supervise(*request);
    fds.CloseSandboxEnds();
    read_info();
    if (outcome.result.start_errno != 0) {
      return RuntimeNotExecutable(plan.exec_path, outcome.result.start_errno);
    }
    if (info_text.empty()) {
      return MakeError(absl::StatusCode::kUnavailable, "isolation-container-unavailable",
                       absl::StrCat("bubblewrap could not set up the sandbox (it exited ",
                                    outcome.result.exit_code,
                                    " before reporting it ready); the program did not run, and "
                                    "np-exec does not fall back"),
                       {{"bin", plan.exec_path}, {"exit_code", outcome.result.exit_code}});
    }
    return outcome;
  }

  // Each `--ro-bind SOURCE TARGET` of a placeholder becomes `--ro-bind-fd`
  // of its pinned descriptor.
  absl::Status PinPrintedPlaceholders(const std::vector<ProtectedBind>& binds,
                                      const std::string& project_real,
                                      const std::string& project_mount, SourcePins& pins,
                                      std::vector<std::string>& argv,
                                      std::vector<int>& bind_fds) const override {
    const auto options_end = std::find(argv.begin(), argv.end(), "--");
    return ForEachPinnedPlaceholder(
        binds, project_real, project_mount, pins,
        [&](const std::string& source, const std::string& target, const SourcePin& pin) {
          if (pin.fd < 0) return PrintedArgvLacks("descriptor for a placeholder");
          auto at = argv.begin();
          for (; at + 2 < options_end; ++at) {
            if (*at == "--ro-bind" && *(at + 1) == source && *(at + 2) == target) break;
          }
          if (at + 2 >= options_end) return PrintedArgvLacks(absl::StrCat("bind of ", source));
          *at = "--ro-bind-fd";
          *(at + 1) = absl::StrCat(pin.fd);
          bind_fds.push_back(pin.fd);
          return absl::OkStatus();
        });
  }

  std::optional<bool> ImagePresent(const std::string& /*image*/, const Endpoint& /*endpoint*/,
                                   const HostFacts& /*host*/) const override {
    return std::nullopt;
  }

  void Cleanup(const Endpoint& /*endpoint*/, const std::string& /*name*/,
               const std::vector<std::string>& /*secrets*/,
               const HostFacts& /*host*/) const override {
    // --die-with-parent: nothing of a sandbox outlives bubblewrap.
  }
};

}  // namespace

const RuntimeDriver& BwrapDriver() {
  static const BwrapDriverImpl* driver = new BwrapDriverImpl();
  return *driver;
}

}  // namespace np
