#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/errors.h"
#include "launcher/output.h"
#include "launcher/verbs.h"

#ifndef NP_EXEC_VERSION
#define NP_EXEC_VERSION "0.0.0"
#endif

namespace np {
namespace {

// The man page (np-exec.1) repeats these synopses; tests/cli_docs_test keeps
// the two in agreement.
constexpr absl::string_view kGeneral =
    R"(np-exec - run every agent spawn through nubos-pilot's configured isolation tier

Usage:
  np-exec [--env NAME[,NAME...]] [--] PROGRAM [ARGS...]   run PROGRAM through the tier
  np-exec SCRIPT.js|.cjs|.mjs [ARGS...]                   run it with node, through the tier
  node ARGS...     (np-exec reached through a shim named node, claude, ...)
  np-exec status [--json]
  np-exec describe <direct|worktree|container> [--json] [--runtime R]
  np-exec probe [--json] [--runtime R]
  np-exec wrap [--workdir PATH] [--env NAME[,NAME...]] -- PROGRAM [ARGS...]
  np-exec doctor [--json] [--deep]
  np-exec shims install DIR [NAME...] [--preload]
  np-exec shims list [DIR] [--json]
  np-exec shims remove DIR NAME... [--json]
  np-exec which NAME [--json]
  np-exec trust [--show | --revoke] [--yes] [--json]
  np-exec home [--reset] [--json]
  np-exec warm [--stop [--all]] [--json]
  np-exec init [--runtime R] [--agent NAME[,NAME...]]... [--json]
  np-exec --help | --version | VERB --help

Tiers (isolation.tier in .nubos-pilot/config.json):
  direct     no isolation: the program has your whole account (the default)
  worktree   version isolation only; rights unchanged from direct
  container  rights isolation: the project mounted, nothing else, no network

A configured tier is never silently downgraded: when the container tier cannot
be delivered, np-exec refuses (exit 69) and the program does not run.

Exit status (run path): the program's own (128+n for signal n); 125 np-exec
failed before running anything; 126 found but not executable; 127 not found;
69 refused because the configured tier is unavailable. Verbs exit 0 or 1.

Errors are one line on stderr, np-exec: error: MESSAGE (CODE); the JSON
envelope {"code", "message", "details"} instead with NP_EXEC_ERROR_FORMAT=json
or for a verb run with --json.
)";

constexpr absl::string_view kStatus =
    R"(Usage: np-exec status [--json]

The effective tier, which source decided it (default, config, operator, env,
worktree_isolation), what the tier does not protect against, the configured
runtime and whether it is usable, and the image. Exits 1 when the container
tier is configured and cannot be delivered: its runtime is not usable, or its
image is missing and pull is "never" (isolation-image-missing), as doctor.
)";

constexpr absl::string_view kDescribe =
    R"(Usage: np-exec describe <direct|worktree|container> [--json] [--runtime R]

The tier's guarantees as data: isolates_versions, isolates_rights,
network_restricted, summary, use_when, does_not_protect_against.
--runtime bwrap describes the container tier on bubblewrap.
)";

constexpr absl::string_view kProbe =
    R"(Usage: np-exec probe [--json] [--runtime R]

Asks the configured (or given) runtime whether it is usable: docker and podman
through their API socket, bubblewrap with a no-op sandbox. Prints
{available, bin, version} or {available:false, reason, detail}; exits 1 when
unavailable. Reasons: runtime-not-installed, daemon-unreachable,
runtime-untrusted (only matches outside trusted system directories).
)";

constexpr absl::string_view kWrap =
    R"(Usage: np-exec wrap [--workdir PATH] [--env NAME[,NAME...]] -- PROGRAM [ARGS...]

Prints the plan for running PROGRAM and runs nothing: on the container tier
{tier, wrapped:true, bin, args, workdir, project_mount}; on direct and worktree
{tier, wrapped:false, bin, args, note}. --workdir PATH is where the project is
mounted inside (as isolation.container.workdir; the reference's meaning); a
PATH that cannot be a mount point is an error, never a weaker plan. A printed
plan is safe to run as printed: only the forwarded names reach the inside.
Exits 1 when the container tier is configured and cannot be delivered.
)";

constexpr absl::string_view kDoctor =
    R"(Usage: np-exec doctor [--json] [--deep]

The one place to look: the effective tier and its source, what it does not
protect against, the runtime and its version, whether the image is present and
pinned, shims on PATH (and each one with nothing real behind it), the
LD_PRELOAD interposer, the audit log and its last refusal. --deep also runs a
no-op container and says how it ended. Exits 1 when the configured tier
cannot be delivered.
)";

constexpr absl::string_view kShims =
    R"(Usage: np-exec shims install DIR [NAME...] [--preload]
       np-exec shims list [DIR] [--json]
       np-exec shims remove DIR NAME... [--json]

