#include "launcher/output.h"

#include <errno.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "core/errors.h"

namespace np {

bool WriteAll(int fd, absl::string_view text) {
  while (!text.empty()) {
    ssize_t n = write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    text.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string DumpJson(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

void WriteError(const absl::Status& status, bool stderr_is_terminal) {
  const std::string code = ErrorCode(status);
  if (stderr_is_terminal) {
    WriteAll(2, absl::StrCat("np-exec: error: ", status.message(), " (", code, ")\n"));
    return;
  }
  nlohmann::json envelope = {{"code", code},
                             {"message", std::string(status.message())},
                             {"details", ErrorDetails(status)}};
  WriteAll(2, absl::StrCat(DumpJson(envelope), "\n"));
}

void WriteJson(const nlohmann::json& value) { WriteAll(1, absl::StrCat(DumpJson(value, 2), "\n")); }

}  // namespace np
