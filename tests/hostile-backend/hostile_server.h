#pragma once
// A misbehaving backend for the connectors' and audit sinks' clients: a server on a
// loopback address (127.0.0.1 unless told otherwise), plain TCP or TLS, that answers
// every connection in one chosen hostile way. Every wait in it is bounded and every
// connection ends when the server is destroyed (an eventfd wakes each poll), so a test
// never hangs on it.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "controller/common/status.h"

namespace gpufed::hostile {

enum class Mode {
  kSilent,        // accepts the TCP connection, never reads or writes (no TLS handshake either)
  kHang,          // handshake (TLS), reads the request, never answers
  kGarbage,       // answers the request with 4 KiB of bytes that are not HTTP, then closes
  kFlood,         // 200 headers without a length, then bytes as fast as the client reads, without end
  kDrip,          // 200 headers without a length, then one byte every `interval_ms`, without end
  kBigBody,       // a `big_body_bytes` body with its Content-Length, as fast as the client reads
  kBigChunked,    // the same body chunked (no Content-Length: only the read cap can stop it)
  kSlowHeaders,   // a status line, then one header byte every `interval_ms`; the headers never end
  kHeaderFlood,   // a status line, then header lines as fast as the client reads, without end
  kNeverEnds,     // announces a 50 kB body (under every cap), sends 100 bytes of it, then silence
  kRedirect,      // 302 to `redirect_to`
  kSlowReader,    // after the handshake reads raw bytes at 1 KiB per `interval_ms`, never answers
  kOk,            // 200 with `ok_body` (a well-behaved target, e.g. of a redirect)
};

const char* ModeName(Mode mode);

struct ServerOptions {
  Mode mode = Mode::kHang;
  std::string host = "127.0.0.1";  // a loopback address only
  // TLS when both are set: the certificate chain and key the server presents.
  std::string cert_pem;
  std::string key_pem;
  int interval_ms = 100;             // kDrip, kSlowHeaders, kSlowReader
  size_t big_body_bytes = 10'000'000;
  std::string redirect_to;           // kRedirect: the Location
  std::string ok_body = "{}";        // kOk
  // Read the request's head before the hostile part (HTTP clients). Off for protocols
  // whose client speaks only when it has something to send (syslog): the server starts
  // at once after the handshake.
  bool read_request = true;
};

class HostileServer {
 public:
  // Listens on `options.host`, port 0 (the kernel picks). InvalidArgument for a host
  // that is not a 127.x.y.z address; Unavailable when it cannot listen; FailedPrecondition
  // for unusable TLS material.
  static Result<std::unique_ptr<HostileServer>> Start(ServerOptions options);
  // Wakes and joins every connection.
  ~HostileServer();
  HostileServer(const HostileServer&) = delete;
  HostileServer& operator=(const HostileServer&) = delete;

  int port() const { return port_; }
  // "http://127.0.0.1:PORT" or "https://..."; "host:port" for non-HTTP clients via hostport().
  std::string url() const;
  std::string hostport() const;
  // Request heads read so far, and whether any carried an Authorization header.
  int64_t requests() const { return requests_.load(); }
  bool saw_authorization() const { return saw_authorization_.load(); }
  int64_t connections() const { return connections_.load(); }

 private:
  struct Tls;
  class Conn;
  explicit HostileServer(ServerOptions options);
  Status Listen();
  void AcceptLoop();
  void Serve(int fd);
  void Play(Conn& conn);

  ServerOptions options_;
  std::unique_ptr<Tls> tls_;
  int listen_fd_ = -1;
  int stop_fd_ = -1;  // eventfd: readable once the server stops
  int port_ = 0;
  std::atomic<int64_t> requests_{0};
  std::atomic<int64_t> connections_{0};
  std::atomic<bool> saw_authorization_{false};
  std::thread acceptor_;
  std::mutex mu_;                       // guards workers_
  std::vector<std::thread> workers_;
};

}  // namespace gpufed::hostile
