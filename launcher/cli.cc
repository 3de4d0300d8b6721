#include "launcher/cli.h"

#include <functional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/bwrap_argv.h"
#include "core/config.h"
#include "core/egress_entry.h"
#include "core/errors.h"
#include "core/paths.h"
#include "core/plan.h"
#include "core/warm.h"
#include "launcher/watchdog.h"

namespace np {
namespace {

absl::Status Usage(absl::string_view message) {
  return MakeError(absl::StatusCode::kInvalidArgument, "usage",
                   absl::StrCat(message, "; see np-exec --help"));
}

// Reads "--name VALUE" or "--name=VALUE" at args[*i]; advances *i.
bool TakeOption(absl::Span<char* const> args, size_t* i, absl::string_view name, std::string* value,
                absl::Status* error) {
  absl::string_view arg = args[*i];
  if (arg == name) {
    if (*i + 1 >= args.size()) {
      *error = Usage(absl::StrCat(name, " needs a value"));
      return true;
    }
    *value = args[++*i];
    return true;
  }
  if (absl::StartsWith(arg, name) && arg.size() > name.size() && arg[name.size()] == '=') {
    *value = std::string(arg.substr(name.size() + 1));
    return true;
  }
  return false;
}

absl::Status AddEnv(const std::string& list, CommandLine* cl) {
  absl::StatusOr<std::vector<std::string>> names = ParseEnvList(list);
  if (!names.ok()) return names.status();
  cl->env_names.insert(cl->env_names.end(), names->begin(), names->end());
  return absl::OkStatus();
}

bool IsHelp(absl::string_view arg) { return arg == "--help" || arg == "-h"; }

// Options of the read-only verbs: --json, --runtime R, --deep.
absl::Status ParseVerbOptions(absl::Span<char* const> args, CommandLine* cl,
                              std::vector<std::string>* positional) {
  for (size_t i = 0; i < args.size(); ++i) {
    absl::string_view arg = args[i];
    absl::Status error;
    std::string value;
    if (IsHelp(arg)) {
      cl->verb = Verb::kHelp;
      return absl::OkStatus();
    }
    if (arg == "--json") {
      cl->json = true;
    } else if ((cl->help_topic == "doctor") && arg == "--deep") {
      cl->deep = true;
    } else if ((cl->help_topic == "shims") && arg == "--preload") {
      cl->preload = true;
    } else if (cl->help_topic == "trust" && arg == "--show") {
      cl->trust_show = true;
    } else if (cl->help_topic == "trust" && arg == "--revoke") {
      cl->trust_revoke = true;
    } else if (cl->help_topic == "trust" && (arg == "--yes" || arg == "-y")) {
      cl->trust_yes = true;
    } else if (cl->help_topic == "home" && arg == "--reset") {
      cl->home_reset = true;
    } else if (cl->help_topic == "warm" && arg == "--stop") {
      cl->warm_stop = true;
    } else if (cl->help_topic == "warm" && arg == "--all") {
      cl->warm_all = true;
    } else if (cl->help_topic == "init" && TakeOption(args, &i, "--agent", &value, &error)) {
      if (!error.ok()) return error;
      for (absl::string_view agent : absl::StrSplit(value, ',', absl::SkipEmpty())) {
        cl->init_agents.emplace_back(agent);
      }
    } else if (TakeOption(args, &i, "--runtime", &cl->runtime, &error)) {
      if (!error.ok()) return error;
    } else if (absl::StartsWith(arg, "-")) {
      return Usage(absl::StrCat("unknown option ", arg, " for ", cl->help_topic));
    } else {
      positional->emplace_back(arg);
    }
  }
  return absl::OkStatus();
}

// One option of a verb that takes a program: its name, whether a value
// follows it, and what taking it does.
struct ProgramOption {
  absl::string_view name;
  bool takes_value;
  std::function<absl::Status(std::string value)> take;
};

// How a verb that takes a program reads its arguments.
struct ProgramSyntax {
  std::vector<ProgramOption> options;
  // The run path: the first argument that is not an option starts the
  // program. Elsewhere only "--" ends the options.
  bool program_without_separator = false;
  // The error for an argument that is no option of the verb.
  std::function<absl::Status(absl::string_view arg)> unknown;
};

// Parses [OPTIONS...] [--] PROGRAM ARGS... into cl->program, the program's
// own arguments untouched; returns whether "--" came before the program.
// The one loop the run path, wrap, sandbox-exec and egress-entry share.
absl::StatusOr<bool> ParseOptionsThenProgram(absl::Span<char* const> args,
                                             const ProgramSyntax& syntax, CommandLine* cl) {
  bool separator = false;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const absl::string_view arg = args[i];
    if (arg == "--") {
      separator = true;
      ++i;
      break;
    }
    const ProgramOption* matched = nullptr;
    std::string value;
    absl::Status error;
    for (const ProgramOption& option : syntax.options) {
      if (option.takes_value ? TakeOption(args, &i, option.name, &value, &error)
                             : arg == option.name) {
        matched = &option;
        break;
      }
    }
    if (matched != nullptr) {
      if (!error.ok()) return error;
      absl::Status taken = matched->take(std::move(value));
      if (!taken.ok()) return taken;
      continue;
    }
    if (syntax.program_without_separator && !absl::StartsWith(arg, "-")) break;
    return syntax.unknown(arg);
  }
  for (; i < args.size(); ++i) cl->program.emplace_back(args[i]);
  return separator;
}

ProgramOption EnvOption(CommandLine* cl) {
  return {"--env", true, [cl](std::string value) { return AddEnv(value, cl); }};
}

ProgramOption StringOption(absl::string_view name, std::string* field) {
  return {name, true, [field](std::string value) {
            *field = std::move(value);
            return absl::OkStatus();
          }};
}

// wrap's command follows "--". Without one, wrap has no command to plan, which
// is the reference's `isolation-wrap-no-command` (`np-exec wrap node`), not
// a usage error.
absl::Status WrapNoCommand() {
  return MakeError(absl::StatusCode::kInvalidArgument, "isolation-wrap-no-command",
                   "wrap needs a program after --: np-exec wrap -- PROGRAM [ARGS...]");
}

absl::Status ParseWrap(absl::Span<char* const> args, CommandLine* cl) {
  bool has_separator = false;
  for (absl::string_view arg : args) {
    if (IsHelp(arg)) {
      cl->verb = Verb::kHelp;
      return absl::OkStatus();
    }
    if (arg == "--") {
      has_separator = true;
      break;
    }
  }
  if (!has_separator) return WrapNoCommand();
  ProgramSyntax syntax;
  syntax.options = {StringOption("--workdir", &cl->workdir),
                    EnvOption(cl),
                    // wrap always prints JSON; --json is accepted for symmetry.
                    {"--json", false, [cl](std::string) {
                       cl->json = true;
                       return absl::OkStatus();
                     }}};
  syntax.unknown = [](absl::string_view arg) {
    return Usage(absl::StrCat("wrap takes [--workdir PATH] [--env NAMES] -- PROGRAM; got ", arg));
  };
  absl::StatusOr<bool> parsed = ParseOptionsThenProgram(args, syntax, cl);
  if (!parsed.ok()) return parsed.status();
  if (cl->program.empty() || cl->program.front().empty()) return WrapNoCommand();
  return absl::OkStatus();
}

// sandbox-exec --runtime R --project P [--mount-point M] [--image I] [--account-view DIR]
//              [--env NAMES] -- BIN ARGS...
absl::Status ParseSandboxExec(absl::Span<char* const> args, CommandLine* cl) {
  ProgramSyntax syntax;
  syntax.options = {StringOption("--runtime", &cl->runtime),
                    StringOption("--project", &cl->sandbox_project),
                    StringOption("--mount-point", &cl->sandbox_mount_point),
                    StringOption("--image", &cl->sandbox_image),
                    StringOption("--account-view", &cl->sandbox_account_view),
                    EnvOption(cl)};
  syntax.unknown = [](absl::string_view) {
    return Usage(
        "sandbox-exec takes --runtime R --project P [--mount-point M] [--image I] "
        "[--account-view DIR] [--env NAMES] -- BIN ARGS...");
  };
  return ParseOptionsThenProgram(args, syntax, cl).status();
}

constexpr absl::string_view kEgressEntryUsage =
    "egress-entry takes --port P --socket S -- PROGRAM ARGS...";

// egress-entry --port P --socket S -- PROGRAM ARGS...
absl::Status ParseEgressEntry(absl::Span<char* const> args, CommandLine* cl) {
  ProgramSyntax syntax;
  syntax.options = {StringOption("--socket", &cl->egress_socket),
                    {"--port", true, [cl](std::string value) {
                       int port = 0;
                       if (!absl::SimpleAtoi(value, &port) || port < 1 || port > 65535) {
                         return Usage(kEgressEntryUsage);
                       }
                       cl->egress_port = port;
                       return absl::OkStatus();
                     }}};
  syntax.unknown = [](absl::string_view) { return Usage(kEgressEntryUsage); };
  absl::StatusOr<bool> parsed = ParseOptionsThenProgram(args, syntax, cl);
  if (!parsed.ok()) return parsed.status();
  if (cl->egress_port < 0 || cl->egress_socket.empty() || cl->program.empty() ||
      cl->program.front().empty()) {
    return Usage(kEgressEntryUsage);
  }
  return absl::OkStatus();
}

// mount-check [--expect TARGET DEV:INO]... -- PROGRAM ARGS..., or its
// remote form (core/mount_pins.h RemoteMountCheckPrefix).
absl::Status ParseMountCheck(absl::Span<char* const> args, CommandLine* cl) {
  size_t end = 0;
  while (end < args.size() && absl::string_view(args[end]) != "--") ++end;
  if (end >= args.size() || end + 1 >= args.size() || absl::string_view(args[end + 1]).empty()) {
    return Usage("mount-check takes --expect TARGET DEV:INO ... -- PROGRAM ARGS...");
  }
  const std::vector<std::string> options(args.begin(), args.begin() + static_cast<ptrdiff_t>(end));
  absl::Status parsed = ParseMountCheckOptions(options, cl->mount_expectations, cl->remote_project);
  if (!parsed.ok()) return parsed;
  cl->program.assign(args.begin() + static_cast<ptrdiff_t>(end + 1), args.end());
  return absl::OkStatus();
}

// argv-entry --fd N
absl::Status ParseArgvEntry(absl::Span<char* const> args, CommandLine* cl) {
  int fd = -1;
  if (args.size() != 2 || absl::string_view(args[0]) != "--fd" || !absl::SimpleAtoi(args[1], &fd) ||
      fd < 3) {
    return Usage("argv-entry takes --fd N");
  }
  cl->argv_fd = fd;
  return absl::OkStatus();
}

absl::Status ParseRun(absl::Span<char* const> args, CommandLine* cl) {
  ProgramSyntax syntax;
  syntax.options = {EnvOption(cl)};
  syntax.program_without_separator = true;
  syntax.unknown = [](absl::string_view arg) {
    return Usage(absl::StrCat("unknown option ", arg));
  };
  absl::StatusOr<bool> separator = ParseOptionsThenProgram(args, syntax, cl);
  if (!separator.ok()) return separator.status();
  cl->explicit_program = *separator;
  if (cl->program.empty()) return Usage("no program given");
  if (!cl->explicit_program && IsNodeScript(cl->program.front())) {
    cl->script_mode = true;
    cl->program.insert(cl->program.begin(), "node");
  }
  return absl::OkStatus();
}

// shims install DIR [NAME...] [--preload] | list [DIR] | remove DIR NAME...
absl::Status ParseShims(const std::vector<std::string>& positional, CommandLine* cl) {
  constexpr absl::string_view kUsage =
      "shims takes: install DIR [NAME...] [--preload] | list [DIR] | remove DIR NAME...";
  if (positional.empty()) return Usage(kUsage);
  cl->shims_action = positional.front();
  const size_t operands = positional.size() - 1;
  if (cl->preload && cl->shims_action != "install") {
    return Usage(absl::StrCat("--preload is for shims install; ", kUsage));
  }
  if (cl->shims_action == "install" && operands >= 1) {
    cl->shims_dir = positional[1];
    cl->shim_names.assign(positional.begin() + 2, positional.end());
    if (cl->shim_names.empty()) cl->shim_names.push_back("node");
    return absl::OkStatus();
  }
  if (cl->shims_action == "list" && operands <= 1) {
    if (operands == 1) cl->shims_dir = positional[1];
    return absl::OkStatus();
  }
  if (cl->shims_action == "remove" && operands >= 2) {
    cl->shims_dir = positional[1];
    cl->shim_names.assign(positional.begin() + 2, positional.end());
    return absl::OkStatus();
  }
  return Usage(kUsage);
}

// status, probe, doctor.
absl::Status NoOperands(const std::vector<std::string>& positional, CommandLine* cl) {
  if (positional.empty()) return absl::OkStatus();
  return Usage(absl::StrCat(cl->help_topic, " takes no arguments; got ", positional.front()));
}

absl::Status DescribeOperands(const std::vector<std::string>& positional, CommandLine* cl) {
  // `describe ""` names no tier, as in the reference (an empty argument is
  // no argument there), rather than an unknown one.
  if (positional.empty() || positional.front().empty()) {
    return MakeError(absl::StatusCode::kInvalidArgument, "isolation-missing-tier",
                     "describe needs a tier: np-exec describe <direct|worktree|container>");
  }
  if (positional.size() > 1) return Usage("describe takes one tier");
  cl->tier = positional.front();
  return absl::OkStatus();
}

absl::Status TrustOperands(const std::vector<std::string>& positional, CommandLine* cl) {
  if (!positional.empty()) return Usage("trust takes [--show | --revoke] [--yes] [--json]");
  if (cl->trust_show && cl->trust_revoke) return Usage("trust takes --show or --revoke, not both");
  return absl::OkStatus();
}

absl::Status WhichOperands(const std::vector<std::string>& positional, CommandLine* cl) {
  if (positional.size() != 1) return Usage("which takes one NAME: np-exec which NAME [--json]");
  cl->which_name = positional.front();
  return absl::OkStatus();
}

// How each verb reads the rest of its command line: a verb that takes a
// program parses all of it itself; the others take the shared options
// (ParseVerbOptions), then check their operands.
// container-watchdog OPTIONS...: its options are np-exec's own, read by the
// watchdog itself (watchdog.h); kept as given.
absl::Status ParseWatchdog(absl::Span<char* const> args, CommandLine* cl) {
  cl->program.assign(args.begin(), args.end());
  return absl::OkStatus();
}

absl::Status HomeOperands(const std::vector<std::string>& positional, CommandLine* cl) {
  (void)cl;
  if (!positional.empty()) return Usage("home takes [--reset] [--json]");
  return absl::OkStatus();
}

absl::Status WarmOperands(const std::vector<std::string>& positional, CommandLine* cl) {
  if (!positional.empty()) return Usage("warm takes [--stop [--all]] [--json]");
  if (cl->warm_all && !cl->warm_stop) return Usage("warm --all goes with --stop");
  return absl::OkStatus();
}

// keeper: no arguments (core/warm.h).
absl::Status ParseKeeper(absl::Span<char* const> args, CommandLine* cl) {
  (void)cl;
  if (!args.empty()) return Usage("keeper takes no arguments");
  return absl::OkStatus();
}

absl::Status InitOperands(const std::vector<std::string>& positional, CommandLine* cl) {
  (void)cl;
  if (!positional.empty()) {
    return Usage("init takes [--runtime R] [--agent NAME[,NAME...]]... [--json]");
  }
  return absl::OkStatus();
}

struct VerbRow {
  absl::string_view name;
  Verb verb;
  absl::Status (*operands)(const std::vector<std::string>& positional, CommandLine* cl);
  absl::Status (*program)(absl::Span<char* const> args, CommandLine* cl);
};

constexpr VerbRow kVerbRows[] = {
    {"status", Verb::kStatus, NoOperands, nullptr},
    {"probe", Verb::kProbe, NoOperands, nullptr},
    {"doctor", Verb::kDoctor, NoOperands, nullptr},
    {"describe", Verb::kDescribe, DescribeOperands, nullptr},
    {"trust", Verb::kTrust, TrustOperands, nullptr},
    {"shims", Verb::kShims, ParseShims, nullptr},
    {"which", Verb::kWhich, WhichOperands, nullptr},
    {"home", Verb::kHome, HomeOperands, nullptr},
    {"init", Verb::kInit, InitOperands, nullptr},
    {"wrap", Verb::kWrap, nullptr, ParseWrap},
    {kSandboxExecVerb, Verb::kSandboxExec, nullptr, ParseSandboxExec},
    {kEgressEntryVerb, Verb::kEgressEntry, nullptr, ParseEgressEntry},
    {kWatchdogVerb, Verb::kContainerWatchdog, nullptr, ParseWatchdog},
    {kArgvEntryVerb, Verb::kArgvEntry, nullptr, ParseArgvEntry},
    {kMountCheckVerb, Verb::kMountCheck, nullptr, ParseMountCheck},
    {"warm", Verb::kWarm, WarmOperands, nullptr},
    {kKeeperVerb, Verb::kKeeper, nullptr, ParseKeeper},
};

}  // namespace

