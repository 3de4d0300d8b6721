// home: where this project's persistent agent home is and how large
// (`np-exec home [--json]`), or clearing it (`np-exec home --reset`), which
// the next spawn follows with a new, freshly seeded home (agent_home.h).
#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "launcher/output.h"
#include "launcher/state/agent_home.h"
#include "launcher/verbs.h"
#include "launcher/verbs_trust.h"

namespace np {

nlohmann::json AgentHomeJson(const Settings& settings, const HostFacts& host) {
  nlohmann::json out = {
      {"mode", settings.config.container.persistent_home ? "persistent" : "ephemeral"}};
  absl::StatusOr<TrustSubject> subject = LoadTrustSubject(settings);
  absl::StatusOr<std::string> dir = HostStateStoreDir(host);
  if (!subject.ok() || !dir.ok()) return out;
  absl::StatusOr<StateStore> store = StateStore::Open(*dir, host.uid);
  if (!store.ok()) {
    out["error"] = ErrorCode(store.status());
    return out;
  }
  absl::StatusOr<AgentHomeInfo> info = InspectAgentHome(*store, subject->key);
  out["path"] = AgentHomePath(*dir, subject->key);
  if (!info.ok()) {
    out["error"] = ErrorCode(info.status());
    return out;
  }
  out["exists"] = info->exists;
  out["bytes"] = info->bytes;
  out["seed"] = settings.config.container.home_seed;
  return out;
}

absl::StatusOr<Outcome> VerbHome(const CommandLine& cl, const HostFacts& host) {
  absl::StatusOr<Settings> settings = LoadHostSettings(host);
  if (!settings.ok()) return settings.status();
  absl::StatusOr<TrustSubject> subject = LoadTrustSubject(*settings);
  if (!subject.ok()) return subject.status();
  if (cl.home_reset) {
    absl::StatusOr<StateStore> store = OpenStateStore(host);
    if (!store.ok()) return store.status();
    absl::StatusOr<bool> removed = ResetAgentHome(*store, subject->key);
    if (!removed.ok()) return removed.status();
    const std::string path = AgentHomePath(store->dir(), subject->key);
    if (cl.json) {
      WriteJson({{"path", path}, {"removed", *removed}});
    } else {
      WriteAll(1, *removed ? absl::StrCat("removed the persistent home ", path,
                                          "; the next spawn starts a new one\n")
                           : absl::StrCat("no persistent home at ", path, "\n"));
    }
    return Outcome{0};
  }
  const nlohmann::json info = AgentHomeJson(*settings, host);
  if (cl.json) {
    WriteJson(info);
  } else {
    WriteAll(1, absl::StrCat(AgentHomeText(info), "\n"));
  }
  return Outcome{0};
}

std::string AgentHomeText(const nlohmann::json& info) {
  const std::string mode = info.value("mode", "ephemeral");
  if (!info.contains("path")) {
    return mode == "persistent" ? "persistent (no place for it: no state directory)"
                                : "ephemeral (a tmpfs that vanishes with each sandbox)";
  }
  const std::string where = info["path"].get<std::string>();
  if (info.contains("error")) {
    return absl::StrCat(mode, " at ", where, " (", info["error"].get<std::string>(), ")");
  }
  return absl::StrCat(mode == "persistent" ? "persistent" : "ephemeral (a tmpfs each spawn)",
                      ", kept at ", where, ": ",
                      info["exists"].get<bool>()
                          ? absl::StrCat(info["bytes"].get<uint64_t>(), " bytes")
                          : std::string("not created yet"));
}

}  // namespace np
