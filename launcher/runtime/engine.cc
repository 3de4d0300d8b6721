// The engine runtimes, docker and podman: a daemon (or podman's API service)
// answering the Docker Engine API, a client np-exec supervises, named and
// labelled containers that can outlive their client and are reaped.
#include <pwd.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/config_file.h"
#include "core/egress_entry.h"
#include "core/errors.h"
#include "core/image_ref.h"
#include "core/mount_pins.h"
#include "launcher/environment.h"
#include "launcher/exec.h"
#include "launcher/image_check.h"
#include "launcher/runtime/driver.h"
#include "launcher/runtime/engine_api.h"
#include "launcher/runtime/engine_locality.h"
#include "launcher/runtime/image_program.h"
#include "launcher/runtime/podman_secrets.h"
#include "launcher/runtime/reaper.h"
#include "launcher/runtime/trusted_binary.h"
#include "launcher/subprocess.h"

namespace np {
namespace {

constexpr int kCommandTimeoutMs = 10000;
constexpr int kInspectTimeoutMs = 15000;
// Debian's tini package; static, so it runs in any image.
constexpr char kStaticTini[] = "/usr/bin/tini-static";

// The engine version a Server header names: Docker's in every response
// ("Server: Docker/20.10.24+dfsg1 (linux)", the same string /version
// reports), podman's "Libpod/4.3.1 (linux)"; "" when the header is missing or
// names another product than `product` ("Docker/", "Libpod/").
std::string ServerVersion(absl::string_view headers, absl::string_view product) {
  for (absl::string_view line : absl::StrSplit(headers, "\r\n")) {
    if (!absl::StartsWithIgnoreCase(line, "server:")) continue;
    absl::string_view value = absl::StripAsciiWhitespace(line.substr(7));
    if (!absl::StartsWith(value, product)) return "";
    value.remove_prefix(product.size());
    return std::string(value.substr(0, value.find(' ')));
  }
  return "";
}

// Docker and podman differ in where their socket is and what their client's
// version command reports; the rest is one engine API.
struct Flavor {
  Runtime runtime;
  bool podman;
};

// What a refused connection to the engine's socket says about the fix.
absl::string_view SocketCause(const absl::Status& status) {
  const nlohmann::json details = ErrorDetails(status);
  const std::string reason =
      details.is_object() && details.contains("reason") && details["reason"].is_string()
          ? details["reason"].get<std::string>()
          : "";
  if (reason == "permission-denied") return kCausePermissionDenied;
  if (reason == "connection-refused" || reason == "socket-missing") return kCauseNoDaemon;
  return "";
}

// Whether rootless podman can map this user's ids: newuidmap and newgidmap
// installed, and a range for the user (by name or uid) in /etc/subuid and
// /etc/subgid.
bool HasSubordinateIds(const HostFacts& host) {
  struct stat st;
  if (stat("/usr/bin/newuidmap", &st) != 0 || stat("/usr/bin/newgidmap", &st) != 0) return false;
  std::string name;
  struct passwd entry;
  struct passwd* found = nullptr;
  char buffer[4096];
  if (getpwuid_r(host.uid, &entry, buffer, sizeof(buffer), &found) == 0 && found != nullptr) {
    name = found->pw_name;
  }
  for (const char* file : {"/etc/subuid", "/etc/subgid"}) {
    std::ifstream in(file);
    std::string line;
    bool listed = false;
    while (!listed && std::getline(in, line)) {
      const std::string owner = line.substr(0, line.find(':'));
      listed = (!name.empty() && owner == name) || owner == absl::StrCat(host.uid);
    }
    if (!listed) return false;
  }
  return true;
}

// The client's run: the plan's environment with a PATH of trusted
// directories only (what the client execs in turn, conmon, runc, crun,
// plugins, is looked up on it, as the client itself was); signals forwarded;
// orphans reaped once it started; the container removed however it ends.
SuperviseRequest ClientRequest(const SpawnPlan& plan, const Endpoint& endpoint,
                               const HostFacts& host, const std::vector<Companion>& companions) {
  SuperviseRequest request;
  request.companions = companions;
  request.grace_ms = host.grace_ms;
  request.bin = plan.exec_path;
  request.argv = plan.argv;
  request.env = BuildEnvironment(plan.env, host.envp);
  const std::string project = HostProjectRoot(host);
  for (std::string& entry : request.env) {
    if (absl::StartsWith(entry, "PATH=")) {
      entry = absl::StrCat("PATH=", TrustedPathList(entry.substr(5), project, LstatOwner));
    }
  }
  // The client reaches the engine np-exec checked, whatever a context or a
  // connection set since would say.
  request.env = PinClientEnvironment(std::move(request.env), endpoint);
  const bool tty = host.stdin_tty && host.stdout_tty;
  const std::optional<std::string> socket = endpoint.socket;
  const std::string name = plan.container_name;
  request.forward = [tty, socket, name](pid_t client, int sig, bool from_terminal) {
    if (!from_terminal) kill(client, sig);
    // Docker disables its signal proxy under -t, so there the signal goes
    // to the container through the API too.
    if (tty && socket.has_value()) {
      (void)EngineRequest(*socket, "POST",
                          absl::StrCat("/containers/", UrlEncode(name), "/kill?signal=", sig),
                          1000);
    }
  };
  // The reaper knows an owner by its pid on this host: never on an engine
  // other hosts' np-exec may share.
  if (socket.has_value() && endpoint.remote.empty()) {
    request.on_started = [socket] { (void)ReapOrphans(*socket); };
  }
  request.cleanup = [bin = plan.exec_path, client_env = request.env, socket, name] {
    ForceRemoveContainer(bin, client_env, socket, name);
  };
  return request;
}

// An engine on another host the operator did not accept: never asked.
bool Unasked(const Endpoint& endpoint) {
  return !endpoint.remote.empty() && !endpoint.remote_allowed;
}

// The run goes to the engine its plan was made for: this host's, or the
// accepted remote one the plan names (SpawnPlan::engine_remote).
absl::Status CheckPlannedEngine(const SpawnPlan& plan, const Endpoint& endpoint) {
  if (endpoint.remote.empty()) return absl::OkStatus();
  if (endpoint.remote_allowed && endpoint.remote == plan.engine_remote) return absl::OkStatus();
  return MakeError(absl::StatusCode::kFailedPrecondition, "isolation-engine-remote",
                   absl::StrCat("the client would run this spawn on ", endpoint.remote,
                                ", which its plan was not made for; nothing ran"),
                   {{"engine", endpoint.remote}});
}

// Where the client goes, and the pins that keep it there, as the endpoint.
void TakeLocation(EngineLocation location, Endpoint& endpoint) {
  endpoint.socket = std::move(location.socket);
  endpoint.remote = std::move(location.remote);
  endpoint.reach = location.reach;
  endpoint.client_set = std::move(location.client_set);
  endpoint.accepted_client_set = std::move(location.accepted_client_set);
  endpoint.client_unset = std::move(location.client_unset);
}

// One line of `image inspect --format "{{.Id}} {{json ...}}"`: the ID, which
// has no space, and the JSON after it (discarded when it does not parse; so
// no byte of the JSON can shift the split); nullopt without a space or with
// more than one line.
struct IdAndJson {
  std::string id;
  nlohmann::json value;
};
std::optional<IdAndJson> SplitIdAndJson(absl::string_view captured) {
  const absl::string_view out = absl::StripAsciiWhitespace(captured);
  const size_t space = out.find(' ');
  if (space == absl::string_view::npos || out.find('\n') != absl::string_view::npos) {
    return std::nullopt;
  }
  return IdAndJson{std::string(out.substr(0, space)),
                   nlohmann::json::parse(out.substr(space + 1), nullptr, false)};
}

// An image config's Volumes ({"/data": {}}, or null for none) as paths;
// nullopt for anything else.
std::optional<std::vector<std::string>> VolumePaths(const nlohmann::json& volumes) {
  std::vector<std::string> paths;
  if (volumes.is_null()) return paths;
  if (!volumes.is_object()) return std::nullopt;
  for (const auto& [path, unused] : volumes.items()) paths.push_back(path);
  return paths;
}

// Whether the check file np-exec wrote for a remote spawn is still the file
// at its name: the entry point, which removes it once the project is
// proven, never got to it.
bool NonceUnconsumed(const SpawnPlan& plan) {
  struct stat held;
  struct stat named;
  return plan.remote_nonce_fd >= 0 && !plan.remote_nonce_path.empty() &&
         fstat(plan.remote_nonce_fd, &held) == 0 && held.st_nlink > 0 &&
         lstat(plan.remote_nonce_path.c_str(), &named) == 0 && named.st_dev == held.st_dev &&
         named.st_ino == held.st_ino;
}

class EngineDriver : public RuntimeDriver {
 public:
  explicit EngineDriver(Flavor flavor) : flavor_(flavor) {}

