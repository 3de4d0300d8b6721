// `np-exec warm [--json]`: the caller's warm sandboxes (core/warm.h), and
// `np-exec warm --stop [--all]`: ends those of the project the working
// directory is in (of every project with --all), each once its current spawn
// has ended.
#include <time.h>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "launcher/output.h"
#include "launcher/state/state_store.h"
#include "launcher/verbs.h"
#include "launcher/warm/registry.h"

namespace np {

nlohmann::json WarmSandboxesJson(const HostFacts& host) {
  nlohmann::json out = nlohmann::json::array();
  absl::StatusOr<StateStore> store = OpenStateStore(host);
  if (!store.ok()) return out;
  absl::StatusOr<warm::OwnedFd> dir = warm::OpenWarmDir(*store);
  if (!dir.ok()) return out;
  for (nlohmann::json& sandbox : warm::ListSandboxes(dir->get())) out.push_back(std::move(sandbox));
  return out;
}

std::string WarmSandboxesText(const nlohmann::json& sandboxes) {
  if (sandboxes.empty()) return "no warm sandboxes\n";
  std::string out;
  const long long now = static_cast<long long>(time(nullptr));
  for (const nlohmann::json& sandbox : sandboxes) {
    absl::StrAppend(&out, sandbox.value("runtime", "?"), " ", sandbox.value("program", "?"), " in ",
                    sandbox.value("project", "?"), ": ",
                    sandbox.value("busy", false) ? "running a spawn" : "idle", ", up ",
                    now - sandbox.value("started", now), " s, ends after ",
                    sandbox.value("idle_seconds", 0), " s idle\n");
  }
  return out;
}

absl::StatusOr<Outcome> VerbWarm(const CommandLine& cl, const HostFacts& host) {
  if (!cl.warm_stop) {
    const nlohmann::json sandboxes = WarmSandboxesJson(host);
    if (cl.json) {
      WriteJson({{"warm_sandboxes", sandboxes}});
    } else {
      WriteAll(1, WarmSandboxesText(sandboxes));
    }
    return Outcome{0};
  }
  std::string project;
  if (!cl.warm_all) {
    if (!host.project.ok() || !host.project->found()) {
      return MakeError(absl::StatusCode::kFailedPrecondition, "not-in-project",
                       "warm --stop ends the warm sandboxes of the project the working directory "
                       "is in, and it is in none; warm --stop --all ends every project's");
    }
    project = host.project->root;
  }
  absl::StatusOr<StateStore> store = OpenStateStore(host);
  if (!store.ok()) return store.status();
  absl::StatusOr<warm::OwnedFd> dir = warm::OpenWarmDir(*store);
  if (!dir.ok()) return dir.status();
  const int asked = warm::StopSandboxes(dir->get(), project);
  if (cl.json) {
    WriteJson({{"stopped", asked}});
  } else {
    WriteAll(1,
             absl::StrCat("asked ", asked, " warm sandbox", asked == 1 ? "" : "es", " to end\n"));
  }
  return Outcome{0};
}

}  // namespace np
