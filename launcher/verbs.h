// The verbs: status, describe, probe, wrap, doctor, shims, help, version.
// Each returns np-exec's exit status (0 or 1) and writes its own output.
#ifndef NP_EXEC_LAUNCHER_VERBS_H_
#define NP_EXEC_LAUNCHER_VERBS_H_

#include "absl/strings/string_view.h"
#include "launcher/cli.h"
#include "launcher/host.h"

namespace np {

int VerbStatus(const CommandLine& cl, const HostFacts& host);
int VerbDescribe(const CommandLine& cl, const HostFacts& host);
int VerbProbe(const CommandLine& cl, const HostFacts& host);
int VerbWrap(const CommandLine& cl, const HostFacts& host);
int VerbDoctor(const CommandLine& cl, const HostFacts& host);
int VerbShims(const CommandLine& cl, const HostFacts& host);

// The help text of a verb ("" for the general help); empty when unknown.
absl::string_view HelpText(absl::string_view topic);
int VerbHelp(const CommandLine& cl, const HostFacts& host);
int VerbVersion();

// Writes an error for a verb and returns 1.
int VerbFail(const absl::Status& status, const HostFacts& host);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_VERBS_H_
