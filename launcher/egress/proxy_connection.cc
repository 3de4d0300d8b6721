#include "launcher/egress/proxy_connection.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "core/http_proxy_request.h"
#include "launcher/egress/credential_tunnel.h"
#include "launcher/egress/relay.h"

namespace np::egress {
namespace {

constexpr int kReplyTimeoutMs = 5000;
constexpr absl::string_view kEstablished = "HTTP/1.1 200 Connection established\r\n\r\n";

absl::string_view StatusText(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 408:
      return "Request Timeout";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
  }
  return "Error";
}

// The reason goes into a header and a one-line body: nothing in it may end
// the line early.
std::string OneLine(absl::string_view text) {
  std::string out(text);
  for (char& c : out) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = '?';
  }
  return out;
}

void Fail(EgressRecord* record, absl::string_view code, absl::string_view reason) {
  record->reason_code = std::string(code);
  record->reason = OneLine(reason);
}

enum class HeadResult { kParsed, kAnswered, kClosed };

// Reads until a whole head parses. kAnswered: an error reply was sent.
HeadResult ReadHead(int client, const ConnectionContext& context, std::string* buffer,
                    ProxyRequest* request, EgressRecord* record) {
  const int64_t deadline = MonotonicMs() + context.head_timeout_ms;
  while (true) {
    absl::StatusOr<std::optional<ProxyRequest>> parsed = ParseProxyRequest(*buffer);
    if (!parsed.ok()) {
      Fail(record, ErrorCode(parsed.status()), parsed.status().message());
      SendError(client, 400, record->reason_code, record->reason, context.stop_fd);
      return HeadResult::kAnswered;
    }
    if (parsed->has_value()) {
      *request = **parsed;
      return HeadResult::kParsed;
    }
    const int64_t left = deadline - MonotonicMs();
    if (left <= 0) {
      Fail(record, "egress-head-timeout", "the request head did not arrive in time");
      SendError(client, 408, record->reason_code, record->reason, context.stop_fd);
      return HeadResult::kAnswered;
    }
    pollfd fds[2] = {{client, POLLIN, 0}, {context.stop_fd, POLLIN, 0}};
    int ready = poll(fds, 2, static_cast<int>(left));
    if (ready < 0 && errno != EINTR) break;
    if (fds[1].revents & POLLIN) {
      Fail(record, "egress-proxy-stopped", "the proxy stopped");
      return HeadResult::kClosed;
    }
    if (ready <= 0) continue;
    char chunk[8192];
    ssize_t n = recv(client, chunk, sizeof chunk, 0);
    if (n > 0) {
      buffer->append(chunk, static_cast<size_t>(n));
    } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      break;
    }
  }
  Fail(record, "egress-client-closed", "the client closed before sending a whole request head");
  return HeadResult::kClosed;
}

// Connects to `address` within the timeout; -1 on failure (errno kept).
int ConnectOne(const IpAddress& address, uint16_t port, const ConnectionContext& context) {
  sockaddr_storage storage;
  socklen_t size = ToSockaddr(address, port, &storage);
  int fd = socket(storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (connect(fd, reinterpret_cast<sockaddr*>(&storage), size) == 0) return fd;
  if (errno == EINPROGRESS) {
    pollfd fds[2] = {{fd, POLLOUT, 0}, {context.stop_fd, POLLIN, 0}};
    int ready;
    do {
      ready = poll(fds, 2, context.connect_timeout_ms);
    } while (ready < 0 && errno == EINTR);
    int error = 0;
    socklen_t error_size = sizeof error;
    if (ready > 0 && !(fds[1].revents & POLLIN) &&
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &error_size) == 0 && error == 0) {
      return fd;
    }
  }
  close(fd);
  return -1;
}

