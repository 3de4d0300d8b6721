#include "launcher/egress/credential_tunnel.h"

#include <errno.h>
#include <openssl/err.h>
#include <openssl/x509_vfy.h>
#include <poll.h>
#include <sys/socket.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "core/credential_request.h"
#include "core/errors.h"
#include "launcher/egress/proxy_connection.h"
#include "launcher/egress/relay.h"

namespace np::egress {
namespace {

constexpr int kReplyTimeoutMs = 5000;
constexpr absl::string_view kEstablished = "HTTP/1.1 200 Connection established\r\n\r\n";

// One side of the tunnel's TLS. Reads go through a memory BIO this code
// fills from the socket, so that bytes already read with the CONNECT head
// reach the handshake; writes go straight to the non-blocking socket.
struct TlsEnd {
  TlsEnd() = default;
  TlsEnd(const TlsEnd&) = delete;
  TlsEnd& operator=(const TlsEnd&) = delete;
  ~TlsEnd() { SSL_free(ssl); }
  int fd = -1;
  SSL* ssl = nullptr;
  BIO* in = nullptr;  // owned by ssl
  bool want_in = false;
  bool want_out = false;
};

bool Open(TlsEnd& end, SSL_CTX* ctx, int fd) {
  end.fd = fd;
  end.ssl = SSL_new(ctx);
  end.in = BIO_new(BIO_s_mem());
  BIO* out = BIO_new_socket(fd, BIO_NOCLOSE);
  if (end.ssl == nullptr || end.in == nullptr || out == nullptr) {
    BIO_free(end.in);
    BIO_free(out);
    end.in = nullptr;
    return false;
  }
  BIO_set_mem_eof_return(end.in, -1);  // empty: "retry", until the socket ends
  SSL_set_bio(end.ssl, end.in, out);
  return true;
}

// Moves what the socket holds into the read BIO; at the socket's end the
// BIO reports end of file.
void Fill(TlsEnd& end) {
  char buffer[16384];
  const ssize_t n = recv(end.fd, buffer, sizeof buffer, 0);
  if (n > 0) {
    BIO_write(end.in, buffer, static_cast<int>(n));
  } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
    BIO_set_mem_eof_return(end.in, 0);
  }
}

// Waits until `end` can go on after `error` (SSL_ERROR_WANT_*); false on
// the deadline or stop.
bool WaitFor(TlsEnd& end, int error, int64_t deadline, int stop_fd) {
  const short events = error == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN;
  const int64_t left = deadline - MonotonicMs();
  if (left <= 0) return false;
  pollfd fds[2] = {{end.fd, events, 0}, {stop_fd, POLLIN, 0}};
  if (poll(fds, 2, static_cast<int>(left)) < 0 && errno != EINTR) return false;
  if (fds[1].revents & POLLIN) return false;
  if (events == POLLIN && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) Fill(end);
  return true;
}

absl::Status Handshake(TlsEnd& end, const TunnelContext& context, absl::string_view code,
                       absl::string_view who) {
  const int64_t deadline = MonotonicMs() + context.handshake_timeout_ms;
  while (true) {
    ERR_clear_error();
    const int done = SSL_do_handshake(end.ssl);
    if (done == 1) return absl::OkStatus();
    const int error = SSL_get_error(end.ssl, done);
    const bool waiting = error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE;
    if (waiting && WaitFor(end, error, deadline, context.stop_fd)) continue;
    const long verify = SSL_get_verify_result(end.ssl);
    const std::string why = verify != X509_V_OK ? X509_verify_cert_error_string(verify)
                            : waiting           ? std::string("it timed out or the proxy stopped")
                                                : OpenSslError();
    return MakeError(absl::StatusCode::kUnavailable, code,
                     absl::StrCat("the TLS handshake with ", who, " failed: ", why));
  }
}

absl::Status ConnectUpstream(TlsEnd& end, int fd, const std::string& host,
                             const CredentialRoutes& routes, const TunnelContext& context) {
  if (!Open(end, routes.upstream.get(), fd) ||
      SSL_set_tlsext_host_name(end.ssl, host.c_str()) != 1 ||
      SSL_set1_host(end.ssl, host.c_str()) != 1) {
    return MakeError(absl::StatusCode::kInternal, "egress-upstream-tls-failed",
                     absl::StrCat("cannot set up TLS to ", host, ": ", OpenSslError()));
  }
  SSL_set_connect_state(end.ssl);
  return Handshake(end, context, "egress-upstream-tls-failed", host);
}

absl::Status AcceptClient(TlsEnd& end, int fd, const std::string& early, const std::string& host,
                          CredentialRoutes& routes, const TunnelContext& context) {
  absl::StatusOr<SSL_CTX*> server = routes.ca->ServerContext(host);
  if (!server.ok()) return server.status();
  if (!Open(end, *server, fd)) {
    return MakeError(absl::StatusCode::kInternal, "egress-client-tls-failed",
                     absl::StrCat("cannot set up TLS for the sandbox: ", OpenSslError()));
  }
  if (!early.empty()) BIO_write(end.in, early.data(), static_cast<int>(early.size()));
  SSL_set_accept_state(end.ssl);
  return Handshake(end, context, "egress-client-tls-failed", "the sandbox's client");
}

// Both directions of an open tunnel: plaintext waiting to be written to
// each side, and what each side has ended.
struct Pump {
  Pump(TlsEnd& c, TlsEnd& u, const CredentialRoute& route)
      : client(c), upstream(u), stream(route.credential, route.value) {}
  TlsEnd& client;
  TlsEnd& upstream;
  CredentialRequestStream stream;
  std::string to_upstream;
  std::string to_client;
  bool client_ended = false;
  bool upstream_ended = false;
  bool upstream_shut = false;
  uint64_t up = 0;
  uint64_t down = 0;
  absl::Status error;
  bool stopped = false;
};

// SSL_read into `out`; returns whether anything changed.
bool ReadSome(TlsEnd& from, std::string* out, bool* ended, absl::Status* error) {
  char buffer[16384];
  ERR_clear_error();
  const int n = SSL_read(from.ssl, buffer, sizeof buffer);
  if (n > 0) {
    out->append(buffer, static_cast<size_t>(n));
    return true;
  }
  const int code = SSL_get_error(from.ssl, n);
  if (code == SSL_ERROR_WANT_READ) {
    from.want_in = true;
  } else if (code == SSL_ERROR_WANT_WRITE) {
    from.want_out = true;
  } else if (code == SSL_ERROR_ZERO_RETURN || code == SSL_ERROR_SYSCALL) {
    *ended = true;
    return true;
  } else {
    *error = MakeError(absl::StatusCode::kUnavailable, "egress-tls-failed", OpenSslError());
    return true;
  }
  return false;
}

bool WriteSome(TlsEnd& to, std::string* data, uint64_t* count, absl::Status* error) {
  ERR_clear_error();
  const int n = SSL_write(to.ssl, data->data(), static_cast<int>(data->size()));
  if (n > 0) {
    data->erase(0, static_cast<size_t>(n));
    *count += static_cast<uint64_t>(n);
    return true;
  }
  const int code = SSL_get_error(to.ssl, n);
  if (code == SSL_ERROR_WANT_WRITE) {
    to.want_out = true;
  } else if (code == SSL_ERROR_WANT_READ) {
    to.want_in = true;
  } else {
    *error = MakeError(absl::StatusCode::kUnavailable, "egress-tls-failed", OpenSslError());
    return true;
  }
  return false;
}

// The client's bytes, read and rewritten request by request.
bool ReadClient(Pump& p) {
  std::string plain;
  const bool changed = ReadSome(p.client, &plain, &p.client_ended, &p.error);
  if (!plain.empty() && p.error.ok()) p.error = p.stream.Feed(plain, &p.to_upstream);
  return changed;
}

// Polls the sides for what they wait on; false on stop or when nothing is
// awaited (which would never wake).
bool WaitAny(Pump& p, int stop_fd) {
  TlsEnd* ends[2] = {&p.client, &p.upstream};
  pollfd fds[3];
  bool any = false;
  for (int i = 0; i < 2; ++i) {
    const short events =
        static_cast<short>((ends[i]->want_in ? POLLIN : 0) | (ends[i]->want_out ? POLLOUT : 0));
    fds[i] = {events != 0 ? ends[i]->fd : -1, events, 0};
    any = any || events != 0;
  }
  fds[2] = {stop_fd, POLLIN, 0};
  if (!any) return false;
  if (poll(fds, 3, -1) < 0 && errno != EINTR) return false;
  if (fds[2].revents & POLLIN) {
    p.stopped = true;
    return false;
  }
  for (int i = 0; i < 2; ++i) {
    if (ends[i]->want_in && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) Fill(*ends[i]);
  }
  return true;
}

void RunPump(Pump& p, int stop_fd) {
  while (true) {
    p.client.want_in = p.client.want_out = p.upstream.want_in = p.upstream.want_out = false;
    bool progress = false;
    if (p.to_upstream.empty() && !p.client_ended) progress |= ReadClient(p);
    if (!p.to_upstream.empty() && p.error.ok()) {
      progress |= WriteSome(p.upstream, &p.to_upstream, &p.up, &p.error);
    }
    if (p.to_client.empty() && !p.upstream_ended && p.error.ok()) {
      progress |= ReadSome(p.upstream, &p.to_client, &p.upstream_ended, &p.error);
    }
    if (!p.to_client.empty() && p.error.ok()) {
      progress |= WriteSome(p.client, &p.to_client, &p.down, &p.error);
    }
    if (!p.error.ok()) return;
    // The host's end ends the exchange, once its last bytes are delivered.
    if (p.upstream_ended && p.to_client.empty()) {
      SSL_shutdown(p.client.ssl);
      return;
    }
    if (p.client_ended && p.to_upstream.empty() && !p.upstream_shut) {
      SSL_shutdown(p.upstream.ssl);
      p.upstream_shut = true;
      progress = true;
    }
    if (!progress && !WaitAny(p, stop_fd)) return;
  }
}

// A refusal inside the tunnel, best effort: the client reads it as the
// host's answer.
void AnswerInTunnel(TlsEnd& client, const absl::Status& error, int stop_fd) {
  const std::string body =
      absl::StrCat("np-exec egress proxy: ", error.message(), " (", ErrorCode(error), ")\n");
  std::string response =
      absl::StrCat("HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n",
                   "X-Np-Exec-Egress: ", ErrorCode(error), "\r\nContent-Length: ", body.size(),
                   "\r\nConnection: close\r\n\r\n", body);
  const int64_t deadline = MonotonicMs() + kReplyTimeoutMs;
  uint64_t written = 0;
  absl::Status failed;
  while (!response.empty() && failed.ok()) {
    client.want_in = client.want_out = false;
    if (!WriteSome(client, &response, &written, &failed) &&
        !WaitFor(client, client.want_out ? SSL_ERROR_WANT_WRITE : SSL_ERROR_WANT_READ, deadline,
                 stop_fd)) {
      return;
    }
  }
  SSL_shutdown(client.ssl);
}

void Fail(EgressRecord* record, const absl::Status& error) {
  record->reason_code = ErrorCode(error);
  record->reason = std::string(error.message());
}

}  // namespace

