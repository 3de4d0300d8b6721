// Parsing np-exec's command line into one typed request; nothing runs here.
//
// Hand-written over absl::Span rather than absl::flags: the verbs take a few
// options each, a program's own arguments after the first positional must
// pass through untouched, and absl::flags' global registry would cost start-up
// time on the run path.
#ifndef NP_EXEC_LAUNCHER_CLI_H_
#define NP_EXEC_LAUNCHER_CLI_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/mount_pins.h"

namespace np {

enum class Verb {
  kRun,
  kStatus,
  kDescribe,
  kProbe,
  kWrap,
  kDoctor,
  kShims,
  kHelp,
  kVersion,
  kTrust,
  kWhich,
  kHome,               // home [--reset]: the project's persistent agent home.
  kInit,               // init [--runtime R] [--agent NAME]...: writes a working config.
  kSandboxExec,        // Internal: what a printed bubblewrap plan runs.
  kEgressEntry,        // Internal: the sandbox's entry point on network "allowlist".
  kContainerWatchdog,  // Internal: outlives a killed np-exec (watchdog.h).
  kArgvEntry,          // Internal: the sandbox's entry point for an argv past bubblewrap's limit.
  kMountCheck,         // Internal: the sandbox's entry point that checks pinned mounts.
  kWarm,               // warm [--stop [--all]]: the warm sandboxes (core/warm.h).
  kKeeper,             // Internal: a warm sandbox's PID 1 (launcher/warm/keeper.h).
};

struct CommandLine {
  Verb verb = Verb::kRun;
  bool json = false;
  bool deep = false;                 // doctor --deep
  bool preload = false;              // shims install --preload
  bool trust_show = false;           // trust --show
  bool trust_revoke = false;         // trust --revoke
  bool trust_yes = false;            // trust --yes: no question on a terminal
  bool home_reset = false;           // home --reset
  bool warm_stop = false;            // warm --stop
  bool warm_all = false;             // warm --stop --all: every project's
  bool shim_mode = false;            // Reached through a shim named after a program.
  bool script_mode = false;          // np-exec SCRIPT.js: runs node.
  bool explicit_program = false;     // "--" came before the program.
  std::string help_topic;            // VERB --help; empty for the general help.
  std::string tier;                  // describe
  std::string runtime;               // probe/describe --runtime
  std::string workdir;               // wrap --workdir
  std::string sandbox_project;       // sandbox-exec --project
  std::string sandbox_mount_point;   // sandbox-exec --mount-point (where the project is inside)
  std::string sandbox_image;         // sandbox-exec --image (the image the argv runs)
  std::string sandbox_account_view;  // sandbox-exec --account-view (the view the argv binds)
  std::string shims_action;          // shims install | list | remove
  std::string shims_dir;             // shims install DIR, list [DIR], remove DIR
  std::vector<std::string> shim_names;
  std::string which_name;                            // which NAME
  std::vector<std::string> init_agents;              // init --agent NAME[,NAME]
  int egress_port = -1;                              // egress-entry --port
  std::string egress_socket;                         // egress-entry --socket
  int argv_fd = -1;                                  // argv-entry --fd
  std::vector<MountExpectation> mount_expectations;  // mount-check --expect
  std::optional<RemoteProjectCheck> remote_project;  // mount-check's remote form
  std::vector<std::string> env_names;                // --env, validated
  std::vector<std::string> program;
};

// The verbs a person uses, for help and the unknown-verb error (the
// internal sandbox-exec is not among them).
const std::vector<std::string>& VerbNames();

// Parses argv (argv[0] included). Codes: `usage`, `isolation-unknown-verb`,
// `isolation-missing-tier`, `isolation-wrap-no-command`,
// `isolation-bad-env-name`.
absl::StatusOr<CommandLine> ParseCommandLine(absl::Span<char* const> argv);

// True when argv asks for a verb (np-exec VERB ...), whether or not the rest
// parses: a verb's own usage errors exit 1 like the verb, the run path's 125.
bool InvokesVerb(absl::Span<char* const> argv);

// True when argv asks for a verb and names --json among the verb's own
// arguments (before any "--"), whether or not the rest parses: the format of
// the error when it does not.
bool AsksForJson(absl::Span<char* const> argv);

// True for a path ending in .js, .cjs or .mjs.
bool IsNodeScript(absl::string_view arg);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_CLI_H_
