// Writing results and errors. Only main and the verbs call this.
//
// Plain write(2), no iostreams: the run path must not pay for stream and
// locale start-up before it execs.
#ifndef NP_EXEC_LAUNCHER_OUTPUT_H_
#define NP_EXEC_LAUNCHER_OUTPUT_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace np {

// Writes all of `text` to `fd`, retrying short writes.
bool WriteAll(int fd, absl::string_view text);

// One error line on stderr: a JSON envelope {"code","message","details"} when
// stderr is not a terminal, "np-exec: error: <message> (<code>)" when it is.
void WriteError(const absl::Status& status, bool stderr_is_terminal);

// Pretty JSON on stdout, with a trailing newline.
void WriteJson(const nlohmann::json& value);

// Dumps JSON without throwing on invalid UTF-8 (hostile paths).
std::string DumpJson(const nlohmann::json& value, int indent = -1);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_OUTPUT_H_
