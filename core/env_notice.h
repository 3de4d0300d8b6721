// A variable the program needs, set in the caller's environment but not
// forwarded into the sandbox, is never dropped silently: the container tier
// passes only the names it is told (isolation.container.env, --env), so for
// the agent CLIs np-exec knows, each variable that CLI reads for its
// credentials or its trust switch, set here and not forwarded, is named in
// one line on stderr with the key to add it to and the list to paste. Other
// programs (node, a shell, ...) get no notice: np-exec cannot tell what they
// read, and a workflow runs them by the hundred. Pure: the caller says which
// names are set.
#ifndef NP_EXEC_CORE_ENV_NOTICE_H_
#define NP_EXEC_CORE_ENV_NOTICE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace np {

// The variables `program` (a name or a path; its file name counts) reads that
// np-exec knows of: claude, codex, gemini, gh. Empty for any other.
std::vector<std::string> KnownProgramVariables(absl::string_view program);

// The notice line (ending in a newline) for `program` given the forwarded
// names and which names are set (non-empty) in the caller's environment; ""
// when every known variable that is set is forwarded.
std::string UnforwardedVariablesNotice(absl::string_view program,
                                       const std::vector<std::string>& forwarded,
                                       const std::function<bool(const std::string&)>& is_set);

}  // namespace np

#endif  // NP_EXEC_CORE_ENV_NOTICE_H_
