#include "controller/audit/sinks/syslog_tls_sink.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netdb.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "controller/audit/record.h"
#include "controller/audit/sinks/tls_util.h"

namespace gpufed::audit {
namespace {

int PollFor(int fd, short events, int64_t timeout_micros) {
  pollfd p{fd, events, 0};
  int rc;
  // Rounded up: a wait of under a millisecond must not become poll(0) in a busy loop.
  const int timeout_ms = timeout_micros <= 0 ? 0 : static_cast<int>((timeout_micros + 999) / 1000);
  do {
    rc = ::poll(&p, 1, timeout_ms);
  } while (rc < 0 && errno == EINTR);
  return rc > 0 ? p.revents : rc;
}

bool IsIpAddress(const std::string& s) {
  unsigned char buf[16];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

}  // namespace

struct SyslogTlsSink::Tls {
  SSL_CTX* ctx = nullptr;
  SSL* ssl = nullptr;
  int fd = -1;
  ~Tls() {
    if (ssl != nullptr) SSL_free(ssl);
    if (ctx != nullptr) SSL_CTX_free(ctx);
    if (fd >= 0) ::close(fd);
  }
};

SyslogTlsSink::SyslogTlsSink(Env* env, SyslogTlsOptions options)
    : env_(env), options_(std::move(options)), refusals_(options_.log) {
  if (options_.server_name.empty()) options_.server_name = options_.host;
  if (options_.hostname.empty()) {
    char buf[256] = {0};
    ::gethostname(buf, sizeof buf - 1);
    options_.hostname = buf[0] != 0 ? buf : "-";
  }
  procid_ = std::to_string(::getpid());
}

SyslogTlsSink::~SyslogTlsSink() { Disconnect(); }

std::string SyslogTlsSink::Describe() const {
  return "syslog-tls " + options_.host + ":" + std::to_string(options_.port);
}

void SyslogTlsSink::AppendHeader(const JournalEntry& e, std::string_view time_text, std::string* out) const {
  char seq[24];
  char* seq_end = std::to_chars(seq, seq + sizeof seq, e.seq).ptr;
  out->append("<110>1 ");
  out->append(time_text);
  out->push_back(' ');
  out->append(options_.hostname);
  out->push_back(' ');
  out->append(options_.app_name);
  out->push_back(' ');
  out->append(procid_);
  out->append(" audit [gpufed@32473 seq=\"");
  out->append(seq, static_cast<size_t>(seq_end - seq));
  out->append("\" hash=\"");
  out->append(e.hash);
  out->append("\" kind=\"");
  out->append(e.kind);
  out->append("\"] ");
}

std::string SyslogTlsSink::FormatMessage(const JournalEntry& e) const {
  std::string msg;
  msg.reserve(e.line.size() + 200);
  AppendHeader(e, FormatTimeMicros(e.time_micros), &msg);
  msg += e.line;
  return msg;
}

Status SyslogTlsSink::Connect() {
  Status s = ConnectOnce();
  return s.ok() ? s : refusals_.Failed(Describe(), s);
}

Status SyslogTlsSink::ConnectOnce() {
  Disconnect();
  auto tls = std::make_unique<Tls>();
  tls->ctx = SSL_CTX_new(TLS_client_method());
  if (tls->ctx == nullptr) return Internal("SSL_CTX_new: " + OpenSslErrors());
  SSL_CTX_set_min_proto_version(tls->ctx, TLS1_2_VERSION);
  SSL_CTX_set_verify(tls->ctx, SSL_VERIFY_PEER, nullptr);
  if (SSL_CTX_load_verify_locations(tls->ctx, options_.ca_file.c_str(), nullptr) != 1) {
    return FailedPrecondition("CA file " + options_.ca_file + ": " + OpenSslErrors());
  }
  if (!options_.cert_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(tls->ctx, options_.cert_file.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(tls->ctx, options_.key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(tls->ctx) != 1) {
      return FailedPrecondition("client certificate " + options_.cert_file + ": " + OpenSslErrors());
    }
  }

  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* addrs = nullptr;
  std::string port = std::to_string(options_.port);
  if (int rc = ::getaddrinfo(options_.host.c_str(), port.c_str(), &hints, &addrs); rc != 0) {
    return Unavailable("resolve " + options_.host + ": " + gai_strerror(rc));
  }
  std::string last_error = "no address";
  for (addrinfo* a = addrs; a != nullptr && tls->fd < 0; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      int ev = PollFor(fd, POLLOUT, options_.connect_timeout_micros);
      int err = 0;
      socklen_t len = sizeof err;
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      rc = ev > 0 && err == 0 ? 0 : -1;
      errno = ev == 0 ? ETIMEDOUT : err;
    }
    if (rc == 0) {
      tls->fd = fd;
    } else {
      last_error = std::strerror(errno);
      ::close(fd);
    }
  }
  ::freeaddrinfo(addrs);
  if (tls->fd < 0) return Unavailable("connect " + Describe() + ": " + last_error);

  tls->ssl = SSL_new(tls->ctx);
  SSL_set_fd(tls->ssl, tls->fd);
  SSL_set_tlsext_host_name(tls->ssl, options_.server_name.c_str());
  if (IsIpAddress(options_.server_name)) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(tls->ssl), options_.server_name.c_str());
  } else {
    SSL_set1_host(tls->ssl, options_.server_name.c_str());
  }
  ScopedSigpipeBlock no_sigpipe;
  int64_t deadline = env_->NowMicros() + options_.io_timeout_micros;
  for (;;) {
    int rc = SSL_connect(tls->ssl);
    if (rc == 1) break;
    int err = SSL_get_error(tls->ssl, rc);
    int64_t left = deadline - env_->NowMicros();
    if ((err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) && left > 0) {
      PollFor(tls->fd, err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, left);
      continue;
    }
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
      return Unavailable("TLS handshake with " + Describe() + " timed out after " +
                         std::to_string(options_.io_timeout_micros / 1000) + " ms");
    }
    long verify = SSL_get_verify_result(tls->ssl);
    std::string detail = verify != X509_V_OK ? X509_verify_cert_error_string(verify) : OpenSslErrors();
    return Unavailable("TLS handshake with " + Describe() + " failed: " + (detail.empty() ? "connection closed" : detail));
  }
  tls_ = std::move(tls);
  in_flight_.clear();
  acked_ = 0;
  unexpected_bytes_ = 0;
  return Status::Ok();
}