  Endpoint Resolve(const HostFacts& host) const override {
    Endpoint endpoint;
    endpoint.timeout_ms = host.engine_timeout_ms;
    ResolveTrustedBinary(RuntimeName(flavor_.runtime), host, endpoint);
    if (!flavor_.podman) {
      TakeLocation(DockerLocation(host), endpoint);
      return endpoint;
    }
    const std::string fallback = host.uid == 0
                                     ? std::string("/run/podman/podman.sock")
                                     : absl::StrCat("/run/user/", host.uid, "/podman/podman.sock");
    TakeLocation(PodmanLocation(host, fallback), endpoint);
    struct stat st;
    // Podman needs no daemon: without its API service the socket simply is
    // not there, and the command answers instead.
    if (host.container_host.empty() && endpoint.socket.has_value() &&
        stat(endpoint.socket->c_str(), &st) != 0) {
      endpoint.socket.reset();
    }
    return endpoint;
  }

  ProbeResult Probe(const HostFacts& host, const Endpoint& endpoint,
                    ProbeDepth /*depth*/) const override {
    if (endpoint.bin.empty()) return ProbeMissingBinary(flavor_.runtime, endpoint);
    // An engine on another host is never asked anything (not even its
    // version) unless the operator accepts it: planning refuses it
    // (isolation-engine-remote). An accepted one is asked through the client.
    if (!endpoint.remote.empty() && !endpoint.remote_allowed) {
      return ProbeUnavailable(flavor_.runtime, kReasonUnreachable,
                              absl::StrCat("not asked: ", endpoint.remote, " is not this host"),
                              endpoint.bin);
    }
    if (endpoint.socket.has_value()) return ProbeSocket(endpoint);
    // Podman without its API service answers for itself (the client is the
    // engine); a remote endpoint is asked through the client.
    const bool client_is_engine =
        flavor_.podman && host.container_host.empty() && endpoint.remote.empty();
    return ProbeCommand(endpoint, host,
                        client_is_engine ? "{{.Client.Version}}" : "{{.Server.Version}}");
  }

