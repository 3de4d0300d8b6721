#include "launcher/runtime/engine_locality.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/config_file.h"
#include "core/mounts.h"
#include "core/paths.h"
#include "core/plan.h"
#include "core/sha256.h"
#include "launcher/environment.h"
#include "launcher/state/state_store.h"
#include "nlohmann/json.hpp"

namespace np {
namespace {

constexpr size_t kMaxConfigBytes = 1 << 20;
constexpr char kDefaultDockerSocket[] = "/var/run/docker.sock";

// A small JSON file of the client's: an empty object when there is none,
// nullopt when there is one np-exec cannot read as the client would (not a
// regular file, too big, unreadable, not JSON): then the endpoint is unknown.
std::optional<nlohmann::json> ReadJsonFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENOENT) return nlohmann::json::object();
    return std::nullopt;
  }
  struct stat st;
  std::string text;
  bool whole = false;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      static_cast<size_t>(st.st_size) <= kMaxConfigBytes) {
    text.resize(static_cast<size_t>(st.st_size));
    const ssize_t n = read(fd, text.data(), text.size());
    whole = n == static_cast<ssize_t>(text.size());
  }
  close(fd);
  if (!whole) return std::nullopt;
  nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded() || !value.is_object()) return std::nullopt;
  return value;
}

// `name` as Go's case-insensitive match sees it: the two non-ASCII letters
// that fold to ASCII ones (U+017F long s to s, U+212A Kelvin sign to k)
// replaced, then ASCII lower case.
std::string FoldedKey(absl::string_view name) {
  std::string folded = absl::StrReplaceAll(name, {{"\xC5\xBF", "s"}, {"\xE2\x84\xAA", "k"}});
  absl::AsciiStrToLower(&folded);
  return folded;
}

// The string under `key` as the client's JSON decoder finds it (Go matches a
// struct field's name without regard to case): "" when absent, nullopt when
// it is not a string or more than one spelling is there.
std::optional<std::string> FieldOf(const nlohmann::json& object, absl::string_view key) {
  std::optional<std::string> found = std::string();
  int matches = 0;
  const std::string wanted = FoldedKey(key);
  for (const auto& [name, value] : object.items()) {
    if (FoldedKey(name) != wanted) continue;
    if (++matches > 1 || !value.is_string()) return std::nullopt;
    found = value.get<std::string>();
  }
  return found;
}

// Whether `host` names this host's loopback: localhost, [::1], or
// 127.0.0.0/8 as four decimal numbers (a name such as 127.0.0.1.example is
// resolved by the client, to anywhere).
bool LoopbackHost(absl::string_view host) {
  if (host == "localhost" || host == "[::1]") return true;
  const std::vector<absl::string_view> parts = absl::StrSplit(host, '.');
  int octet = 0;
  return parts.size() == 4 && parts[0] == "127" &&
         std::all_of(parts.begin(), parts.end(), [&octet](absl::string_view part) {
           // A leading zero (127.0.0.09) is no address to Go's parser: a
           // name, resolved anywhere.
           return !part.empty() && part.size() <= 3 && (part.size() == 1 || part[0] != '0') &&
                  std::all_of(part.begin(), part.end(), absl::ascii_isdigit) &&
                  absl::SimpleAtoi(part, &octet) && octet <= 255;
         });
}

// Whether a tcp:// endpoint is a port on the loopback. Its authority must be
// plain: a host, an optional numeric port, nothing else (tcp://127.0.0.1:1@
// evil:2375 is evil's port 2375 to the client's URL parser).
bool LoopbackTcp(absl::string_view url) {
  if (!absl::ConsumePrefix(&url, "tcp://")) return false;
  const absl::string_view authority = url.substr(0, url.find_first_of("/?#"));
  const bool plain = std::all_of(authority.begin(), authority.end(), [](char c) {
    return absl::ascii_isalnum(c) || c == '.' || c == ':' || c == '[' || c == ']' || c == '-';
  });
  if (!plain || authority.empty()) return false;
  const size_t host_end =
      absl::StartsWith(authority, "[") ? authority.find(']') + 1 : authority.find(':');
  if (host_end == 0) return false;  // An unclosed "[".
  const absl::string_view host = authority.substr(0, host_end);
  absl::string_view rest = host_end == absl::string_view::npos ? "" : authority.substr(host_end);
  if (!rest.empty() && (!absl::ConsumePrefix(&rest, ":") || rest.empty() || rest.size() > 5 ||
                        !std::all_of(rest.begin(), rest.end(), absl::ascii_isdigit))) {
    return false;
  }
  return LoopbackHost(host);
}

