#include "launcher/cli.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/config.h"
#include "core/egress_entry.h"
#include "core/errors.h"
#include "core/paths.h"
#include "core/plan.h"

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
    } else if (cl->help_topic == "home" && arg == "--reset") {
      cl->home_reset = true;
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
  size_t i = 0;
  for (; i < args.size(); ++i) {
    absl::string_view arg = args[i];
    absl::Status error;
    std::string value;
    if (arg == "--") {
      ++i;
      break;
    }
    if (TakeOption(args, &i, "--workdir", &cl->workdir, &error)) {
      if (!error.ok()) return error;
    } else if (TakeOption(args, &i, "--env", &value, &error)) {
      if (!error.ok()) return error;
      absl::Status added = AddEnv(value, cl);
      if (!added.ok()) return added;
    } else if (arg == "--json") {
      cl->json = true;  // wrap always prints JSON; accepted for symmetry.
    } else {
      return Usage(absl::StrCat("wrap takes [--workdir PATH] [--env NAMES] -- PROGRAM; got ", arg));
    }
  }
  for (; i < args.size(); ++i) cl->program.emplace_back(args[i]);
  if (cl->program.empty() || cl->program.front().empty()) return WrapNoCommand();
  return absl::OkStatus();
}

// sandbox-exec --runtime R --project P [--env NAMES] -- BIN ARGS...
absl::Status ParseSandboxExec(absl::Span<char* const> args, CommandLine* cl) {
  size_t i = 0;
  for (; i < args.size(); ++i) {
    absl::Status error;
    std::string value;
    if (absl::string_view(args[i]) == "--") {
      ++i;
      break;
    }
    if (TakeOption(args, &i, "--runtime", &cl->runtime, &error) ||
        TakeOption(args, &i, "--project", &cl->sandbox_project, &error)) {
      if (!error.ok()) return error;
      continue;
    }
    if (!TakeOption(args, &i, "--env", &value, &error)) {
      return Usage("sandbox-exec takes --runtime R --project P [--env NAMES] -- BIN ARGS...");
    }
    if (!error.ok()) return error;
    absl::Status added = AddEnv(value, cl);
    if (!added.ok()) return added;
  }
  for (; i < args.size(); ++i) cl->program.emplace_back(args[i]);
  return absl::OkStatus();
}

// egress-entry --port P --socket S -- PROGRAM ARGS...
absl::Status ParseEgressEntry(absl::Span<char* const> args, CommandLine* cl) {
  constexpr absl::string_view kUsage = "egress-entry takes --port P --socket S -- PROGRAM ARGS...";
  size_t i = 0;
  for (; i < args.size(); ++i) {
    absl::Status error;
    std::string value;
    if (absl::string_view(args[i]) == "--") {
      ++i;
      break;
    }
    if (TakeOption(args, &i, "--socket", &cl->egress_socket, &error)) {
      if (!error.ok()) return error;
    } else if (TakeOption(args, &i, "--port", &value, &error)) {
      if (!error.ok()) return error;
      int port = 0;
      if (!absl::SimpleAtoi(value, &port) || port < 1 || port > 65535) return Usage(kUsage);
      cl->egress_port = port;
    } else {
      return Usage(kUsage);
    }
  }
  for (; i < args.size(); ++i) cl->program.emplace_back(args[i]);
  if (cl->egress_port < 0 || cl->egress_socket.empty() || cl->program.empty() ||
      cl->program.front().empty()) {
    return Usage(kUsage);
  }
  return absl::OkStatus();
}

absl::Status ParseRun(absl::Span<char* const> args, CommandLine* cl) {
  size_t i = 0;
  for (; i < args.size(); ++i) {
    absl::string_view arg = args[i];
    absl::Status error;
    std::string value;
    if (arg == "--") {
      cl->explicit_program = true;
      ++i;
      break;
    }
    if (TakeOption(args, &i, "--env", &value, &error)) {
      if (!error.ok()) return error;
      absl::Status added = AddEnv(value, cl);
      if (!added.ok()) return added;
      continue;
    }
    if (absl::StartsWith(arg, "-")) return Usage(absl::StrCat("unknown option ", arg));
    break;
  }
  for (; i < args.size(); ++i) cl->program.emplace_back(args[i]);
  if (cl->program.empty()) return Usage("no program given");
  if (!cl->explicit_program && IsNodeScript(cl->program.front())) {
    cl->script_mode = true;
    cl->program.insert(cl->program.begin(), "node");
  }
  return absl::OkStatus();
}

}  // namespace