const CredentialRoute* CredentialRoutes::Find(const std::string& host, uint16_t port) const {
  std::string name = absl::AsciiStrToLower(host);
  if (!name.empty() && name.back() == '.') name.pop_back();
  for (const CredentialRoute& route : routes) {
    if (route.credential.host == name && route.credential.port == port) return &route;
  }
  return nullptr;
}

absl::StatusOr<std::shared_ptr<CredentialRoutes>> MakeCredentialRoutes(
    std::vector<CredentialRoute> routes) {
  auto made = std::make_shared<CredentialRoutes>();
  std::vector<std::string> hosts;
  for (const CredentialRoute& route : routes) hosts.push_back(route.credential.host);
  absl::StatusOr<std::unique_ptr<SessionCa>> ca = SessionCa::Create(hosts);
  if (!ca.ok()) return ca.status();
  absl::StatusOr<std::shared_ptr<SSL_CTX>> upstream = UpstreamContext();
  if (!upstream.ok()) return upstream.status();
  made->routes = std::move(routes);
  made->ca = *std::move(ca);
  made->upstream = *std::move(upstream);
  return made;
}

void ServeCredentialTunnel(int client, int upstream, const std::string& early,
                           const CredentialRoute& route, CredentialRoutes& routes,
                           const TunnelContext& context, EgressRecord* record) {
  record->credential_header = route.credential.header;
  TlsEnd to_host;
  absl::Status step = ConnectUpstream(to_host, upstream, route.credential.host, routes, context);
  if (!step.ok()) {
    Fail(record, step);
    SendError(client, 502, record->reason_code, record->reason, context.stop_fd);
    return;
  }
  if (!SendAll(client, kEstablished, context.stop_fd, kReplyTimeoutMs)) {
    Fail(record, MakeError(absl::StatusCode::kUnavailable, "egress-client-closed",
                           "the client went away before the tunnel opened"));
    return;
  }
  TlsEnd to_client;
  step = AcceptClient(to_client, client, early, route.credential.host, routes, context);
  if (!step.ok()) {
    Fail(record, step);
    return;
  }
  record->tls_terminated = true;
  Pump pump(to_client, to_host, route);
  RunPump(pump, context.stop_fd);
  record->bytes_up = pump.up;
  record->bytes_down = pump.down;
  record->requests = pump.stream.requests();
  record->injected = pump.stream.injected();
  if (pump.stopped)
    Fail(record,
         MakeError(absl::StatusCode::kAborted, "egress-proxy-stopped", "the proxy stopped"));
  if (!pump.error.ok()) {
    Fail(record, pump.error);
    if (HasErrorCode(pump.error, "egress-credential-bad-request")) {
      AnswerInTunnel(to_client, pump.error, context.stop_fd);
    }
  }
}

}  // namespace np::egress