install creates DIR and symlinks NAME (default: node) in it to np-exec, then
prints the line that puts DIR first on PATH. With --preload, also prints the
line that loads the LD_PRELOAD interposer, which wraps hosts that exec node by
absolute path.
list shows each shim in DIR (without DIR: in every PATH entry holding one)
and the real program it reaches on PATH, or that nothing real is behind it
(shim-no-program: a spawn of it exits 127).
remove deletes the named shims from DIR. Only np-exec's shims (links to
np-exec) are removed; anything else is refused (shim-not-a-shim) and nothing
is touched.
)";

constexpr absl::string_view kWhich =
    R"(Usage: np-exec which NAME [--json]

What a spawn of NAME runs here: the np-exec shim PATH finds first and its
PATH entry (or what PATH finds instead), the real program behind it and its
PATH entry, and the tier (with its source) a spawn would run on in the current
directory. Exits 1 when a spawn would find no program (shim-no-program,
program-not-found).
)";

constexpr absl::string_view kTrust =
    R"(Usage: np-exec trust [--show | --revoke] [--yes] [--json]

Trusts the exact content of np-exec's part of this project's config
(isolation and workflow.worktree_isolation), with the tier it yields: a
project file that widens the container tier (network, allow_hosts, mounts,
env, user, a weaker runtime, pull "missing") is refused until the operator
trusts it, and any later change needs trust again. It also accepts a tier
lowered since the project last ran. It shows each key changed since the
content trusted before and warns of risky widenings (a credential folder
mounted, a secret-looking variable, the open network, root); on a terminal
it then asks, --yes does not. --show prints the record with the same review,
--revoke forgets the trust. The record lives in $XDG_STATE_HOME/np-exec/.
)";

constexpr absl::string_view kWarm =
    R"(Usage: np-exec warm [--stop [--all]] [--json]

Lists your warm sandboxes (isolation.container.warm): the runtime, the first
program, the project, whether a spawn runs in it, and its idle time. --stop
ends this project's warm sandboxes, each once its current spawn has ended;
--all every project's.
)";

constexpr absl::string_view kHome =
    R"(Usage: np-exec home [--reset] [--json]

Shows where this project's persistent agent home is kept
($XDG_STATE_HOME/np-exec/homes/, one directory per project, mode 0700) and
its size. With isolation.container.home "persistent" it is the sandbox's
HOME, so an agent's login and settings survive between spawns of this project
only; isolation.container.home_seed files of your HOME are copied into it when
it is created. --reset removes it (never following a link the program left in
it); the next spawn creates and seeds a new one. A running spawn holds it:
--reset then refuses with agent-home-in-use.
)";

constexpr absl::string_view kInit =
    R"(Usage: np-exec init [--runtime R] [--agent NAME[,NAME...]]... [--json]

Writes .nubos-pilot/config.json in the working directory for what this machine
has, and never over an existing one (init-config-exists). The runtime: R when
given (init-runtime-unavailable when it cannot be used), else docker or podman
when the engine answers and holds an agent image (np-agent-NAME:local; np-exec
pulls nothing), else bubblewrap when it builds a sandbox (no image, no group),
else an engine with no agent image yet (it names the image to build). None
usable is init-no-runtime, with each runtime's cause and fix. The agents
(claude, codex, gemini): those given, else those the engine holds images of
(bubblewrap: those on PATH, each mounted at its own path); each gets its API
host on the egress allowlist and its API key forwarded by name. Adds
.nubos-pilot/audit/ to .gitignore, trusts exactly what it wrote (np-exec
trust) and prints the next steps. Writes nothing through a link.
)";

}  // namespace

absl::string_view HelpText(absl::string_view topic) {
  if (topic.empty() || topic == "help") return kGeneral;
  if (topic == "status") return kStatus;
  if (topic == "describe") return kDescribe;
  if (topic == "probe") return kProbe;
  if (topic == "wrap") return kWrap;
  if (topic == "doctor") return kDoctor;
  if (topic == "shims") return kShims;
  if (topic == "which") return kWhich;
  if (topic == "trust") return kTrust;
  if (topic == "home") return kHome;
  if (topic == "warm") return kWarm;
  if (topic == "init") return kInit;
  return {};
}

absl::StatusOr<Outcome> VerbHelp(const CommandLine& cl, const HostFacts& /*host*/) {
  absl::string_view text = HelpText(cl.help_topic);
  if (text.empty()) {
    return MakeError(absl::StatusCode::kInvalidArgument, "isolation-unknown-verb",
                     absl::StrCat("no help for \"", cl.help_topic,
                                  "\". Verbs: ", absl::StrJoin(VerbNames(), ", ")));
  }
  WriteAll(1, text);
  return Outcome{0};
}

absl::StatusOr<Outcome> VerbVersion() {
  WriteAll(1, absl::StrCat("np-exec ", NP_EXEC_VERSION, "\n"));
  return Outcome{0};
}

}  // namespace np
