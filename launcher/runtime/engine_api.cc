#include "launcher/runtime/engine_api.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/errors.h"
#include "launcher/output.h"

namespace np {
namespace {

absl::Status Unreachable(absl::string_view socket_path, absl::string_view reason,
                         absl::string_view detail) {
  return MakeError(absl::StatusCode::kUnavailable, "engine-unreachable",
                   absl::StrCat("engine socket ", socket_path, ": ", detail),
                   {{"socket", socket_path}, {"reason", reason}});
}

absl::Status FromErrno(absl::string_view socket_path, int err) {
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return Unreachable(socket_path, "socket-missing", "no such socket");
    case ECONNREFUSED:
      return Unreachable(socket_path, "connection-refused",
                         "connection refused (is the daemon running?)");
    case EACCES:
    case EPERM:
      return Unreachable(socket_path, "permission-denied",
                         "permission denied (is this user allowed to use the engine?)");
    case EAGAIN:
    case ETIMEDOUT:
    case EINPROGRESS:
      return Unreachable(socket_path, "timed-out", "the engine did not answer in time");
    default:
      return Unreachable(socket_path, "connection-refused", strerror(err));
  }
}

// Decodes a chunked body; returns false when it is malformed.
bool Dechunk(absl::string_view body, std::string* out) {
  out->clear();
  while (true) {
    size_t eol = body.find("\r\n");
    if (eol == absl::string_view::npos) return false;
    absl::string_view size_text = body.substr(0, eol);
    size_t semicolon = size_text.find(';');
    if (semicolon != absl::string_view::npos) size_text = size_text.substr(0, semicolon);
    uint64_t size = 0;
    if (!absl::SimpleHexAtoi(absl::StripAsciiWhitespace(size_text), &size)) return false;
    body.remove_prefix(eol + 2);
    if (size == 0) return true;
    if (body.size() < size + 2) return false;
    out->append(body.data(), size);
    body.remove_prefix(size + 2);
  }
}

}  // namespace

std::string UrlEncode(absl::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/' ||
        c == ':' || c == '@') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

namespace {

// A connected stream socket to the engine, with `timeout_ms` on every read
// and write.
absl::StatusOr<int> ConnectEngine(const std::string& socket_path, int timeout_ms) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket_path.empty() || socket_path.size() >= sizeof(address.sun_path)) {
    return Unreachable(socket_path, "socket-missing", "socket path is empty or too long");
  }
  std::memcpy(address.sun_path, socket_path.data(), socket_path.size());
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return FromErrno(socket_path, errno);
  timeval timeout{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    const int err = errno;
    close(fd);
    return FromErrno(socket_path, err);
  }
  return fd;
}

// The declared Content-Length in the header block, -1 when there is none.
long long ContentLength(absl::string_view headers) {
  long long content_length = -1;
  for (absl::string_view line : absl::StrSplit(headers, "\r\n")) {
    if (absl::StartsWithIgnoreCase(line, "content-length:")) {
      absl::SimpleAtoi(absl::StripAsciiWhitespace(line.substr(15)), &content_length);
    }
  }
  return content_length;
}

// The whole response: until the engine closes, or as soon as the declared
// body has arrived (the engine keeps some connections open despite
// Connection: close). Sets `header_end` to where the headers end (npos: never).
absl::StatusOr<std::string> ReadResponse(int fd, const std::string& socket_path,
                                         size_t& header_end) {
  std::string response;
  char buffer[8192];
  header_end = std::string::npos;
  long long content_length = -1;
  for (;;) {
    ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return FromErrno(socket_path, errno);
    if (n == 0) break;
    response.append(buffer, static_cast<size_t>(n));
    if (header_end == std::string::npos) {
      header_end = response.find("\r\n\r\n");
      if (header_end != std::string::npos) {
        content_length = ContentLength(absl::string_view(response).substr(0, header_end));
      }
    }
    if (header_end != std::string::npos && content_length >= 0 &&
        response.size() >= header_end + 4 + static_cast<size_t>(content_length)) {
      break;
    }
  }
  return response;
}

// The status, the headers after the status line, and the body (dechunked).
absl::StatusOr<HttpResponse> ParseResponse(const std::string& socket_path,
                                           absl::string_view response, size_t header_end) {
  if (header_end == std::string::npos || !absl::StartsWith(response, "HTTP/1.")) {
    return Unreachable(socket_path, "protocol-error", "the socket did not answer with HTTP");
  }
  HttpResponse result;
  std::vector<absl::string_view> status_line =
      absl::StrSplit(response.substr(0, response.find("\r\n")), ' ');
  if (status_line.size() < 2 || !absl::SimpleAtoi(status_line[1], &result.status)) {
    return Unreachable(socket_path, "protocol-error", "malformed HTTP status line");
  }
  absl::string_view headers = response.substr(0, header_end);
  absl::string_view body = response.substr(header_end + 4);
  const size_t first_eol = headers.find("\r\n");
  if (first_eol != absl::string_view::npos) {
    result.headers = std::string(headers.substr(first_eol + 2));
  }
  if (absl::StrContains(absl::AsciiStrToLower(headers), "transfer-encoding: chunked")) {
    if (!Dechunk(body, &result.body)) {
      return Unreachable(socket_path, "protocol-error", "malformed chunked body");
    }
  } else {
    result.body = std::string(body);
  }
  return result;
}

}  // namespace

absl::StatusOr<HttpResponse> EngineRequest(const std::string& socket_path, absl::string_view method,
                                           absl::string_view target, int timeout_ms) {
  absl::StatusOr<int> fd = ConnectEngine(socket_path, timeout_ms);
  if (!fd.ok()) return fd.status();
  const std::string request = absl::StrCat(method, " ", target,
                                           " HTTP/1.1\r\nHost: docker\r\nUser-Agent: np-exec\r\n"
                                           "Connection: close\r\nContent-Length: 0\r\n\r\n");
  if (!WriteAll(*fd, request)) {
    const int err = errno;
    close(*fd);
    return FromErrno(socket_path, err);
  }
  size_t header_end = std::string::npos;
  absl::StatusOr<std::string> response = ReadResponse(*fd, socket_path, header_end);
  close(*fd);
  if (!response.ok()) return response.status();
  return ParseResponse(socket_path, *response, header_end);
}

bool EngineAnswers(const std::string& socket_path, int timeout_ms) {
  absl::StatusOr<HttpResponse> ping = EngineRequest(socket_path, "GET", "/_ping", timeout_ms);
  return ping.ok() && ping->status == 200;
}

}  // namespace np