// Whether any of `dirs` lies where a sandbox can write: in a project, or in
// np-exec's state store (a persistent home is its sandbox's to write), the
// store taken as written and in its parent's real path (a store that is
// itself a link is refused on its own, state-store-invalid).
bool InSandboxWritablePlace(const HostFacts& host, const std::vector<std::string>& dirs) {
  absl::StatusOr<std::string> store = HostStateStoreDir(host);
  std::vector<std::string> stores;
  if (store.ok()) {
    stores.push_back(*store);
    absl::StatusOr<std::string> parent = ResolveRealPath(ParentPath(*store), "invalid-path");
    if (parent.ok()) stores.push_back(JoinPath(*parent, store->substr(store->rfind('/') + 1)));
  }
  for (const std::string& dir : dirs) {
    if (!ProjectsAtOrAbove(dir).empty()) return true;
    for (const std::string& store_dir : stores) {
      if (IsInside(dir, store_dir)) return true;
    }
  }
  return false;
}

// Whether the socket `path` lies where a sandbox can put its own (a fake
// engine that would get the operator's terminal and registry credentials),
// by the path as written or by its directory's real path.
bool SandboxesCanReplace(const HostFacts& host, const std::string& path) {
  if (HasDotDot(path)) return true;  // Compared as text below: not judged.
  const std::string written = NormalizePath(ParentPath(path));
  std::vector<std::string> dirs = {written};
  // The directory's real path, and the socket's own (a link to one elsewhere).
  // A dangling link or a loop cannot be judged.
  for (const std::string& place : {written, NormalizePath(path)}) {
    absl::StatusOr<std::string> real = ResolveRealPath(place, "invalid-path");
    if (!real.ok()) return true;
    dirs.push_back(place == written ? *real : ParentPath(*real));
  }
  return InSandboxWritablePlace(host, dirs);
}

// Whether `text` is non-empty, starts with no '-' (never an option to ssh)
// and holds only what `allowed` allows.
bool PlainWord(absl::string_view text, bool (*allowed)(char)) {
  return !text.empty() && text.front() != '-' && std::all_of(text.begin(), text.end(), allowed);
}

bool HostChar(char c) { return absl::ascii_isalnum(c) || c == '.' || c == '-'; }
bool UserChar(char c) { return HostChar(c) || c == '_'; }
bool SocketPathChar(char c) { return UserChar(c) || c == '/'; }

// `authority` without its ":PORT" (1 to 5 digits), when it has one; false
// when a colon is followed by anything else.
bool StripPort(absl::string_view& authority) {
  const size_t colon = authority.find(':');
  if (colon == absl::string_view::npos) return true;
  const absl::string_view port = authority.substr(colon + 1);
  if (port.empty() || port.size() > 5 ||
      !std::all_of(port.begin(), port.end(), absl::ascii_isdigit)) {
    return false;
  }
  authority = authority.substr(0, colon);
  return true;
}

// ssh://[user@]host[:port][/socket] with nothing a URL parser or ssh could
// read otherwise: no %, ?, #, .., option-like user or host. A path (podman's
// remote socket) only where `path_allowed`.
bool PlainSshUrl(absl::string_view url, bool path_allowed) {
  if (!absl::ConsumePrefix(&url, "ssh://")) return false;
  const size_t slash = url.find('/');
  const absl::string_view path = slash == absl::string_view::npos ? "" : url.substr(slash);
  absl::string_view authority = url.substr(0, slash);
  if (!path.empty() &&
      (!path_allowed || HasDotDot(path) || !PlainWord(path.substr(1), SocketPathChar))) {
    return false;
  }
  const size_t at = authority.find('@');
  if (at != absl::string_view::npos) {
    if (!PlainWord(authority.substr(0, at), UserChar)) return false;
    authority.remove_prefix(at + 1);
  }
  return StripPort(authority) && PlainWord(authority, HostChar);
}

