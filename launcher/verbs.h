// The verbs: status, describe, probe, wrap, doctor, shims, which, help, version, and
// the internal sandbox-exec a printed bubblewrap plan runs. Each writes its
// own result on stdout and returns its Outcome (exit status 0 or 1) or the
// error app.cc reports (outcome.h).
#ifndef NP_EXEC_LAUNCHER_VERBS_H_
#define NP_EXEC_LAUNCHER_VERBS_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/settings.h"
#include "launcher/cli.h"
#include "launcher/host.h"
#include "launcher/outcome.h"
#include "nlohmann/json.hpp"

namespace np {

absl::StatusOr<Outcome> VerbStatus(const CommandLine& cl, const HostFacts& host);
absl::StatusOr<Outcome> VerbDescribe(const CommandLine& cl, const HostFacts& host);
absl::StatusOr<Outcome> VerbProbe(const CommandLine& cl, const HostFacts& host);
absl::StatusOr<Outcome> VerbWrap(const CommandLine& cl, const HostFacts& host);
absl::StatusOr<Outcome> VerbDoctor(const CommandLine& cl, const HostFacts& host);
absl::StatusOr<Outcome> VerbShims(const CommandLine& cl, const HostFacts& host);
absl::StatusOr<Outcome> VerbWhich(const CommandLine& cl, const HostFacts& host);
absl::StatusOr<Outcome> VerbHelp(const CommandLine& cl, const HostFacts& host);
absl::StatusOr<Outcome> VerbVersion();
// home [--reset]: the project's persistent agent home (agent_home.h).
absl::StatusOr<Outcome> VerbHome(const CommandLine& cl, const HostFacts& host);
// {mode, path, exists, bytes, seed} of the project's home, for home and doctor.
nlohmann::json AgentHomeJson(const Settings& settings, const HostFacts& host);
// That as one line of text.
std::string AgentHomeText(const nlohmann::json& info);
// init [--runtime R] [--agent NAME]...: writes .nubos-pilot/config.json for
// what this machine has, adds the audit log to .gitignore and trusts what it
// wrote (verbs_init.cc).
absl::StatusOr<Outcome> VerbInit(const CommandLine& cl, const HostFacts& host);
// trust is in verbs_trust.h.
// sandbox-exec: builds bubblewrap's environment by name and execs it.
absl::StatusOr<Outcome> VerbSandboxExec(const CommandLine& cl, const HostFacts& host,
                                        const Reporter& reporter);
// egress-entry: starts the egress bridge inside the sandbox and execs the program.
absl::StatusOr<Outcome> VerbEgressEntry(const CommandLine& cl, const HostFacts& host);
// mount-check: the sandbox's entry point on docker and podman (and in a
// printed plan): each pinned mount is what np-exec checked, then the program.
absl::StatusOr<Outcome> VerbMountCheck(const CommandLine& cl, const HostFacts& host);
// warm [--stop [--all]]: lists the caller's warm sandboxes, or ends those of
// the project (every project's with --all) (core/warm.h).
absl::StatusOr<Outcome> VerbWarm(const CommandLine& cl, const HostFacts& host);
// The caller's warm sandboxes, for warm, status and doctor, and as text.
nlohmann::json WarmSandboxesJson(const HostFacts& host);
std::string WarmSandboxesText(const nlohmann::json& sandboxes);
// argv-entry: reads the program's argv from a descriptor inside the sandbox and execs it.
absl::StatusOr<Outcome> VerbArgvEntry(const CommandLine& cl, const HostFacts& host);

// The help text of a verb ("" for the general help); empty when unknown.
absl::string_view HelpText(absl::string_view topic);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_VERBS_H_