  // One request or command, as the probe it replaces: the image's own entry
  // says the engine answers, and names the image's content ID (the account
  // view's cache key, account_view.h). Anything less clear falls back to
  // the probe, and the ID stays unknown.
  ProbeResult ProbeForSpawn(const HostFacts& host, const Endpoint& endpoint,
                            const std::string& image, SpawnImage* told) const override {
    *told = SpawnImage();
    if (endpoint.bin.empty() || image.empty() || Unasked(endpoint) ||
        (!endpoint.remote.empty() && !endpoint.socket.has_value())) {
      return Probe(host, endpoint, ProbeDepth::kForRun);
    }
    const Runtime runtime = flavor_.runtime;
    if (endpoint.socket.has_value()) {
      absl::StatusOr<HttpResponse> response =
          EngineRequest(*endpoint.socket, "GET",
                        absl::StrCat("/images/", UrlEncode(image), "/json"), endpoint.timeout_ms);
      if (!response.ok()) {
        return ProbeUnavailable(runtime, kReasonUnreachable,
                                std::string(response.status().message()), endpoint.bin,
                                SocketCause(response.status()));
      }
      std::string version = ServerVersion(response->headers, "Docker/");
      if (version.empty()) version = ServerVersion(response->headers, "Libpod/");
      if (response->status == 200) {
        const nlohmann::json body = nlohmann::json::parse(response->body, nullptr, false);
        if (body.is_object() && body.contains("Id") && body["Id"].is_string()) {
          told->id = ImageContentId(body["Id"].get<std::string>());
          const nlohmann::json config = body.value("Config", nlohmann::json());
          told->volumes = VolumePaths(config.is_object() ? config.value("Volumes", nlohmann::json())
                                                         : nlohmann::json());
          return ProbeAvailable(runtime, endpoint.bin, version.empty() ? "unknown" : version);
        }
      }
      // An image the engine does not have (pulled by the run, or its clear
      // error): the engine still answered, when it names itself.
      if (response->status == 404 && !version.empty()) {
        return ProbeAvailable(runtime, endpoint.bin, version);
      }
      return ProbeSocket(endpoint);
    }
    // The client answers for the engine; its version is not asked (the run's
    // own start is the proof, as on bubblewrap).
    std::vector<std::string> env = ClientEnvironment(endpoint, host.envp);
    std::vector<char*> envp = CStrings(env);
    // The volumes come as JSON after the ID, which has no space.
    absl::StatusOr<CaptureResult> inspect = RunAndCapture(
        {endpoint.bin, "image", "inspect", "--format", "{{.Id}} {{json .Config.Volumes}}", image},
        envp.data(), kCommandTimeoutMs);
    if (inspect.ok() && !inspect->timed_out && inspect->exit_code == 0) {
      std::optional<IdAndJson> split = SplitIdAndJson(inspect->out);
      if (split.has_value()) {
        told->id = ImageContentId(split->id);
        told->volumes = VolumePaths(split->value);
      } else {
        const absl::string_view out = absl::StripAsciiWhitespace(inspect->out);
        told->id = ImageContentId(std::string(out.substr(0, out.find(' '))));
      }
      return ProbeAvailable(runtime, endpoint.bin, "unknown");
    }
    return Probe(host, endpoint, ProbeDepth::kForRun);
  }

