#include "controller/server/connection_stream.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

namespace gpufed::server {
namespace {

using std::chrono::steady_clock;

constexpr size_t kBufferSize = size_t{16} * 1024;
// Enough for any response head this server writes; a longer one is not inspected further.
constexpr size_t kResponseHeadLimit = size_t{8} * 1024;
// A held response head and the body sent with it in one send, at most (a longer body is
// sent after the head, as written).
constexpr size_t kHeldLimit = size_t{64} * 1024;

std::string OpenSslError() {
  unsigned long e = ERR_get_error();
  if (e == 0) return "unknown error";
  char text[256];
  ERR_error_string_n(e, text, sizeof text);
  ERR_clear_error();
  return text;
}

void AddressOf(const sockaddr_storage& addr, std::string& ip, int& port) {
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(addr);
    ::inet_ntop(AF_INET, &in.sin_addr, text, sizeof text);
    port = ntohs(in.sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(addr);
    ::inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof text);
    port = ntohs(in6.sin6_port);
  }
  ip = text;
}

// Statuses after which what follows on the connection may be the rest of a request that
// was not read (or not parsed), never a next request.
bool StatusEndsConnection(int status) {
  return status == 400 || status == 408 || status == 413 || status == 414 || status == 431 || status == 500;
}

// A complete response head (status not 1xx) with its Connection header set to close and
// any Keep-Alive header dropped; "" when `head` is not one (it is then written as it is,
// and the connection still closes after it).
std::string WithConnectionClose(std::string_view head) {
  const size_t end = head.find("\r\n\r\n");
  if (head.substr(0, 7) != "HTTP/1." || head.size() < 12 || head[9] == '1' || end == std::string_view::npos) return "";
  std::string out;
  out.reserve(head.size() + 20);
  size_t pos = head.find("\r\n") + 2;
  out.append(head.substr(0, pos));
  while (pos < end + 2) {
    const size_t next = head.find("\r\n", pos) + 2;
    std::string lower(head.substr(pos, std::min<size_t>(next - pos, 12)));
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (lower.rfind("connection:", 0) != 0 && lower.rfind("keep-alive:", 0) != 0)
      out.append(head.substr(pos, next - pos));
    pos = next;
  }
  out.append("Connection: close\r\n\r\n");
  out.append(head.substr(end + 4));
  return out;
}

}  // namespace

Result<std::unique_ptr<TlsContext>> TlsContext::Load(const std::string& cert_file, const std::string& key_file,
                                                     const std::string& client_ca_file) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) return Internal("TLS: " + OpenSslError());
  std::unique_ptr<TlsContext> owned(new TlsContext(ctx));
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) != 1 ||
      SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(ctx) != 1) {
    return InvalidArgument("TLS certificate or key could not be loaded (" + cert_file + ", " + key_file +
                           "): " + OpenSslError());
  }
  if (!client_ca_file.empty()) {
    if (SSL_CTX_load_verify_locations(ctx, client_ca_file.c_str(), nullptr) != 1) {
      return InvalidArgument("TLS client CA could not be loaded (" + client_ca_file + "): " + OpenSslError());
    }
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(client_ca_file.c_str());
    if (names != nullptr) SSL_CTX_set_client_CA_list(ctx, names);  // the context owns them now
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    SSL_CTX_set_verify_depth(ctx, 4);
    // OpenSSL fails (not merely declines) the handshake of a client that resumes a session
    // (curl does, after an idle close) when the server verifies peers without a session id
    // context; a resumed session
    // keeps the client certificate it was verified with.
    static constexpr unsigned char kSessionContext[] = "gpufed-mtls";
    SSL_CTX_set_session_id_context(ctx, kSessionContext, sizeof kSessionContext - 1);
  }
  return owned;
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

ConnectionStream::ConnectionStream(int fd, SSL_CTX* tls, ConnectionLimits limits,
                                   std::function<bool()> on_head_complete)
    : fd_(fd),
      limits_(limits),
      on_head_complete_(std::move(on_head_complete)),
      framing_(limits.max_header_bytes, limits.max_header_lines) {
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
  if (tls != nullptr) {
    ssl_ = SSL_new(tls);
    if (ssl_ == nullptr || SSL_set_fd(ssl_, fd_) != 1) failed_ = true;
  }
  buffer_.resize(kBufferSize);
  head_deadline_ = body_deadline_ = steady_clock::now() + limits_.header_timeout;
}

ConnectionStream::~ConnectionStream() {
  if (ssl_ != nullptr) {
    if (!failed_) SSL_shutdown(ssl_);
    SSL_free(ssl_);
  }
  ::close(fd_);
}

bool ConnectionStream::Wait(short events, SteadyTime deadline) {
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - steady_clock::now()).count();
    if (left <= 0) {
      timed_out_ = true;
      return false;
    }
    pollfd p{fd_, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 60'000)));
    if (n > 0) return true;  // ready, or an error/hang-up the next call reports
    if (n < 0 && errno != EINTR) return false;
  }
}

