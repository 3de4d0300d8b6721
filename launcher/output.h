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

// How errors and warnings are written: plain text unless JSON is asked for
// (NP_EXEC_ERROR_FORMAT=json, or a verb's --json), whatever stderr is.
enum class ErrorFormat { kText, kJson };

// One error line, newline included: "np-exec: error: <message> (<code>)",
// with control characters in the message escaped (\n, \xNN) so a hostile
// path cannot start a line of its own; or the reference's JSON envelope
// {"code","message","details"}.
std::string FormatError(const absl::Status& status, ErrorFormat format);

// Writes FormatError(status, format) on stderr.
void WriteError(const absl::Status& status, ErrorFormat format);

// Pretty JSON on stdout, with a trailing newline.
void WriteJson(const nlohmann::json& value);

// Dumps JSON without throwing on invalid UTF-8 (hostile paths).
std::string DumpJson(const nlohmann::json& value, int indent = -1);

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_OUTPUT_H_
