#include "launcher/app.h"

#include "absl/types/span.h"
#include "core/errors.h"
#include "launcher/cli.h"
#include "launcher/host.h"
#include "launcher/output.h"
#include "launcher/run.h"
#include "launcher/verbs.h"

namespace np {

int Main(int argc, char** argv, char** envp) {
  const HostFacts host = ReadHostFacts(envp);
  const absl::Span<char* const> args = absl::MakeConstSpan(argv, static_cast<size_t>(argc));
  absl::StatusOr<CommandLine> cl = ParseCommandLine(args);
  if (!cl.ok()) {
    WriteError(cl.status(), host.stderr_tty);
    // Verbs exit 0 or 1, their option errors included (design.md 5); the run
    // path's usage errors are 125: nothing ran.
    if (InvokesVerb(args)) return 1;
    const std::string code = ErrorCode(cl.status());
    return code == "usage" || code == "isolation-bad-env-name" ? 125 : 1;
  }
  switch (cl->verb) {
    case Verb::kRun:
      return RunProgram(*cl, host);
    case Verb::kStatus:
      return VerbStatus(*cl, host);
    case Verb::kDescribe:
      return VerbDescribe(*cl, host);
    case Verb::kProbe:
      return VerbProbe(*cl, host);
    case Verb::kWrap:
      return VerbWrap(*cl, host);
    case Verb::kDoctor:
      return VerbDoctor(*cl, host);
    case Verb::kShims:
      return VerbShims(*cl, host);
    case Verb::kHelp:
      return VerbHelp(*cl, host);
    case Verb::kVersion:
      return VerbVersion();
  }
  return 125;
}

}  // namespace np