bool ConnectionStream::Handshake(SteadyTime deadline) {
  if (failed_) return false;
  if (ssl_ == nullptr) return true;
  for (;;) {
    ERR_clear_error();
    const int r = SSL_accept(ssl_);
    if (r == 1) return true;
    const int error = SSL_get_error(ssl_, r);
    if (error == SSL_ERROR_WANT_READ ? Wait(POLLIN, deadline)
                                     : error == SSL_ERROR_WANT_WRITE && Wait(POLLOUT, deadline)) {
      continue;
    }
    failed_ = true;
    return false;
  }
}

ssize_t ConnectionStream::Fill(SteadyTime deadline) {
  if (failed_) return -1;
  pos_ = end_ = 0;
  for (;;) {
    if (ssl_ != nullptr) {
      ERR_clear_error();
      const int r = SSL_read(ssl_, buffer_.data(), static_cast<int>(buffer_.size()));
      if (r > 0) return static_cast<ssize_t>(end_ = static_cast<size_t>(r));
      const int error = SSL_get_error(ssl_, r);
      if (error == SSL_ERROR_ZERO_RETURN) return 0;
      if (error == SSL_ERROR_WANT_READ ? Wait(POLLIN, deadline)
                                       : error == SSL_ERROR_WANT_WRITE && Wait(POLLOUT, deadline)) {
        continue;
      }
    } else {
      const ssize_t r = ::recv(fd_, buffer_.data(), buffer_.size(), 0);
      if (r >= 0) return static_cast<ssize_t>(end_ = static_cast<size_t>(r));
      if (errno == EINTR) continue;
      if ((errno == EAGAIN || errno == EWOULDBLOCK) && Wait(POLLIN, deadline)) continue;
    }
    failed_ = true;
    return -1;
  }
}

ssize_t ConnectionStream::SendSome(const char* data, size_t size, SteadyTime deadline) {
  for (;;) {
    if (ssl_ != nullptr) {
      ERR_clear_error();
      const int r = SSL_write(ssl_, data, static_cast<int>(std::min<size_t>(size, 1 << 30)));
      if (r > 0) return r;
      const int error = SSL_get_error(ssl_, r);
      if (error == SSL_ERROR_WANT_WRITE ? Wait(POLLOUT, deadline)
                                        : error == SSL_ERROR_WANT_READ && Wait(POLLIN, deadline)) {
        continue;
      }
    } else {
      const ssize_t r = ::send(fd_, data, size, MSG_NOSIGNAL);
      if (r >= 0) return r;
      if (errno == EINTR) continue;
      if ((errno == EAGAIN || errno == EWOULDBLOCK) && Wait(POLLOUT, deadline)) continue;
    }
    failed_ = true;
    return -1;
  }
}

SteadyTime ConnectionStream::ReadDeadline() const {
  return framing_.head_complete() ? body_deadline_ : std::min(head_deadline_, body_deadline_);
}

bool ConnectionStream::AwaitRequest(SteadyTime deadline) {
  if (pos_ < end_) return true;
  if (ssl_ != nullptr && SSL_pending(ssl_) > 0) return true;
  return Fill(deadline) > 0;
}

void ConnectionStream::BeginRequest(SteadyTime head_deadline, SteadyTime body_deadline) {
  head_deadline_ = head_deadline;
  body_deadline_ = body_deadline;
  framing_.Reset();
  response_head_.clear();
  response_head_seen_ = false;
  response_closes_ = false;
}

bool ConnectionStream::NoteDelivered(const char* data, size_t size) {
  size_t head_bytes = 0;
  switch (framing_.Deliver(data, size, head_bytes)) {
    case RequestFraming::Step::kHeadComplete:
      if (on_head_complete_ && !on_head_complete_()) failed_ = true;
      return true;
    case RequestFraming::Step::kHeadTooLarge: {
      // Answered here: the parser has not seen the head, so it cannot answer it.
      static const std::string kTooLarge = [] {
        const std::string body =
            R"j({"error":{"code":"RESOURCE_EXHAUSTED","message":"request head too large (too many or too long header lines)"}})j"
            "\n";
        return "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: application/json\r\n"
               "Connection: close\r\nContent-Length: " +
               std::to_string(body.size()) + "\r\n\r\n" + body;
      }();
      (void)write(kTooLarge.data(), kTooLarge.size());
      (void)Flush();
      failed_ = true;
      return false;
    }
    case RequestFraming::Step::kHead:
    case RequestFraming::Step::kBody: return true;
  }
  return true;
}

