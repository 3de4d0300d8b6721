// The requests a sandbox sends to a credential host (core/credentials.h),
// read from the plaintext of the TLS connection the egress proxy terminated,
// and rewritten one by one on their way to the real host.
//
// HTTP/1.1 keeps a connection open for many requests, so every request is
// framed here: its head is read whole (strictly, as the proxy reads its own:
// CRLF only, no folding, token names, no control characters), its body
// passed through as it arrives by Content-Length or chunked coding (both at
// once, a Transfer-Encoding other than chunked, or conflicting lengths are
// refused, as a smuggling attempt would need them). A head whose `Host` names
// the credential's host and whose one credential header is exactly the
// formatted placeholder gets that header's value replaced by the formatted
// key; every other byte goes through unchanged, and a request that does not
// carry the placeholder is forwarded without injection. After a request that
// asks for an `Upgrade` the stream is no longer HTTP and is passed through
// without injection. Pure.
//
// Code: `egress-credential-bad-request` (InvalidArgument).
#ifndef NP_EXEC_CORE_CREDENTIAL_REQUEST_H_
#define NP_EXEC_CORE_CREDENTIAL_REQUEST_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/credentials.h"

namespace np {

inline constexpr size_t kMaxCredentialHeadBytes = 64 * 1024;

// Whether `value` may stand in a header field: tab and visible characters
// only, no line end or other control character.
bool IsHeaderFieldValue(absl::string_view value);

class CredentialRequestStream {
 public:
  // `value` is the key itself; it is only ever written into `out` of Feed.
  CredentialRequestStream(Credential credential, std::string value);

  // Consumes `bytes` from the client and appends what goes upstream to
  // `out`. After an error the stream must not be fed again.
  absl::Status Feed(absl::string_view bytes, std::string* out);

  int requests() const { return requests_; }  // heads read whole
  int injected() const { return injected_; }  // of those, with the key added

 private:
  enum class State { kHead, kBody, kChunkSize, kChunkData, kChunkEnd, kTrailers, kRaw };
  absl::Status OnHead(std::string* out);
  absl::Status OnChunkSizeLine(absl::string_view line, std::string* out);
  bool TakeLine(std::string* line, absl::Status* error);

  Credential credential_;
  std::string value_;
  std::string expected_;  // the formatted placeholder
  std::string pending_;   // bytes not yet consumed (a partial head or line)
  State state_ = State::kHead;
  uint64_t left_ = 0;  // body or chunk bytes still to pass
  int requests_ = 0;
  int injected_ = 0;
};

}  // namespace np

#endif  // NP_EXEC_CORE_CREDENTIAL_REQUEST_H_
