#include "tests/hostile-backend/hostile_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

namespace gpufed::hostile {
namespace {

// Bounds that keep every loop finite even if a client never gives up.
constexpr size_t kMaxHeadBytes = 64 << 10;
constexpr int64_t kMaxFloodBytes = int64_t{4} << 30;
constexpr int kMaxSlowSteps = 100'000;
constexpr int kMaxConnections = 64;
constexpr int kIoPollMs = 50;  // how often a blocked write looks at the stop signal

std::string TextOfOpenSslErrors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    out += (out.empty() ? "" : "; ") + std::string(buf);
  }
  return out;
}

}  // namespace

const char* ModeName(Mode mode) {
  switch (mode) {
    case Mode::kSilent: return "silent";
    case Mode::kHang: return "hang";
    case Mode::kGarbage: return "garbage";
    case Mode::kFlood: return "flood";
    case Mode::kDrip: return "drip";
    case Mode::kBigBody: return "big_body";
    case Mode::kBigChunked: return "big_chunked";
    case Mode::kSlowHeaders: return "slow_headers";
    case Mode::kHeaderFlood: return "header_flood";
    case Mode::kNeverEnds: return "never_ends";
    case Mode::kRedirect: return "redirect";
    case Mode::kSlowReader: return "slow_reader";
    case Mode::kOk: return "ok";
  }
  return "?";
}

struct HostileServer::Tls {
  SSL_CTX* ctx = nullptr;
  ~Tls() {
    if (ctx != nullptr) SSL_CTX_free(ctx);
  }
};