void SyslogTlsSink::Disconnect() {
  if (tls_ == nullptr) return;
  ScopedSigpipeBlock no_sigpipe;
  SSL_shutdown(tls_->ssl);  // best effort; receivers often skip close_notify
  tls_.reset();
  in_flight_.clear();
}

Status SyslogTlsSink::WriteAll(const std::string& data) {
  ScopedSigpipeBlock no_sigpipe;
  size_t off = 0;
  int64_t deadline = env_->NowMicros() + options_.io_timeout_micros;
  while (off < data.size()) {
    size_t written = 0;
    int rc = SSL_write_ex(tls_->ssl, data.data() + off, data.size() - off, &written);
    if (rc == 1) {
      off += written;  // the deadline stays: progress at a byte a second must not hold a Send forever
      continue;
    }
    int err = SSL_get_error(tls_->ssl, rc);
    int64_t left = deadline - env_->NowMicros();
    if ((err == SSL_ERROR_WANT_WRITE || err == SSL_ERROR_WANT_READ) && left > 0) {
      PollFor(tls_->fd, err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, left);
      continue;
    }
    std::string detail = err == SSL_ERROR_SYSCALL ? std::strerror(errno) : OpenSslErrors();
    return Unavailable("write to " + Describe() + ": " +
                       (left <= 0 ? "timed out (" + std::to_string(off) + " of " + std::to_string(data.size()) +
                                        " bytes written in " + std::to_string(options_.io_timeout_micros / 1000) + " ms)"
                                  : detail));
  }
  return Status::Ok();
}