const std::vector<std::string>& VerbNames() {
  static const auto* names = new std::vector<std::string>{
      "status", "describe", "probe", "wrap", "doctor", "shims", "trust", "home", "help"};
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
  if (first == "status" || first == "probe" || first == "doctor") {
    cl.verb = first == "status" ? Verb::kStatus : first == "probe" ? Verb::kProbe : Verb::kDoctor;
    absl::Status parsed = ParseVerbOptions(rest, &cl, &positional);
    if (!parsed.ok()) return parsed;
    if (!positional.empty() && cl.verb != Verb::kHelp) {
      return Usage(absl::StrCat(first, " takes no arguments; got ", positional.front()));
    }
    return cl;
  }
  if (first == "describe") {
    cl.verb = Verb::kDescribe;
    absl::Status parsed = ParseVerbOptions(rest, &cl, &positional);
    if (!parsed.ok()) return parsed;
    if (cl.verb == Verb::kHelp) return cl;
    // `describe ""` names no tier, as in the reference (an empty argument is
    // no argument there), rather than an unknown one.
    if (positional.empty() || positional.front().empty()) {
      return MakeError(absl::StatusCode::kInvalidArgument, "isolation-missing-tier",
                       "describe needs a tier: np-exec describe <direct|worktree|container>");
    }
    if (positional.size() > 1) return Usage("describe takes one tier");
    cl.tier = positional.front();
    return cl;
  }
  if (first == "wrap") {
    cl.verb = Verb::kWrap;
    absl::Status parsed = ParseWrap(rest, &cl);
    if (!parsed.ok()) return parsed;
    return cl;
  }
  if (first == "trust") {
    cl.verb = Verb::kTrust;
    absl::Status parsed = ParseVerbOptions(rest, &cl, &positional);
    if (!parsed.ok()) return parsed;
    if (cl.verb == Verb::kHelp) return cl;
    if (!positional.empty()) return Usage("trust takes [--show | --revoke] [--json]");
    if (cl.trust_show && cl.trust_revoke) return Usage("trust takes --show or --revoke, not both");
    return cl;
  }
  if (first == "home") {
    cl.verb = Verb::kHome;
    absl::Status parsed = ParseVerbOptions(rest, &cl, &positional);
    if (!parsed.ok()) return parsed;
    if (cl.verb == Verb::kHelp) return cl;
    if (!positional.empty()) return Usage("home takes [--reset] [--json]");
    return cl;
  }
  if (first == kSandboxExecVerb) {
    cl.verb = Verb::kSandboxExec;
    absl::Status parsed = ParseSandboxExec(rest, &cl);
    if (!parsed.ok()) return parsed;
    return cl;
  }
  if (first == kEgressEntryVerb) {
    cl.verb = Verb::kEgressEntry;
    absl::Status parsed = ParseEgressEntry(rest, &cl);
    if (!parsed.ok()) return parsed;
    return cl;
  }
  if (first == "shims") {
    cl.verb = Verb::kShims;
    absl::Status parsed = ParseVerbOptions(rest, &cl, &positional);
    if (!parsed.ok()) return parsed;
    if (cl.verb == Verb::kHelp) return cl;
    if (positional.size() < 2 || positional.front() != "install") {
      return Usage("shims takes: install DIR [NAME...] [--preload]");
    }
    cl.shims_dir = positional[1];
    cl.shim_names.assign(positional.begin() + 2, positional.end());
    if (cl.shim_names.empty()) cl.shim_names.push_back("node");
    return cl;
  }
  cl.help_topic.clear();
  absl::Status parsed = ParseRun(args, &cl);
  if (!parsed.ok()) return parsed;
  return cl;
}

}  // namespace np