// Resolves (names only) and checks every address; returns them, or fills in
// the refusal and returns nothing after answering.
std::optional<std::vector<IpAddress>> CheckedAddresses(int client, const ConnectionContext& context,
                                                       const EgressDecision& decision,
                                                       EgressRecord* record) {
  if (decision.target.is_address) return std::vector<IpAddress>{decision.target.address};
  absl::StatusOr<std::vector<IpAddress>> resolved = (*context.resolver)(decision.target.name);
  if (!resolved.ok()) {
    Fail(record, "egress-resolve-failed", resolved.status().message());
    SendError(client, 502, record->reason_code, record->reason, context.stop_fd);
    return std::nullopt;
  }
  EgressDecision checked = CheckResolved(*context.allowlist, decision, *resolved);
  if (!checked.allowed) {
    Fail(record, checked.reason_code, checked.reason);
    const int status = checked.reason_code == kEgressNoAddress ? 502 : 403;
    SendError(client, status, record->reason_code, record->reason, context.stop_fd);
    return std::nullopt;
  }
  return *resolved;
}

// Connects to the first of the checked addresses that answers; -1 after
// answering the client when none does.
int ConnectChecked(int client, const std::vector<IpAddress>& addresses, uint16_t port,
                   const ConnectionContext& context, EgressRecord* record) {
  for (const IpAddress& address : addresses) {
    const int upstream = ConnectOne(address, port, context);
    if (upstream >= 0) {
      record->address = FormatIpAddress(address);
      return upstream;
    }
  }
  Fail(record, "egress-connect-failed",
       absl::StrCat("cannot connect to ", record->host, ":", port));
  SendError(client, 502, record->reason_code, record->reason, context.stop_fd);
  return -1;
}

}  // namespace

void SendError(int client, int status, absl::string_view code, absl::string_view reason,
               int stop_fd) {
  const std::string body =
      absl::StrCat("np-exec egress proxy: ", OneLine(reason), " (", OneLine(code), ")\n");
  const std::string response = absl::StrCat(
      "HTTP/1.1 ", status, " ", StatusText(status), "\r\n",
      "Content-Type: text/plain; charset=utf-8\r\n", "X-Np-Exec-Egress: ", OneLine(code), "\r\n",
      "Content-Length: ", body.size(), "\r\n", "Connection: close\r\n\r\n", body);
  SendAll(client, response, stop_fd, kReplyTimeoutMs);
}

void ServeConnection(int client, const ConnectionContext& context, EgressRecord* record) {
  std::string buffer;
  ProxyRequest request;
  if (ReadHead(client, context, &buffer, &request, record) != HeadResult::kParsed) return;
  record->method = request.method;
  record->host = OneLine(request.host);
  record->port = request.port;

  EgressDecision decision = Decide(*context.allowlist, request.host, request.port);
  if (!decision.allowed) {
    Fail(record, decision.reason_code, decision.reason);
    SendError(client, 403, record->reason_code, record->reason, context.stop_fd);
    return;
  }
  std::optional<std::vector<IpAddress>> addresses =
      CheckedAddresses(client, context, decision, record);
  if (!addresses.has_value()) return;
  record->allowed = true;

  const int upstream = ConnectChecked(client, *addresses, request.port, context, record);
  if (upstream < 0) return;

  RelayOptions relay;
  relay.stop_fd = context.stop_fd;
  const std::string early = buffer.substr(request.head_size);
  const CredentialRoute* route =
      request.kind == ProxyRequest::Kind::kConnect && context.credentials != nullptr
          ? context.credentials->Find(request.host, request.port)
          : nullptr;
  if (route != nullptr) {
    // A credential host: TLS terminated here, the key added on the way.
    const TunnelContext tunnel{context.stop_fd, context.connect_timeout_ms};
    ServeCredentialTunnel(client, upstream, early, *route, *context.credentials, tunnel, record);
    close(upstream);
    return;
  }
  if (request.kind == ProxyRequest::Kind::kConnect) {
    if (!SendAll(client, kEstablished, context.stop_fd, kReplyTimeoutMs)) {
      close(upstream);
      Fail(record, "egress-client-closed", "the client went away before the tunnel opened");
      return;
    }
    relay.initial_to_b = early;
  } else {
    // One request per connection: the upstream was asked to close after its
    // response, and the relay ends with it, so a second request on this
    // connection can never reach a host nobody checked.
    relay.initial_to_b = request.forward_head + early;
    relay.end_when_b_ends = true;
  }
  RelayResult result = Relay(client, upstream, relay);
  close(upstream);
  record->bytes_up = result.a_to_b;
  record->bytes_down = result.b_to_a;
  if (result.stopped) Fail(record, "egress-proxy-stopped", "the proxy stopped");
}

}  // namespace np::egress