// One accepted connection, plain or TLS, on a non-blocking socket; every wait also
// watches the server's stop eventfd and gives up when it fires.
class HostileServer::Conn {
 public:
  Conn(int fd, int stop_fd, SSL_CTX* ctx) : fd_(fd), stop_fd_(stop_fd) {
    if (ctx != nullptr) {
      ssl_ = SSL_new(ctx);
      SSL_set_fd(ssl_, fd_);
    }
  }
  ~Conn() {
    if (ssl_ != nullptr) SSL_free(ssl_);
    ::close(fd_);
  }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  // False when the server stops, the peer goes away or the wait ends.
  bool Wait(short events, int timeout_ms) {
    pollfd p[2] = {{fd_, events, 0}, {stop_fd_, POLLIN, 0}};
    int rc;
    do {
      rc = ::poll(p, 2, timeout_ms);
    } while (rc < 0 && errno == EINTR);
    if (rc <= 0 || (p[1].revents & POLLIN) != 0) return false;
    return (p[0].revents & (POLLERR | POLLNVAL)) == 0;
  }
  // Sleeps `ms` unless the server stops first (false then).
  bool Pause(int ms) {
    pollfd p{stop_fd_, POLLIN, 0};
    return ::poll(&p, 1, ms) == 0;
  }
  bool Handshake() {
    if (ssl_ == nullptr) return true;
    for (int i = 0; i < 1000; ++i) {
      int rc = SSL_accept(ssl_);
      if (rc == 1) return true;
      int err = SSL_get_error(ssl_, rc);
      if (err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE) return false;
      if (!Wait(err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, 5000)) return false;
    }
    return false;
  }
  // Some bytes (> 0), or 0 when the peer closed, the server stops or nothing came in time.
  size_t Read(char* buf, size_t n, int timeout_ms = 10'000) {
    for (int i = 0; i < 1000; ++i) {
      if (ssl_ != nullptr) {
        size_t got = 0;
        int rc = SSL_read_ex(ssl_, buf, n, &got);
        if (rc == 1) return got;
        int err = SSL_get_error(ssl_, rc);
        if (err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE) return 0;
        if (!Wait(err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, timeout_ms)) return 0;
      } else {
        ssize_t got = ::recv(fd_, buf, n, 0);
        if (got > 0) return static_cast<size_t>(got);
        if (got == 0 || (errno != EAGAIN && errno != EINTR)) return 0;
        if (!Wait(POLLIN, timeout_ms)) return 0;
      }
    }
    return 0;
  }
  // Raw bytes from the socket, under TLS too (a reader too slow to decrypt anything).
  size_t ReadRaw(char* buf, size_t n) {
    if (!Wait(POLLIN, 10'000)) return 0;
    ssize_t got = ::recv(fd_, buf, n, 0);
    return got > 0 ? static_cast<size_t>(got) : 0;
  }
  // All of `data`, or false when the peer went away or the server stops.
  bool Write(std::string_view data) {
    size_t off = 0;
    while (off < data.size()) {
      if (ssl_ != nullptr) {
        size_t put = 0;
        int rc = SSL_write_ex(ssl_, data.data() + off, data.size() - off, &put);
        if (rc == 1) {
          off += put;
          continue;
        }
        int err = SSL_get_error(ssl_, rc);
        if (err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE) return false;
        if (!Wait(err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, kIoPollMs) && Stopping()) return false;
      } else {
        ssize_t put = ::send(fd_, data.data() + off, data.size() - off, MSG_NOSIGNAL);
        if (put > 0) {
          off += static_cast<size_t>(put);
          continue;
        }
        if (put < 0 && errno != EAGAIN && errno != EINTR) return false;
        if (!Wait(POLLOUT, kIoPollMs) && Stopping()) return false;
      }
    }
    return true;
  }
  bool Stopping() {
    pollfd p{stop_fd_, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
  }
  // Reads until the end of a request head ("\r\n\r\n"), at most kMaxHeadBytes.
  bool ReadHead(std::string* head) {
    char buf[4096];
    while (head->find("\r\n\r\n") == std::string::npos && head->size() < kMaxHeadBytes) {
      size_t got = Read(buf, sizeof buf);
      if (got == 0) return false;
      head->append(buf, got);
    }
    return true;
  }

 private:
  int fd_;
  int stop_fd_;
  SSL* ssl_ = nullptr;
};

HostileServer::HostileServer(ServerOptions options) : options_(std::move(options)) {}

Result<std::unique_ptr<HostileServer>> HostileServer::Start(ServerOptions options) {
  if (options.host.rfind("127.", 0) != 0) return InvalidArgument("the hostile server listens on loopback only");
  std::unique_ptr<HostileServer> server(new HostileServer(std::move(options)));
  GPUFED_RETURN_IF_ERROR(server->Listen());
  server->acceptor_ = std::thread([s = server.get()] { s->AcceptLoop(); });
  return server;
}

Status HostileServer::Listen() {
  if (!options_.cert_pem.empty()) {
    tls_ = std::make_unique<Tls>();
    tls_->ctx = SSL_CTX_new(TLS_server_method());
    BIO* cert_bio = BIO_new_mem_buf(options_.cert_pem.data(), static_cast<int>(options_.cert_pem.size()));
    BIO* key_bio = BIO_new_mem_buf(options_.key_pem.data(), static_cast<int>(options_.key_pem.size()));
    X509* cert = PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr);
    EVP_PKEY* key = PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
    BIO_free(cert_bio);
    BIO_free(key_bio);
    const bool ok = cert != nullptr && key != nullptr && SSL_CTX_use_certificate(tls_->ctx, cert) == 1 &&
                    SSL_CTX_use_PrivateKey(tls_->ctx, key) == 1;
    X509_free(cert);
    EVP_PKEY_free(key);
    if (!ok) return FailedPrecondition("hostile server TLS material: " + TextOfOpenSslErrors());
  }
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (stop_fd_ < 0 || listen_fd_ < 0) return Unavailable(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = 0;
  if (inet_pton(AF_INET, options_.host.c_str(), &addr.sin_addr) != 1) return InvalidArgument("bad host " + options_.host);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listen_fd_, 16) != 0) {
    return Unavailable("listen on " + options_.host + ": " + std::strerror(errno));
  }
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  return Status::Ok();
}

HostileServer::~HostileServer() {
  if (stop_fd_ >= 0) {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(stop_fd_, &one, sizeof one);
  }
  if (acceptor_.joinable()) acceptor_.join();
  std::vector<std::thread> workers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    workers.swap(workers_);
  }
  for (std::thread& t : workers) t.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (stop_fd_ >= 0) ::close(stop_fd_);
}

std::string HostileServer::hostport() const { return options_.host + ":" + std::to_string(port_); }

std::string HostileServer::url() const { return std::string(tls_ ? "https://" : "http://") + hostport(); }