// tcp://host[:port] with a plain name or IPv4 address and nothing after it.
bool PlainTcpUrl(absl::string_view url) {
  return absl::ConsumePrefix(&url, "tcp://") && StripPort(url) && PlainWord(url, HostChar);
}

// An endpoint URL as np-exec reaches it: a unix:// socket at an absolute
// path, or a tcp:// port on the loopback, is this host; ssh:// and plain
// tcp:// (verified TLS when `tls`) are another host np-exec can name; any
// other scheme, host or spelling is one it cannot vouch for.
EngineLocation FromUrl(const std::string& url, const std::string& shown, const HostFacts& host,
                       bool tls = false, bool ssh_path_allowed = false) {
  // A URL parser decodes %XX and ends the path at ? or #: refused, so the
  // socket np-exec checks is the one the client dials.
  if (absl::StartsWith(url, "unix:///") && url.find_first_of("%?#") == std::string::npos) {
    if (SandboxesCanReplace(host, url.substr(7))) {
      return {std::nullopt,
              absl::StrCat(shown, " (", url, ", a socket in a project or np-exec's state store)"),
              ""};
    }
    return {url.substr(7), "", url, EngineReach::kThisHost};
  }
  if (LoopbackTcp(url)) return {std::nullopt, "", url, EngineReach::kThisHost};
  const std::string named = absl::StrCat(shown, " (", url.empty() ? "unreadable" : url, ")");
  if (PlainSshUrl(url, ssh_path_allowed)) return {std::nullopt, named, url, EngineReach::kSsh};
  if (PlainTcpUrl(url)) {
    return {std::nullopt, named, url, tls ? EngineReach::kTls : EngineReach::kInsecureTcp};
  }
  return {std::nullopt, named, ""};
}

EngineLocation Unreadable(const std::string& shown) {
  return {std::nullopt, absl::StrCat(shown, " (unreadable)"), ""};
}

// The name of docker's current context: DOCKER_CONTEXT, else config.json's
// currentContext; nullopt when config.json cannot be read.
std::optional<std::string> DockerContextName(const HostFacts& host, const std::string& config_dir) {
  std::string name(GetEnv(host.envp, "DOCKER_CONTEXT"));
  if (!name.empty() || config_dir.empty()) return name;
  const std::optional<nlohmann::json> config = ReadJsonFile(JoinPath(config_dir, "config.json"));
  if (!config.has_value()) return std::nullopt;
  return FieldOf(*config, "currentContext");
}

bool IsSet(char** envp, absl::string_view name) { return GetEnv(envp, name).data() != nullptr; }

// Every variable that names an endpoint to either client: each runtime's
// calls lose all of them (a `docker` that is podman's wrapper reads
// CONTAINER_HOST), then get their own checked one back.
std::vector<std::string> ClientVariables() {
  return {"DOCKER_HOST", "DOCKER_CONTEXT", "CONTAINER_HOST", "CONTAINER_CONNECTION"};
}

// Whether docker's configuration directory lies where a sandbox can write
// (relative: wherever the client starts, often the project; in a project or
// np-exec's state store, by its path as written or its real path): a
// context, a credential helper, a plugin or a plugin hook there (docker 26
// and later run a hook's plugin on the host after `docker run`) is the
// sandbox's choice.
bool SandboxesCanWriteConfig(const HostFacts& host, const std::string& config_dir) {
  if (config_dir.empty()) return false;
  if (config_dir.front() != '/' || HasDotDot(config_dir)) return true;
  // A dangling link, a loop: where it leads cannot be judged.
  absl::StatusOr<std::string> real = ResolveRealPath(config_dir, "invalid-path");
  return !real.ok() || InSandboxWritablePlace(host, {NormalizePath(config_dir), *real});
}