  std::optional<ImageUserConfig> InspectImageUser(const HostFacts& host, const Endpoint& endpoint,
                                                  const std::string& image) const override {
    if (endpoint.bin.empty() || image.empty() || Unasked(endpoint)) return std::nullopt;
    nlohmann::json id;
    nlohmann::json user;
    if (endpoint.socket.has_value()) {
      absl::StatusOr<HttpResponse> response =
          EngineRequest(*endpoint.socket, "GET",
                        absl::StrCat("/images/", UrlEncode(image), "/json"), endpoint.timeout_ms);
      if (!response.ok() || response->status != 200) return std::nullopt;
      const nlohmann::json body = nlohmann::json::parse(response->body, nullptr, false);
      if (!body.is_object() || !body.contains("Config")) return std::nullopt;
      id = body.value("Id", nlohmann::json());
      const nlohmann::json& config = body["Config"];
      // An image without a config, or a config without User, runs as root.
      user = config.is_object() ? config.value("User", nlohmann::json("")) : nlohmann::json("");
    } else {
      std::vector<std::string> env = ClientEnvironment(endpoint, host.envp);
      std::vector<char*> envp = CStrings(env);
      // docker's template refuses `json` on the ID (SplitIdAndJson).
      absl::StatusOr<CaptureResult> inspect = RunAndCapture(
          {endpoint.bin, "image", "inspect", "--format", "{{.Id}} {{json .Config.User}}", image},
          envp.data(), kInspectTimeoutMs);
      if (!inspect.ok() || inspect->timed_out || inspect->exit_code != 0) return std::nullopt;
      std::optional<IdAndJson> split = SplitIdAndJson(inspect->out);
      if (!split.has_value()) return std::nullopt;
      id = std::move(split->id);
      user = std::move(split->value);
      // A Go template prints a missing User as null.
      if (user.is_null()) user = "";
    }
    if (!user.is_string()) return std::nullopt;
    ImageUserConfig out;
    out.id = id.is_string() ? ImageContentId(id.get<std::string>()) : "";
    out.user = user.get<std::string>();
    return out;
  }