void HostileServer::AcceptLoop() {
  for (;;) {
    pollfd p[2] = {{listen_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (::poll(p, 2, -1) < 0 && errno != EINTR) return;
    if ((p[1].revents & POLLIN) != 0) return;
    if ((p[0].revents & POLLIN) == 0) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) continue;
    if (connections_.fetch_add(1) >= kMaxConnections) {
      ::close(fd);
      continue;
    }
    std::lock_guard<std::mutex> lock(mu_);
    workers_.emplace_back([this, fd] { Serve(fd); });
  }
}

void HostileServer::Serve(int fd) {
  // A write to a client that left must fail with EPIPE, not kill the test process.
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
  Conn conn(fd, stop_fd_, tls_ ? tls_->ctx : nullptr);
  if (options_.mode == Mode::kSilent) {
    while (conn.Pause(1000)) {
    }
    return;
  }
  if (!conn.Handshake()) return;
  if (options_.read_request && options_.mode != Mode::kSlowReader) {
    std::string head;
    if (!conn.ReadHead(&head)) return;
    ++requests_;
    std::string lower = head;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (lower.find("\r\nauthorization:") != std::string::npos) saw_authorization_ = true;
  }
  Play(conn);
}

void HostileServer::Play(Conn& conn) {
  static const std::string kFill(64 << 10, 'x');
  const int step = options_.interval_ms;
  switch (options_.mode) {
    case Mode::kSilent:
      return;
    case Mode::kHang:
      while (conn.Pause(1000)) {
      }
      return;
    case Mode::kGarbage: {
      std::string junk(4096, '\0');
      for (size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<char>((i * 131 + 7) % 256);
      conn.Write(junk);
      return;
    }
    case Mode::kFlood: {
      if (!conn.Write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n[")) return;
      for (int64_t sent = 0; sent < kMaxFloodBytes && conn.Write(kFill); sent += static_cast<int64_t>(kFill.size())) {
      }
      return;
    }
    case Mode::kDrip: {
      if (!conn.Write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n")) return;
      for (int i = 0; i < kMaxSlowSteps && conn.Pause(step) && conn.Write(" "); ++i) {
      }
      return;
    }
    case Mode::kBigBody:
    case Mode::kBigChunked: {
      const bool chunked = options_.mode == Mode::kBigChunked;
      std::string head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n";
      head += chunked ? "Transfer-Encoding: chunked\r\n\r\n"
                      : "Content-Length: " + std::to_string(options_.big_body_bytes) + "\r\n\r\n";
      if (!conn.Write(head)) return;
      for (size_t sent = 0; sent < options_.big_body_bytes;) {
        const size_t n = std::min(kFill.size(), options_.big_body_bytes - sent);
        char size_line[32];
        std::snprintf(size_line, sizeof size_line, "%zx\r\n", n);
        if (chunked && !conn.Write(size_line)) return;
        if (!conn.Write(std::string_view(kFill).substr(0, n))) return;
        if (chunked && !conn.Write("\r\n")) return;
        sent += n;
      }
      if (chunked) conn.Write("0\r\n\r\n");
      while (conn.Pause(1000)) {
      }
      return;
    }
    case Mode::kSlowHeaders: {
      if (!conn.Write("HTTP/1.1 200 OK\r\nX-Slow: ")) return;
      for (int i = 0; i < kMaxSlowSteps && conn.Pause(step) && conn.Write("s"); ++i) {
      }
      return;
    }
    case Mode::kHeaderFlood: {
      if (!conn.Write("HTTP/1.1 200 OK\r\n")) return;
      const std::string line = "X-Flood: " + std::string(1000, 'h') + "\r\n";
      for (int64_t sent = 0; sent < kMaxFloodBytes && conn.Write(line); sent += static_cast<int64_t>(line.size())) {
      }
      return;
    }
    case Mode::kNeverEnds: {
      if (!conn.Write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 50000\r\n\r\n")) return;
      if (!conn.Write(std::string(100, ' '))) return;
      while (conn.Pause(1000)) {
      }
      return;
    }
    case Mode::kRedirect: {
      conn.Write("HTTP/1.1 302 Found\r\nLocation: " + options_.redirect_to +
                 "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      return;
    }
    case Mode::kSlowReader: {
      char buf[1024];
      for (int i = 0; i < kMaxSlowSteps && conn.Pause(step) && conn.ReadRaw(buf, sizeof buf) > 0; ++i) {
      }
      return;
    }
    case Mode::kOk: {
      conn.Write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                 std::to_string(options_.ok_body.size()) + "\r\nConnection: close\r\n\r\n" + options_.ok_body);
      return;
    }
  }
}

}  // namespace gpufed::hostile
