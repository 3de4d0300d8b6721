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

namespace {

// The message on one line: a newline, carriage return, escape or any other
// control byte is written as an escape, never as itself.
std::string OneLine(absl::string_view message) {
  std::string line;
  line.reserve(message.size());
  for (char c : message) {
    const unsigned char byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      line += "\\n";
    } else if (byte < 0x20 || byte == 0x7f) {
      absl::StrAppend(&line, "\\x", absl::Hex(byte, absl::kZeroPad2));
    } else {
      line.push_back(c);
    }
  }
  return line;
}

}  // namespace

std::string FormatError(const absl::Status& status, ErrorFormat format) {
  const std::string code = ErrorCode(status);
  if (format == ErrorFormat::kText) {
    return absl::StrCat("np-exec: error: ", OneLine(status.message()), " (", code, ")\n");
  }
  nlohmann::json envelope = {{"code", code},
                             {"message", std::string(status.message())},
                             {"details", ErrorDetails(status)}};
  return absl::StrCat(DumpJson(envelope), "\n");
}

void WriteError(const absl::Status& status, ErrorFormat format) {
  WriteAll(2, FormatError(status, format));
}

void WriteJson(const nlohmann::json& value) { WriteAll(1, absl::StrCat(DumpJson(value, 2), "\n")); }

}  // namespace np