  void AddSpawnFacts(const HostFacts& /*host*/, const Endpoint& endpoint,
                     SpawnFacts& facts) const override {
    if (endpoint.socket.has_value()) facts.extra_forbidden.push_back(*endpoint.socket);
    facts.engine_remote = endpoint.remote;
    facts.engine_reach = endpoint.reach;
    // Podman's default init, catatonit, reports a program that is not found
    // as 1, not 127; tini (the init docker uses) keeps 127 and 126.
    if (flavor_.podman && access(kStaticTini, X_OK) == 0) facts.init_path = kStaticTini;
  }

  std::vector<std::string> EngineStatePaths(const Endpoint& endpoint) const override {
    std::vector<std::string> paths;
    if (!endpoint.socket.has_value()) return paths;
    // Docker's /info names its root directory; podman's compatible /info
    // names its graph root there, and its own /libpod/info the run root too.
    absl::StatusOr<HttpResponse> info =
        EngineRequest(*endpoint.socket, "GET", "/info", endpoint.timeout_ms);
    if (info.ok() && info->status == 200) {
      nlohmann::json body = nlohmann::json::parse(info->body, nullptr, false);
      if (body.is_object() && body.contains("DockerRootDir") && body["DockerRootDir"].is_string()) {
        paths.push_back(body["DockerRootDir"].get<std::string>());
      }
    }
    if (flavor_.podman) {
      absl::StatusOr<HttpResponse> libpod =
          EngineRequest(*endpoint.socket, "GET", "/libpod/info", endpoint.timeout_ms);
      if (libpod.ok() && libpod->status == 200) {
        nlohmann::json body = nlohmann::json::parse(libpod->body, nullptr, false);
        const nlohmann::json* store =
            body.is_object() && body.contains("store") ? &body["store"] : nullptr;
        for (const char* key : {"graphRoot", "runRoot"}) {
          if (store != nullptr && store->is_object() && store->contains(key) &&
              (*store)[key].is_string()) {
            paths.push_back((*store)[key].get<std::string>());
          }
        }
      }
    }
    // Only clean absolute paths can be compared; anything else is dropped
    // (the defaults still apply).
    std::vector<std::string> clean;
    for (const std::string& path : paths) {
      if (!path.empty() && path.front() == '/' && path.find("..") == std::string::npos &&
          path.find('\0') == std::string::npos && path != "/") {
        clean.push_back(path);
      }
    }
    return clean;
  }

  absl::StatusOr<RunOutcome> Run(const SpawnPlan& plan, const Endpoint& endpoint,
                                 const HostFacts& host,
                                 const std::vector<Companion>& companions) const override {
    absl::Status here = CheckPlannedEngine(plan, endpoint);
    if (!here.ok()) return here;
    SuperviseRequest request = ClientRequest(plan, endpoint, host, companions);
    const std::vector<std::string> client_env = request.env;
    // Forwarded values as secrets where the runtime would keep them in its
    // state database (podman_secrets.h).
    absl::StatusOr<std::vector<std::string>> secrets =
        CreatePodmanSecrets(plan.exec_path, request.env, plan.env_secrets);
    if (!secrets.ok()) return secrets.status();
    RunOutcome outcome;
    outcome.result = Supervise(request);
    RemovePodmanSecrets(plan.exec_path, client_env, *secrets);
    if (outcome.result.start_errno != 0) {
      return RuntimeNotExecutable(plan.exec_path, outcome.result.start_errno);
    }
    // On an engine on another host, a client failure that left the check
    // file np-exec wrote in place: the entry point never proved the project
    // there. Judged by np-exec's own descriptor of that file, still linked at
    // its name, never by the name alone: a program that ran could put a file
    // of that name back and exit 125 to have its run logged as refused.
    if (outcome.result.exit_code == 125 && NonceUnconsumed(plan)) {
      return ProjectNotShared(plan.project_mount, "no confirmation from the spawn's entry point");
    }
    // tini's `exec ... failed` reads like the program's own 127: the image
    // says whether the program was there at all.
    if (outcome.result.exit_code == 127) outcome.note = ExplainExitNotFound(plan, host, endpoint);
    // The image is not asked for before the client starts: the client's own
    // create request finds out anyway (--pull=never fails it, and nothing
    // runs), so a check beforehand would be one more engine round trip on
    // every spawn. 125 is the client's own failure; only then is
    // the engine asked, and a missing image becomes np-exec's clear error.
    if (outcome.result.exit_code == 125 && !plan.pull_missing &&
        ImagePresent(plan.image, endpoint, host) == false) {
      return ImageMissingError(plan.image, RuntimeName(flavor_.runtime));
    }
    return outcome;
  }

