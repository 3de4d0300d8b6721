#include "core/credential_request.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/errors.h"

namespace np {
namespace {

constexpr size_t kMaxLine = 4096;

absl::Status Bad(absl::string_view why) {
  return MakeError(absl::StatusCode::kInvalidArgument, "egress-credential-bad-request",
                   absl::StrCat("a request to a credential host the proxy cannot frame: ", why));
}

bool IsTokenChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
         absl::string_view("!#$%&'*+-.^_`|~").find(c) != absl::string_view::npos;
}

bool IsToken(absl::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), IsTokenChar);
}

struct Header {
  std::string name;
  std::string value;
};

struct Head {
  std::string request_line;
  std::vector<Header> headers;
};

absl::StatusOr<Head> ParseHead(absl::string_view text) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, "\r\n");
  Head head;
  head.request_line = std::string(lines.front());
  std::vector<absl::string_view> parts = absl::StrSplit(lines.front(), ' ');
  if (parts.size() != 3 || !IsToken(parts[0]) || parts[1].empty() ||
      !absl::StartsWith(parts[2], "HTTP/1.") || !IsHeaderFieldValue(lines.front())) {
    return Bad("not METHOD SP target SP HTTP/1.x");
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    absl::string_view line = lines[i];
    if (line.find('\r') != absl::string_view::npos || line.find('\n') != absl::string_view::npos) {
      return Bad("a bare CR or LF in the head");
    }
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos || !IsToken(line.substr(0, colon))) {
      return Bad("a header line must be name: value (no folding)");
    }
    absl::string_view value = absl::StripAsciiWhitespace(line.substr(colon + 1));
    if (!IsHeaderFieldValue(value)) return Bad("a control character in a header");
    head.headers.push_back({std::string(line.substr(0, colon)), std::string(value)});
  }
  return head;
}

std::vector<const Header*> Named(const Head& head, absl::string_view name) {
  std::vector<const Header*> found;
  for (const Header& header : head.headers) {
    if (absl::EqualsIgnoreCase(header.name, name)) found.push_back(&header);
  }
  return found;
}

// How the body after `head` is framed: chunked, or a length (0: none).
struct Framing {
  bool chunked = false;
  uint64_t length = 0;
};

absl::StatusOr<Framing> FramingOf(const Head& head) {
  std::vector<const Header*> codings = Named(head, "transfer-encoding");
  std::vector<const Header*> lengths = Named(head, "content-length");
  Framing framing;
  if (!codings.empty()) {
    if (codings.size() != 1 || !absl::EqualsIgnoreCase(codings[0]->value, "chunked") ||
        !lengths.empty()) {
      return Bad("Transfer-Encoding must be chunked alone, without Content-Length");
    }
    framing.chunked = true;
    return framing;
  }
  for (const Header* length : lengths) {
    uint64_t value = 0;
    const bool digits =
        !length->value.empty() && std::all_of(length->value.begin(), length->value.end(),
                                              [](char c) { return absl::ascii_isdigit(c); });
    if (!digits || !absl::SimpleAtoi(length->value, &value) ||
        (length != lengths.front() && value != framing.length)) {
      return Bad("Content-Length must be one decimal number");
    }
    framing.length = value;
  }
  return framing;
}

// Whether the head's Host names the credential's host (and its port, which
// may be left out when it is 443).
bool HostMatches(const Head& head, const Credential& credential) {
  std::vector<const Header*> hosts = Named(head, "host");
  if (hosts.size() != 1) return false;
  std::string host = absl::AsciiStrToLower(hosts[0]->value);
  std::string port = "443";
  const size_t colon = host.rfind(':');
  if (colon != std::string::npos) {
    port = host.substr(colon + 1);
    host.resize(colon);
  }
  if (!host.empty() && host.back() == '.') host.pop_back();
  return host == credential.host && port == absl::StrCat(credential.port);
}

}  // namespace

bool IsHeaderFieldValue(absl::string_view value) {
  return std::all_of(value.begin(), value.end(), [](char c) {
    const unsigned char u = static_cast<unsigned char>(c);
    return u == '\t' || (u >= 0x20 && u != 0x7f);
  });
}

CredentialRequestStream::CredentialRequestStream(Credential credential, std::string value)
    : credential_(std::move(credential)),
      value_(std::move(value)),
      expected_(FormatCredential(credential_.format, CredentialPlaceholder(credential_.env))) {}

