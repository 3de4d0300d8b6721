#include "launcher/outcome.h"

#include <array>
#include <utility>

#include "absl/strings/string_view.h"
#include "core/errors.h"
#include "launcher/output.h"

namespace np {
namespace {

// The run path's exit statuses other than 125 (design.md 5).
constexpr std::array<std::pair<absl::string_view, int>, 10> kRunExitStatus = {{
    {"program-not-found", 127},
    {"shim-no-program", 127},
    {"program-not-in-sandbox", 127},
    {"program-not-in-image", 127},
    {"script-not-in-image", 127},
    {"program-not-executable", 126},
    {"isolation-container-unavailable", 69},
    {"isolation-runtime-untrusted", 69},
    {"isolation-probe-required", 69},
    {"isolation-unknown-verb", 1},
}};

}  // namespace

int ExitStatusFor(const absl::Status& error, CommandKind kind) {
  if (error.ok()) return 0;
  if (kind == CommandKind::kVerb) return 1;
  const std::string code = ErrorCode(error);
  for (const auto& [name, status] : kRunExitStatus) {
    if (code == name) return status;
  }
  return 125;
}

void Reporter::Warn(const absl::Status& warning) const { WriteError(warning, format_); }

void Reporter::Error(const absl::Status& error) const { WriteError(error, format_); }

}  // namespace np