// Whether docker's client verifies the TLS of a tcp:// DOCKER_HOST: only
// with DOCKER_TLS_VERIFY set non-empty (DOCKER_TLS alone skips
// verification), and certificates from a place no sandbox can write
// (DOCKER_CERT_PATH, else the configuration directory). The directory, or
// "" when the client would not verify.
std::string DockerVerifiedCertPath(const HostFacts& host, const std::string& config_dir) {
  if (GetEnv(host.envp, "DOCKER_TLS_VERIFY").empty()) return "";
  std::string cert_path(GetEnv(host.envp, "DOCKER_CERT_PATH"));
  if (cert_path.empty()) cert_path = config_dir;
  if (cert_path.empty() || SandboxesCanWriteConfig(host, cert_path)) return "";
  return cert_path;
}

// A context's endpoint: its URL, and for tcp:// its TLS material under
// contexts/tls/ (a CA there and no SkipTLSVerify: the client verifies).
EngineLocation ContextLocation(const HostFacts& host, const std::string& config_dir,
                               const std::string& name) {
  const std::string shown = absl::StrCat("docker context ", name);
  const std::string hash = Sha256Hex(name);
  const std::optional<nlohmann::json> meta =
      ReadJsonFile(JoinPath(config_dir, absl::StrCat("contexts/meta/", hash, "/meta.json")));
  if (!meta.has_value()) return Unreadable(shown);
  nlohmann::json endpoints;
  for (const auto& [key, value] : meta->items()) {
    if (FoldedKey(key) != "endpoints") continue;
    if (!endpoints.is_null() || !value.is_object()) return Unreadable(shown);
    endpoints = value;
  }
  if (!endpoints.is_object() || !endpoints.contains("docker") || !endpoints["docker"].is_object()) {
    return Unreadable(shown);
  }
  const nlohmann::json& docker = endpoints["docker"];
  const std::optional<std::string> url = FieldOf(docker, "Host");
  if (!url.has_value()) return Unreadable(shown);
  bool skip_verify = false;
  for (const auto& [key, value] : docker.items()) {
    if (FoldedKey(key) == "skiptlsverify") skip_verify = !value.is_boolean() || value.get<bool>();
  }
  const std::string tls_dir = JoinPath(config_dir, absl::StrCat("contexts/tls/", hash, "/docker"));
  struct stat st;
  const bool tls =
      !skip_verify && stat(JoinPath(tls_dir, "ca.pem").c_str(), &st) == 0 && S_ISREG(st.st_mode);
  EngineLocation location = FromUrl(*url, shown, host, tls);
  if (location.reach == EngineReach::kTls) location.tls_cert_path = tls_dir;
  return location;
}

EngineLocation DockerLocationUnpinned(const HostFacts& host) {
  std::string config_dir(GetEnv(host.envp, "DOCKER_CONFIG"));
  if (config_dir.empty() && !host.home.empty()) config_dir = JoinPath(host.home, ".docker");
  if (SandboxesCanWriteConfig(host, config_dir)) {
    return {std::nullopt,
            absl::StrCat("DOCKER_CONFIG (", config_dir,
                         ", relative or inside a project or np-exec's state store)"),
            ""};
  }
  if (!host.docker_host.empty()) {
    const std::string cert_path = DockerVerifiedCertPath(host, config_dir);
    EngineLocation location = FromUrl(host.docker_host, "DOCKER_HOST", host, !cert_path.empty());
    if (location.reach == EngineReach::kTls) location.tls_cert_path = cert_path;
    return location;
  }
  const std::optional<std::string> name = DockerContextName(host, config_dir);
  if (!name.has_value()) return Unreadable("docker's config.json");
  if (name->empty() || *name == "default") {
    return {std::string(kDefaultDockerSocket), "", absl::StrCat("unix://", kDefaultDockerSocket),
            EngineReach::kThisHost};
  }
  return ContextLocation(host, config_dir, *name);
}

