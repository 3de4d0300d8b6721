#include "launcher/run.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/bwrap_argv.h"
#include "core/config_file.h"
#include "core/errors.h"
#include "core/mounts.h"
#include "core/paths.h"
#include "core/plan.h"
#include "launcher/audit_log.h"
#include "launcher/protected_placeholders.h"
#include "launcher/container_facts.h"
#include "launcher/engine_api.h"
#include "launcher/exec.h"
#include "launcher/output.h"
#include "launcher/probe.h"
#include "launcher/reaper.h"
#include "launcher/sandbox_signals.h"
#include "launcher/subprocess.h"
#include "launcher/supervise.h"
#include "shim/find_real_program.h"

namespace np {
namespace {

int Fail(const absl::Status& status, const HostFacts& host) {
  WriteError(status, host.stderr_tty);
  return RunPathExitCode(status);
}

absl::Status Recursion(absl::string_view why) {
  return MakeError(absl::StatusCode::kFailedPrecondition, "recursive-invocation",
                   absl::StrCat("recursive invocation of np-exec refused: ", why));
}

// What every audit line says of the spawn, tier or no tier.
nlohmann::json SpawnRecord(const HostFacts& host, const std::vector<std::string>& program) {
  return {
      {"pid", host.pid},
      {"program", program.front()},
      {"argv_digest", ArgvDigest(program)},
      {"cwd", host.cwd},
  };
}

nlohmann::json BaseRecord(const HostFacts& host, const Settings& settings,
                          const std::vector<std::string>& program) {
  nlohmann::json record = SpawnRecord(host, program);
  record["tier"] = TierName(settings.resolved.tier);
  record["effective_from"] = TierSourceName(settings.resolved.from);
  if (settings.resolved.tier == Tier::kContainer) {
    record["runtime"] = RuntimeName(settings.config.container.runtime);
    if (settings.config.container.runtime != Runtime::kBwrap) {
      record["image"] = settings.config.container.image;
    }
  }
  return record;
}

// Appends to the audit log of `project_root` (none: nothing); a failure is
// reported on stderr and the spawn goes on.
void AuditIn(const std::string& project_root, const HostFacts& host, nlohmann::json record) {
  if (project_root.empty()) return;
  absl::Status logged = AppendAudit(project_root, std::move(record));
  if (!logged.ok()) WriteError(logged, host.stderr_tty);
}

void Audit(const HostFacts& host, const Settings& settings, nlohmann::json record) {
  AuditIn(settings.project_root, host, std::move(record));
}

int Refuse(const absl::Status& status, const HostFacts& host, const Settings& settings,
           const std::vector<std::string>& program) {
  nlohmann::json record = BaseRecord(host, settings, program);
  record["decision"] = "refused";
  record["code"] = ErrorCode(status);
  Audit(host, settings, std::move(record));
  return Fail(status, host);
}

// A refusal before the settings exist (a broken config or operator file, a
// recursion): logged in the project the working directory is in, if any.
int RefuseUnsettled(const absl::Status& status, const HostFacts& host,
                    const std::vector<std::string>& program) {
  absl::StatusOr<std::string> root =
      host.cwd.empty() ? absl::StatusOr<std::string>(absl::NotFoundError("no cwd"))
                       : FindProjectRoot(host.cwd);
  if (root.ok()) {
    nlohmann::json record = SpawnRecord(host, program);
    record["decision"] = "refused";
    record["code"] = ErrorCode(status);
    AuditIn(*root, host, std::move(record));
  }
  return Fail(status, host);
}

nlohmann::json MountsJson(const SpawnPlan& plan) {
  nlohmann::json mounts = nlohmann::json::array();
  mounts.push_back(
      {{"source", plan.project_mount}, {"target", plan.project_mount}, {"mode", "rw"}});
  for (const ValidatedMount& m : plan.mounts) {
    mounts.push_back(
        {{"source", m.source}, {"target", m.target}, {"mode", m.writable ? "rw" : "ro"}});
  }
  return mounts;
}

// The "run" line of a supervised container spawn, written before it starts;
// returned so the "exit" line repeats its fields.
nlohmann::json AuditRun(const HostFacts& host, const Settings& settings, const SpawnPlan& plan,
                        const std::vector<std::string>& program,
                        const std::string& container_name) {
  nlohmann::json record = BaseRecord(host, settings, program);
  record["decision"] = "run";
  if (!container_name.empty()) record["container"] = container_name;
  record["env"] = plan.env_names;
  record["mounts"] = MountsJson(plan);
  Audit(host, settings, record);
  return record;
}

// The "exit" line that follows it, with the status and the duration.
void AuditExit(const HostFacts& host, const Settings& settings, nlohmann::json record,
               const SuperviseResult& result) {
  record.erase("decision");
  record["event"] = "exit";
  record["exit_status"] = result.exit_code;
  record["duration_ms"] = result.duration_ms;
  Audit(host, settings, std::move(record));
}

// The runtime's binary was found by the probe but could not be executed.
absl::Status RuntimeNotExecutable(const std::string& bin, int err) {
  return MakeError(absl::StatusCode::kUnavailable, "isolation-container-unavailable",
                   absl::StrCat("cannot execute ", bin, ": ", strerror(err),
                                "; nothing ran, and np-exec does not fall back"),
                   {{"bin", bin}});
}

absl::Status ImageMissing(absl::string_view image, absl::string_view bin) {
  return MakeError(absl::StatusCode::kFailedPrecondition, "isolation-image-missing",
                   absl::StrCat("image \"", image,
                                "\" is not present locally and np-exec "
                                "does not pull unless asked. Get it with `",
                                bin, " pull ", image,
                                "` (or build or import it), or set "
                                "isolation.container.pull to \"missing\""),
                   {{"image", image}});
}

// Docker and podman: the runtime client stays np-exec's child.
int RunSupervised(const SpawnPlan& plan, const Settings& settings, const Endpoint& endpoint,
                  const HostFacts& host, const std::vector<std::string>& program,
                  const std::string& container_name) {
  const ContainerConfig& config = settings.config.container;
  if (endpoint.socket.has_value() && !config.pull_missing) {
    absl::StatusOr<HttpResponse> image = EngineRequest(
        *endpoint.socket, "GET", absl::StrCat("/images/", UrlEncode(config.image), "/json"));
    if (image.ok() && image->status == 404) {
      return Refuse(ImageMissing(config.image, RuntimeName(config.runtime)), host, settings,
                    program);
    }
  }
  nlohmann::json record = AuditRun(host, settings, plan, program, container_name);

  SuperviseRequest request;
  request.bin = endpoint.bin;
  request.argv = plan.argv;
  request.env = EditEnvironment(host.envp, {}, kInterposerVars);
  request.container_name = container_name;
  request.socket = endpoint.socket;
  request.tty = host.stdin_tty && host.stdout_tty;
  SuperviseResult result = Supervise(request);
  if (result.start_errno != 0) {
    return Refuse(RuntimeNotExecutable(endpoint.bin, result.start_errno), host, settings, program);
  }
  if (result.exit_code == 125 && !endpoint.socket.has_value() && !config.pull_missing) {
    // Without an API socket the image was not checked beforehand; 125 is the
    // runtime's own failure, and a missing image is the usual one.
    std::vector<char*> env = CStrings(request.env);
    absl::StatusOr<CaptureResult> inspect =
        RunAndCapture({endpoint.bin, "image", "inspect", config.image}, env.data(), 15000);
    if (inspect.ok() && inspect->exit_code != 0) {
      WriteError(ImageMissing(config.image, RuntimeName(config.runtime)), host.stderr_tty);
    }
  }
  AuditExit(host, settings, std::move(record), result);
  return result.exit_code;
}

// Bubblewrap: supervised like a runtime client, with an environment np-exec
// built, so no value ever enters an argv. bubblewrap writes to --info-fd once
// its namespaces and mounts are set up; a sandbox that never reports that
// never ran the program, and is refused like an unusable runtime.
int RunBwrap(const SpawnPlan& plan, const Settings& settings, const Endpoint& endpoint,
             const HostFacts& host, const std::vector<std::string>& program) {
  // bubblewrap reports a missing program as 1; the sandbox sees the host's
  // /usr and the project at the same paths, so the host answers for it.
  absl::StatusOr<std::string> found =
      FindRealProgram(program.front(), kSandboxPath, host.cwd, FileId{}, StatFile);
  if (!found.ok()) return Refuse(found.status(), host, settings, program);
  // ... as long as the host's file is one the sandbox shows (the working
  // directory is the same path inside).
  std::string inside =
      absl::StartsWith(*found, "/") ? *found : NormalizePath(JoinPath(host.cwd, *found));
  if (HasDotDot(inside)) {
    // ".." is resolved by the kernel after links: take the directory's real path.
    const size_t slash = inside.rfind('/');
    char dir[PATH_MAX];
    if (realpath(slash == 0 ? "/" : inside.substr(0, slash).c_str(), dir) != nullptr) {
      inside = JoinPath(dir, inside.substr(slash + 1));
    }
  }
  absl::StatusOr<std::string> real = ResolveRealPath(inside, "program-not-found");
  if (!real.ok() ||
      !VisibleInSandbox(inside, *real, plan.project_real, plan.mounts, plan.root_layout)) {
    return Refuse(MakeError(absl::StatusCode::kNotFound, "program-not-found",
                            absl::StrCat(inside, " exists on the host but not inside the sandbox, "
                                                 "which shows only /usr, the project and the "
                                                 "configured mounts"),
                            {{"program", program.front()}, {"path", inside}}),
                  host, settings, program);
  }
  int info[2];
  if (pipe2(info, O_CLOEXEC | O_NONBLOCK) != 0) {
    return Fail(MakeError(absl::StatusCode::kInternal, "spawn-failed",
                          absl::StrCat("pipe: ", strerror(errno))),
                host);
  }
  nlohmann::json record = AuditRun(host, settings, plan, program, "");

  SuperviseRequest request;
  request.bin = endpoint.bin;
  request.argv = plan.argv;
  request.argv.insert(request.argv.begin() + 1, {"--info-fd", absl::StrCat(info[1])});
  request.env = BwrapBaseEnvironment(host.term);
  for (const std::string& var : plan.env_names) {
    // The interposer's variables never reach a sandbox, forwarded or not, as
    // they never reach a runtime client (RunSupervised).
    if (std::find(kInterposerVars.begin(), kInterposerVars.end(), var) != kInterposerVars.end()) {
      continue;
    }
    absl::string_view value = GetEnv(host.envp, var);
    // Unset stays unset inside, as with docker's -e NAME.
    if (value.data() != nullptr) request.env.push_back(absl::StrCat(var, "=", value));
  }
  request.keep_fd = info[1];
  request.parent_death_signal = SIGKILL;
  request.own_process_group = true;
  // What bubblewrap wrote to --info-fd so far: {"child-pid": N} once the
  // sandbox is set up. Read when a signal is to be handed to the program.
  std::string info_text;
  auto read_info = [&info_text, fd = info[0]] {
    char buffer[512];
    ssize_t n;
    while ((n = read(fd, buffer, sizeof(buffer))) > 0) {
      info_text.append(buffer, static_cast<size_t>(n));
    }
  };
  request.forward = [&info_text, &read_info](pid_t bwrap, int sig) {
    read_info();
    SignalSandbox(bwrap, info_text, sig);
  };
  SuperviseResult result = Supervise(request);
  close(info[1]);
  read_info();
  const bool set_up = !info_text.empty();
  close(info[0]);
  if (result.start_errno != 0) {
    return Refuse(RuntimeNotExecutable(endpoint.bin, result.start_errno), host, settings, program);
  }
  if (!set_up) {
    return Refuse(
        MakeError(
            absl::StatusCode::kUnavailable, "isolation-container-unavailable",
            absl::StrCat("bubblewrap could not set up the sandbox (it exited ", result.exit_code,
                         " before reporting it ready); the program did not run, and "
                         "np-exec does not fall back"),
            {{"bin", endpoint.bin}, {"exit_code", result.exit_code}}),
        host, settings, program);
  }
  AuditExit(host, settings, std::move(record), result);
  return result.exit_code;
}

// NP_EXEC_PRELOAD_NAMES for the program's descendants: what the interposer
// wraps now (default node) plus the project's isolation.interpose names.
std::string InterposeNames(const HostFacts& host, const std::vector<std::string>& extra) {
  absl::string_view current = GetEnv(host.envp, kPreloadNamesVar);
  std::vector<std::string> names =
      absl::StrSplit(current.empty() ? absl::string_view("node") : current, ',', absl::SkipEmpty());
  for (const std::string& name : extra) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return absl::StrCat(kPreloadNamesVar, "=", absl::StrJoin(names, ","));
}

}  // namespace

int RunPathExitCode(const absl::Status& status) {
  const std::string code = ErrorCode(status);
  if (code == "program-not-found") return 127;
  if (code == "program-not-executable") return 126;
  if (code == "isolation-container-unavailable" || code == "isolation-probe-required") return 69;
  return 125;
}

int RunProgram(const CommandLine& cl, const HostFacts& host) {
  // 1. Recursion: np-exec exec'd straight into np-exec (same pid), or a chain
  //    of wrappers that keeps re-entering.
  // Only when the very file np-exec exec'd in place is this binary: a
  // shebang or `exec` chain in between (env, sh) is a legitimate spawn.
  if (host.exec_pid == host.pid && !host.exec_target.empty() &&
      StatFile(host.exec_target).id == host.self) {
    return RefuseUnsettled(
        Recursion(absl::StrCat("\"", cl.program.front(), "\" resolved to another copy of np-exec")),
        host, cl.program);
  }
  if (host.depth >= kMaxDepth) {
    return RefuseUnsettled(Recursion(absl::StrCat(kDepthVar, " is ", host.depth, "; the limit is ",
                                                  kMaxDepth, " nested invocations")),
                           host, cl.program);
  }
  if (host.cwd.empty()) {
    return Fail(MakeError(absl::StatusCode::kFailedPrecondition, "invalid-path",
                          "cannot read the working directory"),
                host);
  }
  // 2. A bare word that is neither a verb nor a program on PATH is most
  //    likely a mistyped verb.
  std::string resolved;
  const bool bare_word = !cl.shim_mode && !cl.script_mode && !cl.explicit_program &&
                         cl.program.front().find('/') == std::string::npos;
  absl::StatusOr<std::string> lookup =
      FindRealProgram(cl.program.front(), host.path, host.cwd, host.self, StatFile);
  if (bare_word && !lookup.ok() && HasErrorCode(lookup.status(), "program-not-found")) {
    WriteError(MakeError(absl::StatusCode::kInvalidArgument, "isolation-unknown-verb",
                         absl::StrCat("\"", cl.program.front(),
                                      "\" is neither a verb nor a program on PATH. Verbs: "
                                      "status, describe, probe, wrap, doctor, shims. To run a "
                                      "program that exists only inside the container, write "
                                      "np-exec -- PROGRAM"),
                         {{"verb", cl.program.front()},
                          {"verbs", {"status", "describe", "probe", "wrap", "doctor", "shims"}}}),
               host.stderr_tty);
    return 1;
  }

  // 3. Settings and the effective tier.
  absl::StatusOr<Settings> settings =
      LoadSettings({host.cwd, OperatorConfigPath(host), host.env_tier, true});
  if (!settings.ok()) return RefuseUnsettled(settings.status(), host, cl.program);
  const ContainerConfig& config = settings->config.container;
  const bool container = settings->resolved.tier == Tier::kContainer;

  // 4. Probe (container only): the gate in core refuses without it.
  Endpoint endpoint;
  ProbeResult probe;
  SpawnFacts facts;
  facts.cwd = host.cwd;
  if (container) {
    endpoint = ResolveEndpoint(config.runtime, host);
    probe = ProbeRuntime(config.runtime, host, /*for_run_path=*/true);
    facts = ContainerFacts(host, host.cwd, config.runtime, endpoint, "np-exec",
                           OwnerLabelValue(host.pid, ProcessStartTime(host.pid)));
  }

  // 5. Plan: exactly one of exec-in-place or a runtime argv.
  absl::StatusOr<SpawnPlan> plan =
      PlanSpawn(*settings, container ? &probe : nullptr, facts, cl.program, cl.env_names);
  if (!plan.ok()) return Refuse(plan.status(), host, *settings, cl.program);

  // 6. Carry it out.
  if (container) {
    // Missing protected paths get placeholders for exactly this spawn; the
    // destructor removes them after the runtime exits (issue 14).
    absl::StatusOr<ProtectedPlaceholders> placeholders = CreatePlaceholdersForSpawn(
        GetEnv(host.envp, "XDG_STATE_HOME"), host.home, host.uid, plan->project_real,
        plan->protected_binds);
    if (!placeholders.ok()) return Refuse(placeholders.status(), host, *settings, cl.program);
    if (config.runtime == Runtime::kBwrap) {
      return RunBwrap(*plan, *settings, endpoint, host, cl.program);
    }
    return RunSupervised(*plan, *settings, endpoint, host, cl.program, facts.container_name);
  }
  if (!lookup.ok()) return Refuse(lookup.status(), host, *settings, cl.program);
  resolved = *std::move(lookup);
  nlohmann::json record = BaseRecord(host, *settings, cl.program);
  record["decision"] = "run";
  record["path"] = resolved;
  // On these tiers the program inherits the whole environment; the names
  // configured or asked for with --env are recorded as given.
  record["env"] = plan->env_names;
  Audit(host, *settings, std::move(record));
  std::vector<std::string> set = {absl::StrCat(kDepthVar, "=", host.depth + 1),
                                  absl::StrCat(kExecPidVar, "=", host.pid),
                                  absl::StrCat(kExecTargetVar, "=", resolved)};
  if (!settings->config.interpose.empty()) {
    set.push_back(InterposeNames(host, settings->config.interpose));
  }
  std::vector<std::string> env = EditEnvironment(host.envp, set, {});
  return Fail(ExecInPlace(resolved, plan->argv, env), host);
}

}  // namespace np