  std::optional<bool> ImagePresent(const std::string& image, const Endpoint& endpoint,
                                   const HostFacts& host) const override {
    if (endpoint.bin.empty() || Unasked(endpoint)) return std::nullopt;
    if (endpoint.socket.has_value()) return ImageOnSocket(endpoint, image);
    std::vector<std::string> env = ClientEnvironment(endpoint, host.envp);
    std::vector<char*> envp = CStrings(env);
    absl::StatusOr<CaptureResult> inspect =
        RunAndCapture({endpoint.bin, "image", "inspect", image}, envp.data(), kInspectTimeoutMs);
    if (!inspect.ok() || inspect->timed_out) return std::nullopt;
    return inspect->exit_code == 0;
  }

  void Cleanup(const Endpoint& endpoint, const std::string& name,
               const std::vector<std::string>& secrets, const HostFacts& host) const override {
    if (Unasked(endpoint)) return;
    const std::vector<std::string> env = ClientEnvironment(endpoint, host.envp);
    ForceRemoveContainer(endpoint.bin, env, endpoint.socket, name);
    RemovePodmanSecrets(endpoint.bin, env, secrets);
  }

  // The engine binds by path: each placeholder gets its identity in the
  // entry point's mount-check (`--expect TARGET DEV:INO`).
  absl::Status PinPrintedPlaceholders(const std::vector<ProtectedBind>& binds,
                                      const std::string& project_real,
                                      const std::string& project_mount, SourcePins& pins,
                                      std::vector<std::string>& argv,
                                      std::vector<int>& /*bind_fds*/) const override {
    return ForEachPinnedPlaceholder(
        binds, project_real, project_mount, pins,
        [&argv](const std::string& /*source*/, const std::string& target, const SourcePin& pin) {
          auto check = std::adjacent_find(argv.begin(), argv.end(),
                                          [](const std::string& a, const std::string& b) {
                                            return a == kEgressSelfTarget && b == kMountCheckVerb;
                                          });
          if (check == argv.end()) return PrintedArgvLacks("mount-check");
          argv.insert(check + 2, {"--expect", target, absl::StrCat(pin.dev, ":", pin.ino)});
          return absl::OkStatus();
        });
  }

  std::string OwnerLabel(const HostFacts& host) const override {
    return OwnerLabelValue(host.pid, ProcessStartTime(host.pid));
  }

  std::optional<ImageAccountBases> ImageAccounts(const HostFacts& host, const Endpoint& endpoint,
                                                 const std::string& bin, const std::string& image,
                                                 const std::string& container_name) const override {
    return CopyImageAccounts(bin, image, container_name, host, endpoint);
  }