Status SyslogTlsSink::Send(std::span<const JournalEntry> batch) {
  if (tls_ == nullptr) return FailedPrecondition("not connected");
  if (batch.empty()) return Status::Ok();
  if (Status alive = CheckAlive(); !alive.ok()) return refusals_.Failed(Describe(), alive);
  // Every frame of the batch goes into one buffer (reused across batches), written with
  // as few SSL_write calls as OpenSSL allows: full 16 KiB TLS records, not one per message.
  buffer_.clear();
  for (const JournalEntry& e : batch) {
    // Records of one group commit share a time: format it once for all of them.
    if (!have_time_ || e.time_micros != time_micros_) {
      time_text_ = FormatTimeMicros(e.time_micros);
      time_micros_ = e.time_micros;
      have_time_ = true;
    }
    header_.clear();
    AppendHeader(e, time_text_, &header_);
    const size_t size = header_.size() + e.line.size();
    if (size > options_.max_message_bytes) {
      // Never cut a record: a truncated record would fail verification downstream.
      return FailedPrecondition("record seq " + std::to_string(e.seq) + " is " + std::to_string(size) +
                                " bytes, above the receiver's limit " + std::to_string(options_.max_message_bytes) +
                                " (raise maxMessageSize on the receiver and max_message_bytes here)");
    }
    // Octet counting (RFC 5425 "MSG-LEN SP SYSLOG-MSG").
    char len[24];
    char* len_end = std::to_chars(len, len + sizeof len, size).ptr;
    buffer_.append(len, static_cast<size_t>(len_end - len));
    buffer_.push_back(' ');
    buffer_.append(header_);
    buffer_.append(e.line);
  }
  if (Status written = WriteAll(buffer_); !written.ok()) return refusals_.Failed(Describe(), written);
  in_flight_.push_back({batch.back().seq, BIO_number_written(SSL_get_wbio(tls_->ssl)), 0});
  return Status::Ok();
}

Status SyslogTlsSink::CheckAlive() {
  // The receiver never sends application data: readable means an alert, EOF or a TLS
  // 1.3 session ticket. Read without blocking to tell them apart.
  int ev = PollFor(tls_->fd, POLLIN | POLLRDHUP, 0);
  if (ev < 0) return Unavailable("poll: " + std::string(std::strerror(errno)));
  if (ev & (POLLERR | POLLHUP | POLLNVAL)) return Unavailable(Describe() + " closed the connection");
  if (ev & (POLLIN | POLLRDHUP)) {
    ScopedSigpipeBlock no_sigpipe;
    char buf[4096];
    for (;;) {
      size_t n = 0;
      int rc = SSL_read_ex(tls_->ssl, buf, sizeof buf, &n);
      if (rc == 1) {
        // Unexpected data: ignored up to a bound, so a flooding receiver cannot hold us here.
        unexpected_bytes_ += n;
        if (unexpected_bytes_ > options_.max_unexpected_bytes) {
          return Unavailable(Describe() + " sent " + std::to_string(unexpected_bytes_) +
                             " bytes of application data (a syslog receiver sends none); connection dropped");
        }
        continue;
      }
      int err = SSL_get_error(tls_->ssl, rc);
      if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) break;
      std::string detail = err == SSL_ERROR_ZERO_RETURN ? "closed (close_notify)"
                           : err == SSL_ERROR_SSL        ? OpenSslErrors()
                                                         : "closed";
      return Unavailable(Describe() + " ended the session: " + (detail.empty() ? "alert" : detail));
    }
  }
  return Status::Ok();
}

Result<uint64_t> SyslogTlsSink::Acknowledged() {
  if (tls_ == nullptr) return FailedPrecondition("not connected");
  if (Status alive = CheckAlive(); !alive.ok()) return refusals_.Failed(Describe(), alive);
  if (in_flight_.empty()) return acked_;
  // Bytes of ciphertext the receiver's TCP has acknowledged: written minus still queued.
  int unacked_bytes = 0;
  if (::ioctl(tls_->fd, SIOCOUTQ, &unacked_bytes) != 0) return acked_;
  uint64_t tcp_acked = BIO_number_written(SSL_get_wbio(tls_->ssl)) - static_cast<uint64_t>(unacked_bytes);
  int64_t now = env_->NowMicros();
  for (InFlight& f : in_flight_) {
    if (f.end_bytes > tcp_acked) break;
    if (f.tcp_acked_micros == 0) f.tcp_acked_micros = now;
  }
  while (!in_flight_.empty() && in_flight_.front().tcp_acked_micros != 0 &&
         now - in_flight_.front().tcp_acked_micros >= options_.settle_micros) {
    acked_ = in_flight_.front().seq;
    in_flight_.pop_front();
    refusals_.Delivered(Describe());  // settled: the receiver takes records
  }
  return acked_;
}

}  // namespace gpufed::audit
