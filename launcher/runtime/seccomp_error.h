// The error of the bubblewrap sandbox's system-call filter, compiled
// (seccomp_rules.h) or handed over (bwrap_seccomp.h).
#ifndef NP_EXEC_LAUNCHER_RUNTIME_SECCOMP_ERROR_H_
#define NP_EXEC_LAUNCHER_RUNTIME_SECCOMP_ERROR_H_

#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/errors.h"

namespace np {

// `seccomp-filter-failed`: `what` failed with `err` (an errno value).
inline absl::Status SeccompFilterError(absl::string_view what, int err) {
  return MakeError(
      absl::StatusCode::kInternal, "seccomp-filter-failed",
      absl::StrCat("cannot build the sandbox's system-call filter: ", what, ": ", strerror(err)),
      {{"step", std::string(what)}});
}

}  // namespace np

#endif  // NP_EXEC_LAUNCHER_RUNTIME_SECCOMP_ERROR_H_