const std::vector<std::string>& VerbNames() {
  static const auto* names =
      new std::vector<std::string>{"status", "describe", "probe", "wrap", "doctor", "shims",
                                   "which",  "trust",    "home",  "init", "help"};
  return *names;
}

bool InvokesVerb(absl::Span<char* const> argv) {
  if (argv.size() < 2 || BaseName(argv[0]) != "np-exec") return false;
  const absl::string_view first = argv[1];
  for (const std::string& verb : VerbNames()) {
    if (first == verb) return true;
  }
  return false;
}

bool AsksForJson(absl::Span<char* const> argv) {
  if (!InvokesVerb(argv)) return false;
  for (absl::string_view arg : argv.subspan(2)) {
    if (arg == "--") return false;
    if (arg == "--json") return true;
  }
  return false;
}

bool IsNodeScript(absl::string_view arg) {
  return absl::EndsWith(arg, ".js") || absl::EndsWith(arg, ".cjs") || absl::EndsWith(arg, ".mjs");
}

absl::StatusOr<CommandLine> ParseCommandLine(absl::Span<char* const> argv) {
  CommandLine cl;
  const std::string name = argv.empty() ? std::string("np-exec") : BaseName(argv[0]);
  absl::Span<char* const> args = argv.empty() ? argv : argv.subspan(1);
  if (name != "np-exec") {
    // Shim mode: every argument belongs to the program.
    cl.shim_mode = true;
    cl.program.push_back(name);
    for (char* arg : args) cl.program.emplace_back(arg);
    return cl;
  }
  if (args.empty()) return Usage("no program or verb given");
  absl::string_view first = args[0];
  if (IsHelp(first)) {
    cl.verb = Verb::kHelp;
    return cl;
  }
  if (first == "--version" || first == "-V") {
    cl.verb = Verb::kVersion;
    return cl;
  }
  absl::Span<char* const> rest = args.subspan(1);
  std::vector<std::string> positional;
  cl.help_topic = std::string(first);
  if (first == "help") {
    cl.verb = Verb::kHelp;
    cl.help_topic = rest.empty() ? "" : std::string(rest[0]);
    return cl;
  }
  for (const VerbRow& row : kVerbRows) {
    if (first != row.name) continue;
    cl.verb = row.verb;
    absl::Status parsed =
        row.program != nullptr ? row.program(rest, &cl) : ParseVerbOptions(rest, &cl, &positional);
    if (parsed.ok() && row.operands != nullptr && cl.verb != Verb::kHelp) {
      parsed = row.operands(positional, &cl);
    }
    if (!parsed.ok()) return parsed;
    return cl;
  }
  cl.help_topic.clear();
  absl::Status parsed = ParseRun(args, &cl);
  if (!parsed.ok()) return parsed;
  return cl;
}

}  // namespace np
