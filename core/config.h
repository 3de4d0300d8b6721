// The isolation settings of a project's config.json, strictly validated.
//
// Only `isolation.*` and `workflow.worktree_isolation` belong to np-exec; every
// other key belongs to other parts of nubos-pilot and is ignored. Inside
// `isolation` nothing is coerced: a wrong type or value, or an unknown key (a
// typo such as `isolation.tire`), is a coded error, because a typo that
// silently left a project on `direct` is exactly the downgrade ADR-0029
// forbids. Pure.
#ifndef NP_EXEC_CORE_CONFIG_H_
#define NP_EXEC_CORE_CONFIG_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/allowlist.h"
#include "core/credentials.h"
#include "core/tier.h"
#include "nlohmann/json.hpp"

namespace np {

inline constexpr absl::string_view kDefaultImage = "node:22-bookworm-slim";

// kAllowlist: loopback only inside, exactly as kNone, plus np-exec's per-spawn
// egress proxy that lets `allow_hosts` through (design.md section 8).
enum class Network { kNone, kBridge, kHost, kAllowlist };
absl::string_view NetworkName(Network network);

// An extra mount as written in the config; not yet validated against the host.
struct MountSpec {
  std::string source;
  std::string target;
  bool writable = false;
};

// `isolation.container.user`.
struct UserSpec {
  enum class Kind { kCaller, kImage, kExplicit };
  Kind kind = Kind::kCaller;  // null: run as the caller's uid:gid.
  std::string value;          // Only for kExplicit.
};

struct ContainerConfig {
  Runtime runtime = kDefaultRuntime;
  std::string image = std::string(kDefaultImage);
  Network network = Network::kNone;
  UserSpec user;
  // True when the project file chose who runs: it set `user`, or the image
  // while `user` is the image's own. Such a user is resolved in the image
  // and refused when root (core/container_user.h).
  bool user_from_project = false;
  std::optional<std::string> memory;  // The text the runtime's --memory receives.
  std::optional<std::string> cpus;    // The text the runtime's --cpus receives.
  // memory and cpus as the config wrote them (a JSON number or string; null
  // when unset or set in code), so `status` echoes 2 as 2 where the argv
  // needs the text "2".
  nlohmann::json memory_as_written;
  nlohmann::json cpus_as_written;
  std::vector<MountSpec> mounts;
  // `images`: a program's file name (the shim's, or the word after --) to
  // the image it runs in on docker and podman; every other program runs in
  // `image` (ImageFor).
  std::map<std::string, std::string> images;
  std::vector<std::string> env;
  std::optional<std::string> workdir;  // null: the project's own host path.
  bool pull_missing = false;           // `pull: "missing"`; default "never".
  // `isolation.container.protect`, validated by ParseProtect
  // (protected_paths.h): added to the protected paths, never removing one.
  std::vector<std::string> protect;
  // `allow_hosts`: set exactly when network is kAllowlist (never empty then).
  Allowlist allow_hosts;
  // `credentials` (core/credentials.h): keys the egress proxy adds for
  // hosts on allow_hosts; they act on network kAllowlist only.
  std::vector<Credential> credentials;
  // `home`: false is "ephemeral" (a tmpfs that vanishes with the sandbox),
  // true "persistent" (a per-project directory in the operator state store,
  // launcher/state/agent_home.h).
  bool persistent_home = false;
  // `home_seed`: normalised paths relative to the operator's HOME, copied
  // into a persistent home when it is created; only with a persistent home.
  std::vector<std::string> home_seed;
  // `warm` (core/warm.h): spawns are handed to a kept sandbox of the same
  // plan, which ends after this many idle seconds; nullopt: every spawn gets
  // a sandbox of its own (the default).
  std::optional<int> warm_idle_seconds;
  // `remote_engine` (operator file only): true accepts a docker or podman
  // endpoint on another host reached over ssh or verified TLS (core/plan.h
  // CheckEngineLocality); false refuses every remote engine.
  bool remote_engine = false;
};

// The image `program` runs in: `images` by the program's file name, else
// `image`.
const std::string& ImageFor(const ContainerConfig& container, absl::string_view program);

struct ProjectConfig {
  std::optional<Tier> tier;  // Unset (or null in the file) means the default, direct.
  bool worktree_isolation = false;
  ContainerConfig container;
  // `isolation.interpose`: program names the LD_PRELOAD interposer wraps in
  // addition to node. Only ever added, so a project cannot switch it off.
  std::vector<std::string> interpose;
};

// Validates the np-exec part of a parsed config.json (an object). Where
// nubos-pilot's reference (lib/isolation.cjs) makes the same decision, the
// code is the reference's: `"tier": null` is the default, a tier that is not
// one of the three names is `isolation-invalid-tier`, a mount that is not an
// object is `isolation-bad-mount`, one without a (non-blank string) source
// `isolation-mount-no-source`, a target that is not absolute
// `isolation-mount-bad-target`, a colon in a source or target
// `isolation-mount-colon-in-path`. Other codes: `isolation-invalid-network`,
// `isolation-invalid-runtime`, `isolation-unknown-key`, `isolation-no-image`,
// `isolation-invalid-image`, `isolation-invalid-value`,
// `isolation-mount-bad-mode`, `isolation-bad-env-name`; `allow_hosts` has
// ParseAllowHosts' codes (core/allowlist.h: network "allowlist" without it is
// `isolation-invalid-allow-hosts`), and with any other network
// `isolation-allow-hosts-without-allowlist`. `home` is "ephemeral" or
// "persistent"; `home_seed` (ParseHomeSeedPath), only with a persistent home,
// is `isolation-invalid-value` otherwise. `credentials` has ParseCredentials'
// codes, `isolation-credentials-without-allowlist` when this file sets it
// under another network, and `isolation-credential-host-not-allowed` when a
// credential's host is not on the (merged) allow_hosts.
absl::StatusOr<ProjectConfig> ParseProjectConfig(const nlohmann::json& root);

// The same with `base` as the starting container settings (the operator
// file's): each key the project sets replaces the operator's, and its mounts
// and env names are added to the operator's.
absl::StatusOr<ProjectConfig> ParseProjectConfig(const nlohmann::json& root,
                                                 const ContainerConfig& base);

// Parses the operator file's `isolation.container` (if any) into `out`, with
// the same strictness as the project's. The operator's keys are the
// operator's own: they need no trust.
absl::Status ParseOperatorContainer(const nlohmann::json& root, ContainerConfig& out);

// Validates where the project is mounted inside (`isolation.container.workdir`,
// `wrap --workdir`): an absolute path other than /, without "..", commas,
// colons, quotes or newlines; returns it normalised. Code
// `isolation-invalid-value`, naming `key`.
absl::StatusOr<std::string> ParseMountPoint(absl::string_view path, absl::string_view key);

// Validates one `home_seed` entry: a path relative to the operator's HOME,
// without "..", NUL bytes or control characters, at most kMaxPathBytes;
// returns it normalised ("./.codex//config.toml" -> ".codex/config.toml").
// Code `isolation-invalid-value`.
absl::StatusOr<std::string> ParseHomeSeedPath(const nlohmann::json& value);

// Reads only `isolation.tier` from the operator's own config file
// ($XDG_CONFIG_HOME/nubos-pilot/config.json); nullopt when it names none
// (absent or null).
absl::StatusOr<std::optional<Tier>> ParseOperatorTier(const nlohmann::json& root);

// Parses the value of NP_EXEC_TIER. Empty means unset.
absl::StatusOr<std::optional<Tier>> ParseEnvTier(absl::string_view value);

// Validates one variable name for forwarding (`^[A-Za-z_][A-Za-z0-9_]*$`, and
// not HOME, which np-exec sets itself). Code: `isolation-bad-env-name`.
absl::Status ValidateEnvName(absl::string_view name);

// Splits "A,B" as given to --env, as the reference does: each item is
// trimmed of ASCII whitespace and empty items are dropped (" A , B " and
// "A,,B" are A and B); each remaining name is validated, so one that is still
// malformed after trimming ("A B", "A=1") is `isolation-bad-env-name`.
absl::StatusOr<std::vector<std::string>> ParseEnvList(absl::string_view list);

// The tier's description with what this project configured taken into
// account: a container tier whose `isolation.container.network` is "bridge"
// or "host" does not restrict the network, and says so; "allowlist" still
// restricts it, names the list and what an allowed host can still carry. A
// persistent home adds what one spawn can leave there for the next.
TierDescription DescribeConfiguredTier(Tier tier, const ContainerConfig& container);

}  // namespace np

#endif  // NP_EXEC_CORE_CONFIG_H_
