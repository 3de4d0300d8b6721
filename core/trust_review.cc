#include "core/trust_review.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/paths.h"

namespace np {
namespace {

using nlohmann::json;

void Collect(const std::string& prefix, const json& before, const json& after,
             std::vector<ConfigChange>& out) {
  // An object that is absent on one side is named by its leaves (an empty
  // one by itself).
  if ((before.is_object() && before.empty() && after.is_null()) ||
      (before.is_null() && after.is_object() && after.empty())) {
    out.push_back({prefix, before, after});
    return;
  }
  if (before.is_object() && after.is_null()) {
    Collect(prefix, before, json::object(), out);
    return;
  }
  if (before.is_null() && after.is_object()) {
    Collect(prefix, json::object(), after, out);
    return;
  }
  if (before.is_object() && after.is_object()) {
    // Both ordered maps: one pass over the union of their keys.
    std::vector<std::string> keys;
    for (const auto& item : before.items()) keys.push_back(item.key());
    for (const auto& item : after.items()) {
      if (!before.contains(item.key())) keys.push_back(item.key());
    }
    std::sort(keys.begin(), keys.end());
    for (const std::string& key : keys) {
      const std::string dotted = prefix.empty() ? key : absl::StrCat(prefix, ".", key);
      Collect(dotted, before.value(key, json()), after.value(key, json()), out);
    }
    return;
  }
  if (before != after) out.push_back({prefix, before, after});
}

// Folders of a HOME whose contents are credentials or the settings every tool
// obeys (and so can be made to run commands).
constexpr absl::string_view kSensitiveInHome[] = {".ssh",
                                                  ".aws",
                                                  ".azure",
                                                  ".config",
                                                  ".gnupg",
                                                  ".kube",
                                                  ".docker",
                                                  ".netrc",
                                                  ".npmrc",
                                                  ".pypirc",
                                                  ".git-credentials",
                                                  ".gitconfig",
                                                  ".password-store",
                                                  ".local/share/keyrings",
                                                  ".bash_history",
                                                  ".claude",
                                                  ".codex",
                                                  ".gemini"};

// Why `path` (absolute, normalised) is worth a warning, or "".
std::string SensitivePath(absl::string_view path, absl::string_view home) {
  if (path == "/") return "the whole host file system";
  if (path == "/etc" || absl::StartsWith(path, "/etc/")) return "the host's system settings";
  if (!home.empty() && home != "/") {
    if (path == home) return "your whole home folder (keys, tokens, every tool's settings)";
    if (IsInside(home, path)) return "a folder that holds your home folder";
    for (absl::string_view name : kSensitiveInHome) {
      if (IsInside(path, absl::StrCat(home, "/", name))) {
        return absl::StrCat("~/", name, ", which holds credentials or settings that run commands");
      }
    }
  }
  if (IsInside(path, "/root")) return "root's home folder";
  return "";
}

constexpr absl::string_view kCredentialWords[] = {"KEY",     "TOKEN",      "SECRET", "PASSWORD",
                                                  "PASSWD",  "CREDENTIAL", "AUTH",   "COOKIE",
                                                  "SESSION", "PRIVATE"};

bool LooksLikeCredential(absl::string_view name) {
  const std::string upper = absl::AsciiStrToUpper(name);
  for (absl::string_view word : kCredentialWords) {
    if (absl::StrContains(upper, word)) return true;
  }
  return false;
}

bool IsRootUser(absl::string_view user) {
  const absl::string_view uid = user.substr(0, user.find(':'));
  if (uid == "root") return true;
  return !uid.empty() && std::all_of(uid.begin(), uid.end(), [](char c) { return c == '0'; });
}

std::string Quoted(const std::string& text) {
  return json(text).dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

std::vector<ConfigChange> ConfigChanges(const json& before, const json& after) {
  std::vector<ConfigChange> out;
  Collect("", before, after, out);
  return out;
}

std::vector<std::string> ChangedKeys(const std::vector<ConfigChange>& changes) {
  std::vector<std::string> keys;
  for (const ConfigChange& change : changes) keys.push_back(change.key);
  return keys;
}

std::vector<std::string> RiskWarnings(const ContainerConfig& container, absl::string_view home) {
  std::vector<std::string> warnings;
  for (const MountSpec& mount : container.mounts) {
    const std::string why = SensitivePath(mount.source, home);
    if (why.empty()) continue;
    // Quoted as JSON: a path from a repository's file may hold terminal
    // escapes, and this is printed to the operator's terminal.
    warnings.push_back(absl::StrCat(
        "mounts ", Quoted(mount.source), mount.writable ? " read-write" : "", ": ", why,
        "; the sandboxed program can read it", mount.writable ? " and change it" : "",
        " and, with any network, send it away"));
  }
  for (const std::string& seed : container.home_seed) {
    const std::string source = absl::StrCat(home, "/", seed);
    const std::string why = SensitivePath(source, home);
    if (why.empty()) continue;
    warnings.push_back(absl::StrCat("copies ~/", seed, " into the persistent home: ", why,
                                    "; the sandboxed program can read the copy"));
  }
  for (const std::string& name : container.env) {
    if (!LooksLikeCredential(name)) continue;
    warnings.push_back(absl::StrCat("forwards ", name,
                                    ", which looks like a credential: the sandboxed program and "
                                    "everything it runs can read it"));
  }
  for (const Credential& credential : container.credentials) {
    // Quoted as JSON: a repository's host name may hold terminal escapes.
    warnings.push_back(absl::StrCat(
        "sends $", credential.env, " from your environment to ", Quoted(credential.host),
        " in the header ", Quoted(credential.header),
        " with every request the sandboxed program makes there: make sure that host is the one "
        "the key is for"));
  }
  if (container.network == Network::kBridge) {
    warnings.push_back(
        "network \"bridge\": the sandbox can reach any host on the internet and your local "
        "network; \"allowlist\" lets through only the hosts you name");
  } else if (container.network == Network::kHost) {
    warnings.push_back(
        "network \"host\": the sandbox shares this machine's network, services listening on "
        "localhost included");
  }
  if (container.user.kind == UserSpec::Kind::kImage) {
    warnings.push_back(
        "user \"image\": the program runs as the image's own user, which is root in many images "
        "(\"runs as\" below says who)");
  } else if (container.user.kind == UserSpec::Kind::kExplicit && IsRootUser(container.user.value)) {
    warnings.push_back(
        absl::StrCat("user \"", container.user.value, "\": the program runs as root"));
  }
  return warnings;
}

}  // namespace np