absl::Status CredentialRequestStream::OnHead(std::string* out) {
  const size_t end = pending_.find("\r\n\r\n");
  absl::StatusOr<Head> head = ParseHead(absl::string_view(pending_).substr(0, end));
  if (!head.ok()) return head.status();
  absl::StatusOr<Framing> framing = FramingOf(*head);
  if (!framing.ok()) return framing.status();
  ++requests_;
  std::vector<Header*> named;
  for (Header& header : head->headers) {
    if (absl::EqualsIgnoreCase(header.name, credential_.header)) named.push_back(&header);
  }
  // Only an origin-form target ("/path"): a server routes an absolute-form
  // one ("https://other/x") by its own host, whatever Host says. Never for
  // TRACE, which a server may echo back.
  const std::vector<absl::string_view> line = absl::StrSplit(head->request_line, ' ');
  const bool origin_form = line.size() == 3 && absl::StartsWith(line[1], "/");
  if (named.size() == 1 && named[0]->value == expected_ && origin_form && line[0] != "TRACE" &&
      HostMatches(*head, credential_)) {
    ++injected_;
    named[0]->value = FormatCredential(credential_.format, value_);
  }
  absl::StrAppend(out, head->request_line, "\r\n");
  for (const Header& header : head->headers) {
    absl::StrAppend(out, header.name, ": ", header.value, "\r\n");
  }
  absl::StrAppend(out, "\r\n");
  pending_.erase(0, end + 4);
  const bool upgrade =
      !Named(*head, "upgrade").empty() || absl::StartsWith(head->request_line, "CONNECT ");
  if (upgrade) {
    state_ = State::kRaw;
  } else if (framing->chunked) {
    state_ = State::kChunkSize;
  } else {
    left_ = framing->length;
    state_ = left_ > 0 ? State::kBody : State::kHead;
  }
  return absl::OkStatus();
}

// One CRLF-terminated line of the chunked coding, kept out of pending_.
bool CredentialRequestStream::TakeLine(std::string* line, absl::Status* error) {
  const size_t end = pending_.find("\r\n");
  if (end == std::string::npos) {
    if (pending_.size() > kMaxLine) *error = Bad("a chunk line is too long");
    return false;
  }
  if (end > kMaxLine) {
    *error = Bad("a chunk line is too long");
    return false;
  }
  *line = pending_.substr(0, end + 2);
  pending_.erase(0, end + 2);
  return true;
}

absl::Status CredentialRequestStream::OnChunkSizeLine(absl::string_view line, std::string* out) {
  absl::string_view size = line.substr(0, line.size() - 2);
  // A bare CR or LF, or a control character in an extension, would let a
  // lenient server find the chunk's data where the proxy does not.
  if (!IsHeaderFieldValue(size)) return Bad("a control character in a chunk line");
  size = size.substr(0, size.find(';'));
  size = absl::StripTrailingAsciiWhitespace(size);
  const bool hex =
      !size.empty() && size.size() <= 15 &&
      std::all_of(size.begin(), size.end(), [](char c) { return absl::ascii_isxdigit(c); });
  uint64_t bytes = 0;
  if (!hex || !absl::SimpleHexAtoi(size, &bytes)) return Bad("a malformed chunk size");
  // Forwarded as the proxy read it, extensions dropped.
  absl::StrAppend(out, absl::Hex(bytes), "\r\n");
  left_ = bytes;
  state_ = bytes == 0 ? State::kTrailers : State::kChunkData;
  return absl::OkStatus();
}

absl::Status CredentialRequestStream::Feed(absl::string_view bytes, std::string* out) {
  pending_.append(bytes.data(), bytes.size());
  while (!pending_.empty()) {
    absl::Status error;
    std::string line;
    switch (state_) {
      case State::kRaw:
        out->append(pending_);
        pending_.clear();
        return absl::OkStatus();
      case State::kHead:
        if (pending_.find("\r\n\r\n") == std::string::npos) {
          if (pending_.size() > kMaxCredentialHeadBytes) return Bad("the head is too large");
          return absl::OkStatus();
        }
        error = OnHead(out);
        break;
      case State::kBody:
      case State::kChunkData: {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(left_, pending_.size()));
        out->append(pending_, 0, n);
        pending_.erase(0, n);
        left_ -= n;
        if (left_ == 0) state_ = state_ == State::kBody ? State::kHead : State::kChunkEnd;
        break;
      }
      case State::kChunkSize:
        if (!TakeLine(&line, &error)) return error;
        error = OnChunkSizeLine(line, out);
        break;
      case State::kChunkEnd:
        if (!TakeLine(&line, &error)) return error;
        if (line != "\r\n") return Bad("a chunk does not end in CRLF");
        out->append(line);
        state_ = State::kChunkSize;
        break;
      case State::kTrailers:
        // Trailers are dropped: only the final CRLF goes on.
        if (!TakeLine(&line, &error)) return error;
        if (!IsHeaderFieldValue(absl::string_view(line).substr(0, line.size() - 2))) {
          return Bad("a control character in a trailer");
        }
        if (line == "\r\n") {
          out->append(line);
          state_ = State::kHead;
        }
        break;
    }
    if (!error.ok()) return error;
  }
  return absl::OkStatus();
}

}  // namespace np
