#include "launcher/app.h"

#include "absl/types/span.h"
#include "launcher/cli.h"
#include "launcher/host.h"
#include "launcher/outcome.h"
#include "launcher/run.h"
#include "launcher/verbs.h"
#include "launcher/verbs_trust.h"
#include "launcher/warm/keeper.h"
#include "launcher/watchdog.h"

namespace np {
namespace {

absl::StatusOr<Outcome> Dispatch(const CommandLine& cl, const HostFacts& host,
                                 const Reporter& reporter) {
  switch (cl.verb) {
    case Verb::kRun:
      return RunProgram(cl, host, reporter);
    case Verb::kStatus:
      return VerbStatus(cl, host);
    case Verb::kDescribe:
      return VerbDescribe(cl, host);
    case Verb::kProbe:
      return VerbProbe(cl, host);
    case Verb::kWrap:
      return VerbWrap(cl, host);
    case Verb::kDoctor:
      return VerbDoctor(cl, host);
    case Verb::kShims:
      return VerbShims(cl, host);
    case Verb::kWhich:
      return VerbWhich(cl, host);
    case Verb::kHelp:
      return VerbHelp(cl, host);
    case Verb::kVersion:
      return VerbVersion();
    case Verb::kTrust:
      return VerbTrust(cl, host);
    case Verb::kHome:
      return VerbHome(cl, host);
    case Verb::kInit:
      return VerbInit(cl, host);
    case Verb::kSandboxExec:
      return VerbSandboxExec(cl, host, reporter);
    case Verb::kEgressEntry:
      return VerbEgressEntry(cl, host);
    case Verb::kMountCheck:
      return VerbMountCheck(cl, host);
    case Verb::kContainerWatchdog:
      return Outcome{RunWatchdog(cl.program)};
    case Verb::kArgvEntry:
      return VerbArgvEntry(cl, host);
    case Verb::kWarm:
      return VerbWarm(cl, host);
    case Verb::kKeeper:
      return Outcome{warm::RunKeeper(host.envp)};
  }
  return Outcome{125};
}

// The run path and what stands in for it keep the program's exit statuses;
// the verbs exit 0 or 1.
CommandKind KindOf(Verb verb) {
  return verb == Verb::kRun || verb == Verb::kSandboxExec || verb == Verb::kEgressEntry ||
                 verb == Verb::kArgvEntry || verb == Verb::kMountCheck || verb == Verb::kKeeper
             ? CommandKind::kRun
             : CommandKind::kVerb;
}

// JSON when the environment asks for it or the verb was run with --json
// (even one whose command line did not parse); plain text otherwise.
ErrorFormat FormatFor(const HostFacts& host, bool verb_json) {
  return host.json_errors || verb_json ? ErrorFormat::kJson : ErrorFormat::kText;
}

}  // namespace

// The one place an error becomes output and an exit status.
int Main(int argc, char** argv, char** envp) {
  const HostFacts host = ReadHostFacts(envp);
  const absl::Span<char* const> args = absl::MakeConstSpan(argv, static_cast<size_t>(argc));
  absl::StatusOr<CommandLine> cl = ParseCommandLine(args);
  if (!cl.ok()) {
    const Reporter reporter(FormatFor(host, AsksForJson(args)));
    reporter.Error(cl.status());
    // A verb's own option errors exit 1 like the verb (design.md 5); the run
    // path's usage errors are 125: nothing ran.
    return ExitStatusFor(cl.status(), InvokesVerb(args) ? CommandKind::kVerb : CommandKind::kRun);
  }
  const Reporter reporter(FormatFor(host, cl->json));
  absl::StatusOr<Outcome> outcome = Dispatch(*cl, host, reporter);
  if (!outcome.ok()) {
    reporter.Error(outcome.status());
    return ExitStatusFor(outcome.status(), KindOf(cl->verb));
  }
  return outcome->exit_status;
}

}  // namespace np
