// What a verb or the run path ends with, and the one table that turns an
// error into np-exec's exit status.
//
// Every verb and the run path return absl::StatusOr<Outcome>: an Outcome is a
// normal end (its own exit status: a verb's 0 or 1, the program's status); an
// error is written by app.cc alone, and its exit status comes from
// ExitStatusFor. Warnings on the way (an audit log that cannot be written) go
// to the Reporter app.cc hands in. Pure apart from Reporter, which writes.
#ifndef NP_EXEC_LAUNCHER_OUTCOME_H_
#define NP_EXEC_LAUNCHER_OUTCOME_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "launcher/output.h"

namespace np {

struct Outcome {
  int exit_status = 0;
};

// Whether an error ended the run path (its program's exit statuses apply)
// or a verb (which exits 0 or 1, design.md 5).
enum class CommandKind { kRun, kVerb };

// The exit status of an error: for the run path 127 program-not-found (and
// shim-no-program, a shim with nothing real behind it), 126
// program-not-executable, 69 when the configured tier is unavailable, 1 for
// a mistyped verb, else 125 (np-exec failed before running anything); for a
// verb always 1.
int ExitStatusFor(const absl::Status& error, CommandKind kind);

// Where warnings go: one line on stderr in the format errors use.
class Reporter {
 public:
  explicit Reporter(ErrorFormat format) : format_(format) {}
  void Warn(const absl::Status& warning) const;
  void Error(const absl::Status& error) const;

 private:
  ErrorFormat format_;
};

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_OUTCOME_H_