ssize_t ConnectionStream::read(char* ptr, size_t size) {
  if (failed_) return -1;
  if (pos_ == end_) {
    const ssize_t got = Fill(ReadDeadline());
    if (got <= 0) return got;
  }
  const size_t n = std::min(size, end_ - pos_);
  if (!NoteDelivered(buffer_.data() + pos_, n)) return -1;
  std::memcpy(ptr, buffer_.data() + pos_, n);
  pos_ += n;
  return static_cast<ssize_t>(n);
}

void ConnectionStream::NoteResponse(const char* data, size_t size) {
  if (response_head_seen_) return;
  response_head_.append(data, std::min(size, kResponseHeadLimit - std::min(kResponseHeadLimit, response_head_.size())));
  const size_t end = response_head_.find("\r\n\r\n");
  if (end == std::string::npos && response_head_.size() < kResponseHeadLimit) return;
  const int status =
      response_head_.rfind("HTTP/1.", 0) == 0 && response_head_.size() > 12 ? std::atoi(response_head_.c_str() + 9) : 0;
  if (status >= 100 && status < 200 && end != std::string::npos) {  // 100 Continue: the real head follows
    response_head_.erase(0, end + 4);
    return NoteResponse("", 0);
  }
  std::string lower = response_head_.substr(0, end);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  response_closes_ = StatusEndsConnection(status) || lower.find("\r\nconnection: close") != std::string::npos ||
                     !framing_.body_fully_read();
  response_head_seen_ = true;
  response_head_.clear();
}

ssize_t ConnectionStream::write(const char* ptr, size_t size) {
  if (failed_) return -1;
  // A response to a request whose body was not read to its end says it closes the
  // connection (the unread rest must never be parsed as a next request).
  std::string closing;
  if (!response_head_seen_ && response_head_.empty() && !framing_.body_fully_read()) {
    closing = WithConnectionClose(std::string_view(ptr, size));
  }
  const char* data = closing.empty() ? ptr : closing.data();
  const size_t length = closing.empty() ? size : closing.size();
  const bool head_was_seen = response_head_seen_;
  NoteResponse(data, length);
  // httplib writes a response's head and its body in two calls: each its own segment on
  // the wire, and a wake-up of the client for each. The final head (never a 100
  // Continue, which the client waits for) is held until the body's write or the end of
  // the request (Flush), and goes out with it in one send.
  if (!head_was_seen && response_head_seen_ && held_.empty() && length <= kHeldLimit) {
    held_.assign(data, length);
    return static_cast<ssize_t>(size);
  }
  if (!held_.empty()) {
    if (held_.size() + length <= kHeldLimit) {
      held_.append(data, length);
      const bool sent = SendAll(held_.data(), held_.size());
      held_.clear();
      return sent ? static_cast<ssize_t>(size) : -1;
    }
    if (!Flush()) return -1;
  }
  return SendAll(data, length) ? static_cast<ssize_t>(size) : -1;
}

bool ConnectionStream::SendAll(const char* data, size_t length) {
  const SteadyTime deadline = steady_clock::now() + limits_.write_timeout;
  for (size_t sent = 0; sent < length;) {
    const ssize_t n = SendSome(data + sent, length - sent, deadline);
    if (n < 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

bool ConnectionStream::Flush() {
  if (held_.empty()) return true;
  const bool sent = !failed_ && SendAll(held_.data(), held_.size());
  held_.clear();
  return sent;
}

bool ConnectionStream::is_readable() const {
  if (failed_) return false;
  if (pos_ < end_ || (ssl_ != nullptr && SSL_pending(ssl_) > 0)) return true;
  pollfd p{fd_, POLLIN, 0};
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(ReadDeadline() - steady_clock::now()).count();
  return left > 0 && ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 60'000))) > 0;
}

bool ConnectionStream::is_writable() const {
  if (failed_) return false;
  pollfd p{fd_, POLLOUT, 0};
  return ::poll(&p, 1, static_cast<int>(limits_.write_timeout.count())) > 0;
}

void ConnectionStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  port = 0;
  ip.clear();
  if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) AddressOf(addr, ip, port);
}

void ConnectionStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  port = 0;
  ip.clear();
  if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) AddressOf(addr, ip, port);
}

void ConnectionStream::Linger() {
  (void)Flush();  // the response that closes the connection, when it is still held
  if (ssl_ != nullptr && !failed_) SSL_shutdown(ssl_);  // one close_notify, not waiting for the peer's
  failed_ = true;                                      // nothing more is read or written
  ::shutdown(fd_, SHUT_WR);
  const SteadyTime deadline = steady_clock::now() + limits_.linger_timeout;
  char discard[4096];
  while (steady_clock::now() < deadline) {
    const ssize_t n = ::recv(fd_, discard, sizeof discard, 0);
    if (n == 0) break;
    if (n > 0 || errno == EINTR) continue;
    if ((errno != EAGAIN && errno != EWOULDBLOCK) || !Wait(POLLIN, deadline)) break;
  }
}

}  // namespace gpufed::server