EngineLocation PodmanLocationUnpinned(const HostFacts& host, const std::string& fallback) {
  if (IsSet(host.envp, "CONTAINER_CONNECTION")) {
    return {std::nullopt,
            absl::StrCat("podman connection ", GetEnv(host.envp, "CONTAINER_CONNECTION")), ""};
  }
  if (IsSet(host.envp, "CONTAINER_HOST")) {
    return FromUrl(std::string(GetEnv(host.envp, "CONTAINER_HOST")), "CONTAINER_HOST", host,
                   /*tls=*/false, /*ssh_path_allowed=*/true);
  }
  return {fallback, "", "", EngineReach::kThisHost};
}

}  // namespace

// The variables docker's client obeys when it dials the engine: the
// endpoint's, and for a tcp:// one ALL_PROXY (clients built with
// go-connections 0.4, docker 20.10 to 24 and Debian's docker.io, send even a
// loopback port through its SOCKS server, which then reaches the engine on
// *its* loopback with the run, the forwarded values and the terminal; the
// HTTP proxy variables never apply to a loopback address, and nothing is
// proxied on a unix socket, so only then is a forwarded ALL_PROXY lost).
std::vector<std::string> DockerClientVariables(const std::string& url) {
  std::vector<std::string> names = ClientVariables();
  if (absl::StartsWith(url, "tcp://")) names.insert(names.end(), {"ALL_PROXY", "all_proxy"});
  return names;
}

// Whether the operator may accept `location`: another host np-exec can
// name (ssh, verified TLS). Until then (ResolveEndpoint) its pins name this
// host's default engine, so no call can reach it.
bool Acceptable(const EngineLocation& location) {
  return !location.remote.empty() &&
         (location.reach == EngineReach::kSsh || location.reach == EngineReach::kTls);
}

EngineLocation DockerLocation(const HostFacts& host) {
  EngineLocation location = DockerLocationUnpinned(host);
  if (location.remote.empty()) location.reach = EngineReach::kThisHost;
  location.client_unset = DockerClientVariables(location.url);
  location.client_set = {absl::StrCat(
      "DOCKER_HOST=",
      location.remote.empty() ? location.url : absl::StrCat("unix://", kDefaultDockerSocket))};
  if (Acceptable(location)) {
    location.accepted_client_set = {absl::StrCat("DOCKER_HOST=", location.url)};
    if (location.reach == EngineReach::kTls) {
      location.accepted_client_set.push_back("DOCKER_TLS_VERIFY=1");
      location.accepted_client_set.push_back(
          absl::StrCat("DOCKER_CERT_PATH=", location.tls_cert_path));
    }
  }
  return location;
}

EngineLocation PodmanLocation(const HostFacts& host, const std::string& fallback) {
  EngineLocation location = PodmanLocationUnpinned(host, fallback);
  if (location.remote.empty()) location.reach = EngineReach::kThisHost;
  location.client_unset = ClientVariables();
  if (location.remote.empty() && !location.url.empty()) {
    location.client_set = {absl::StrCat("CONTAINER_HOST=", location.url)};
  }
  if (Acceptable(location)) {
    location.accepted_client_set = {absl::StrCat("CONTAINER_HOST=", location.url)};
  }
  return location;
}

std::vector<std::string> PinClientEnvironment(std::vector<std::string> env,
                                              const Endpoint& endpoint) {
  std::vector<std::string> pinned;
  pinned.reserve(env.size() + endpoint.client_set.size());
  for (std::string& entry : env) {
    const absl::string_view name = absl::string_view(entry).substr(0, entry.find('='));
    const auto named = [name](const std::string& other) {
      return name == absl::string_view(other).substr(0, other.find('='));
    };
    if (std::any_of(endpoint.client_unset.begin(), endpoint.client_unset.end(), named) ||
        std::any_of(endpoint.client_set.begin(), endpoint.client_set.end(), named)) {
      continue;
    }
    pinned.push_back(std::move(entry));
  }
  pinned.insert(pinned.end(), endpoint.client_set.begin(), endpoint.client_set.end());
  return pinned;
}

std::vector<std::string> ClientEnvironment(const Endpoint& endpoint, char** envp) {
  return PinClientEnvironment(EditEnvironment(envp, {}, kInterposerVars), endpoint);
}

}  // namespace np