 private:
  static std::optional<bool> ImageOnSocket(const Endpoint& endpoint, const std::string& image) {
    absl::StatusOr<HttpResponse> response =
        EngineRequest(*endpoint.socket, "GET", absl::StrCat("/images/", UrlEncode(image), "/json"),
                      endpoint.timeout_ms);
    if (!response.ok()) return std::nullopt;
    if (response->status == 200) return true;
    if (response->status == 404) return false;
    return std::nullopt;
  }

  ProbeResult ProbeSocket(const Endpoint& endpoint) const {
    const Runtime runtime = flavor_.runtime;
    // /_ping answers in about 0.1 ms; /version has the daemon ask containerd
    // for its components and takes 5 to 15 ms here, on every container spawn.
    // Docker names its version in the ping's Server header, so the ping alone
    // answers both questions; any other answer falls back to /version.
    absl::StatusOr<HttpResponse> ping =
        EngineRequest(*endpoint.socket, "GET", "/_ping", endpoint.timeout_ms);
    if (!ping.ok()) {
      return ProbeUnavailable(runtime, kReasonUnreachable, std::string(ping.status().message()),
                              endpoint.bin, SocketCause(ping.status()));
    }
    if (ping->status == 200) {
      std::string version = ServerVersion(ping->headers, "Docker/");
      if (!version.empty()) return ProbeAvailable(runtime, endpoint.bin, version);
    }
    absl::StatusOr<HttpResponse> response =
        EngineRequest(*endpoint.socket, "GET", "/version", endpoint.timeout_ms);
    if (!response.ok()) {
      return ProbeUnavailable(runtime, kReasonUnreachable, std::string(response.status().message()),
                              endpoint.bin, SocketCause(response.status()));
    }
    if (response->status != 200) {
      return ProbeUnavailable(
          runtime, kReasonUnreachable,
          absl::StrCat("engine socket ", *endpoint.socket, " answered HTTP ", response->status),
          endpoint.bin);
    }
    nlohmann::json body = nlohmann::json::parse(response->body, nullptr, false);
    std::string version = "unknown";
    if (body.is_object() && body.contains("Version") && body["Version"].is_string()) {
      version = body["Version"].get<std::string>();
    }
    return ProbeAvailable(runtime, endpoint.bin, version);
  }

  ProbeResult ProbeCommand(const Endpoint& endpoint, const HostFacts& host,
                           const char* format) const {
    const Runtime runtime = flavor_.runtime;
    std::vector<std::string> env = ClientEnvironment(endpoint, host.envp);
    std::vector<char*> envp = CStrings(env);
    absl::StatusOr<CaptureResult> result = RunAndCapture(
        {endpoint.bin, "version", "--format", format}, envp.data(), kCommandTimeoutMs);
    if (!result.ok()) {
      return ProbeUnavailable(runtime, kReasonUnreachable, std::string(result.status().message()),
                              endpoint.bin);
    }
    std::string version(absl::StripAsciiWhitespace(result->out));
    if (result->timed_out) {
      return ProbeUnavailable(runtime, kReasonUnreachable,
                              absl::StrCat(endpoint.bin, " version timed out"), endpoint.bin);
    }
    if (result->exit_code != 0 || version.empty()) {
      // Rootless podman without its subordinate ids fails here (newuidmap).
      const bool id_map = flavor_.podman && host.uid != 0 && !HasSubordinateIds(host);
      return ProbeUnavailable(runtime, kReasonUnreachable,
                              absl::StrCat(endpoint.bin, " version exited ", result->exit_code,
                                           " without an engine version",
                                           id_map ? " (this user has no subordinate ids, or "
                                                    "newuidmap is missing)"
                                                  : ""),
                              endpoint.bin, id_map ? kCauseRootlessIdMap : "");
    }
    return ProbeAvailable(runtime, endpoint.bin, version);
  }

  Flavor flavor_;
};

}  // namespace

const RuntimeDriver& DockerDriver() {
  static const EngineDriver* driver = new EngineDriver({Runtime::kDocker, false});
  return *driver;
}

const RuntimeDriver& PodmanDriver() {
  static const EngineDriver* driver = new EngineDriver({Runtime::kPodman, true});
  return *driver;
}

}  // namespace np
