#include "launcher/spawn_facts.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/str_format.h"
#include "core/errors.h"
#include "core/paths.h"
#include "core/socket_walk.h"
#include "launcher/environment.h"
#include "launcher/state/account_view.h"
#include "launcher/state/state_store.h"
#include "shim/find_real_program.h"

namespace np {
namespace {

// Where the host's daemons keep their endpoints.
constexpr char kRunDir[] = "/run";

}  // namespace

std::string RealHome(const HostFacts& host) {
  if (host.home.empty()) return "";
  char buffer[PATH_MAX];
  return realpath(host.home.c_str(), buffer) != nullptr ? std::string(buffer) : host.home;
}

SpawnFacts BaseFacts(const HostFacts& host, const std::string& cwd) {
  SpawnFacts facts;
  facts.cwd = cwd;
  facts.uid = host.uid;
  facts.gid = host.gid;
  facts.stdin_tty = host.stdin_tty;
  facts.stdout_tty = host.stdout_tty;
  facts.path = host.path;
  const FileId self = host.self;
  facts.find = [cwd, self](absl::string_view name, absl::string_view path_list, bool skip_self) {
    return FindRealProgram(name, path_list, cwd, skip_self ? self : FileId{}, StatFile);
  };
  facts.depth = host.depth;
  facts.pid = host.pid;
  facts.preload_names = std::string(GetEnv(host.envp, kPreloadNamesVar));
  char** envp = host.envp;
  facts.env_is_set = [envp](const std::string& name) { return ForwardedValueIsSet(envp, name); };
  return facts;
}

bool ForwardedValueIsSet(char** envp, const std::string& name) {
  // Set, even to "": GetEnv points into the entry (environment.cc).
  return !IsInterposerVar(name) && GetEnv(envp, name).data() != nullptr;
}

void AddContainerFacts(const HostFacts& host, const RuntimeDriver& driver, const Endpoint& endpoint,
                       const ProbeResult& probe, absl::string_view name_prefix, bool owned,
                       bool has_mounts, SpawnFacts& facts) {
  facts.runtime_bin = probe.bin.empty() ? endpoint.bin : probe.bin;
  facts.home = RealHome(host);
  facts.self_path = SelfPath();
  uint32_t random = 0;
  if (getrandom(&random, sizeof(random), 0) != sizeof(random)) random = 0;
  facts.container_name = absl::StrFormat("%s-%d-%08x", name_prefix, host.pid, random);
  facts.owner = owned ? driver.OwnerLabel(host) : "";
  driver.AddSpawnFacts(host, endpoint, facts);
  if (has_mounts) {
    for (std::string& path : driver.EngineStatePaths(endpoint)) {
      facts.extra_forbidden.push_back(std::move(path));
    }
    // Every directory under /run that holds a socket (and any the walk could
    // not finish): the next daemon's endpoint is found, not listed.
    for (std::string& path : FindSocketHolders(kRunDir)) {
      facts.extra_forbidden.push_back(std::move(path));
    }
  }
  // np-exec's own state (trust records, every project's persistent home and
  // warm sandboxes' sockets): a mount of ~ or ~/.local, or a project that
  // holds it (XDG_STATE_HOME inside it), would show it to the sandbox.
  // A store that is there but no folder (a link, a file) is the store's own
  // refusal, `state-store-invalid`, when np-exec opens it.
  absl::StatusOr<std::string> state = HostStateStoreDir(host);
  struct stat st;
  const bool not_a_folder = state.ok() && lstat(state->c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
  if (state.ok() && !HasDotDot(*state) && !not_a_folder) {
    facts.extra_forbidden.push_back(*std::move(state));
  }
}

namespace {

bool ProjectChoseUser(const ContainerConfig& container) {
  return container.user_from_project && container.user.kind != UserSpec::Kind::kCaller &&
         TraitsOf(container.runtime).uses_image;
}

void AddImageUserFactsOf(const ContainerConfig& container, const HostFacts& host,
                         const RuntimeDriver& driver, const Endpoint& endpoint, SpawnFacts& facts) {
  std::optional<ImageUserConfig> image = driver.InspectImageUser(host, endpoint, container.image);
  if (!image.has_value()) return;
  ImageUserFacts user;
  user.configured = image->user;
  // The image's own accounts, as the account view keeps them: one small
  // file per image ID, a copy-out only the first time.
  absl::StatusOr<StateStore> store = OpenStateStore(host);
  if (store.ok()) {
    const std::string bin = facts.runtime_bin;
    const std::string name = facts.container_name;
    const ImageAccountBases bases = CachedImageAccounts(
        *store, image->id, [&driver, &bin, &container, &name, &host, &endpoint] {
          return driver.ImageAccounts(host, endpoint, bin, container.image, name);
        });
    user.passwd = bases.passwd.value_or("");
    user.group = bases.group.value_or("");
  }
  facts.image_user = std::move(user);
}

}  // namespace

void AddImageUserFacts(const Settings& settings, const HostFacts& host, const RuntimeDriver& driver,
                       const Endpoint& endpoint, SpawnFacts& facts) {
  const ContainerConfig& container = settings.config.container;
  if (settings.resolved.tier != Tier::kContainer || !ProjectChoseUser(container)) return;
  AddImageUserFactsOf(container, host, driver, endpoint, facts);
}

std::optional<nlohmann::json> DescribeProjectUser(const Settings& settings, const HostFacts& host) {
  const ContainerConfig& container = settings.config.container;
  if (!ProjectChoseUser(container)) return std::nullopt;
  const RuntimeDriver& driver = DriverFor(container.runtime);
  const Endpoint endpoint = ResolveEndpoint(driver, host, container);
  SpawnFacts facts;
  facts.runtime_bin = endpoint.bin;
  uint32_t random = 0;
  if (getrandom(&random, sizeof(random), 0) != sizeof(random)) random = 0;
  facts.container_name = absl::StrFormat("np-exec-trust-%d-%08x", host.pid, random);
  AddImageUserFactsOf(container, host, driver, endpoint, facts);
  absl::StatusOr<std::optional<ContainerUserIds>> ids = CheckProjectContainerUser(
      container, facts.image_user.has_value() ? &*facts.image_user : nullptr);
  nlohmann::json out = {{"image", container.image}};
  if (ids.ok() && ids->has_value()) {
    out["ids"] = DescribeContainerUser(**ids);
  } else {
    out["refused"] = ErrorCode(ids.status());
    out["why"] = std::string(ids.status().message());
  }
  return out;
}

}  // namespace np
