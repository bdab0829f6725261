#pragma once
// One accepted connection as the httplib::Stream that httplib's request parser reads and
// writes, plain or TLS (OpenSSL directly), with absolute deadlines: every read of a
// request must finish before that request's header deadline (until the blank line after
// its headers) and then its body deadline; every write must finish within the write
// timeout. Past a deadline a read or write fails, so httplib gives up on the request and
// the connection is closed, however slowly the client keeps trickling bytes.
#include <httplib.h>
#include <openssl/ssl.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "controller/common/status.h"
#include "controller/server/connection_limits.h"
#include "controller/server/request_framing.h"

namespace gpufed::server {

using SteadyTime = std::chrono::steady_clock::time_point;

// A server TLS context (TLS 1.2 or later) with a certificate chain and key from PEM files.
// With `client_ca_file`, mutual TLS: every client must present a certificate that chains
// to one of that file's CAs, or the handshake fails (no request is read).
class TlsContext {
 public:
  static Result<std::unique_ptr<TlsContext>> Load(const std::string& cert_file, const std::string& key_file,
                                                  const std::string& client_ca_file = "");
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;
  SSL_CTX* get() const { return ctx_; }
  // True when it was loaded with a client CA file: the handshake requires a client certificate.
  bool requires_client_certificate() const {
    return (SSL_CTX_get_verify_mode(ctx_) & SSL_VERIFY_FAIL_IF_NO_PEER_CERT) != 0;
  }

 private:
  explicit TlsContext(SSL_CTX* ctx) : ctx_(ctx) {}
  SSL_CTX* ctx_;
};

class ConnectionStream final : public httplib::Stream {
 public:
  // Owns `fd` (made non-blocking) from here on. `tls` null: plain HTTP. `on_head_complete`
  // runs when a request's headers have been read; false (the connection was evicted
  // meanwhile) fails the request.
  ConnectionStream(int fd, SSL_CTX* tls, ConnectionLimits limits, std::function<bool()> on_head_complete);
  ~ConnectionStream() override;
  ConnectionStream(const ConnectionStream&) = delete;
  ConnectionStream& operator=(const ConnectionStream&) = delete;

  // The TLS handshake, before `deadline` (plain: nothing to do).
  bool Handshake(SteadyTime deadline);
  // The TLS session (null on plain HTTP), for a handler that reads the client's verified
  // certificate (httplib's Request::ssl).
  SSL* ssl() const { return ssl_; }
  // Waits for the first byte of the next request; false on end of stream, error or deadline.
  bool AwaitRequest(SteadyTime deadline);
  // Starts a request: its head must be read by `head_deadline`, all of it by `body_deadline`.
  void BeginRequest(SteadyTime head_deadline, SteadyTime body_deadline);
  // The last response asked to close the connection ("Connection: close", or a status
  // after which the rest of the input cannot be trusted to be the next request).
  bool response_closes() const { return response_closes_; }
  // A read or write ran past its deadline.
  bool timed_out() const { return timed_out_; }
  // Before the connection closes after a response that closes it: shuts the write side
  // and reads (and discards) what the client still sends until it closes or
  // linger_timeout passes, so that the response is not lost to a reset. The destructor
  // closes the socket.
  void Linger();
  // Sends a response head that write() held back (below); true when nothing is left
  // unsent. The server calls it once httplib has written a request's response.
  bool Flush();

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return fd_; }

 private:
  // Reads into the buffer; >0 bytes, 0 end of stream, -1 error or deadline.
  ssize_t Fill(SteadyTime deadline);
  // Sends some of `data`; >0 bytes, -1 error or deadline.
  ssize_t SendSome(const char* data, size_t size, SteadyTime deadline);
  // Sends all of `data` within the write timeout; false on an error or past it.
  bool SendAll(const char* data, size_t length);
  // Waits until `events` (POLLIN/POLLOUT) are possible; false past the deadline.
  bool Wait(short events, SteadyTime deadline);
  SteadyTime ReadDeadline() const;
  // Accounts for bytes handed to the parser; false when the request head is over its
  // limits (answered with 431 here, and the connection fails).
  bool NoteDelivered(const char* data, size_t size);
  void NoteResponse(const char* data, size_t size);

  int fd_;
  SSL* ssl_ = nullptr;
  ConnectionLimits limits_;
  std::function<bool()> on_head_complete_;
  std::string buffer_;  // received, not yet delivered: buffer_[pos_, end_)
  size_t pos_ = 0, end_ = 0;
  SteadyTime head_deadline_, body_deadline_;
  RequestFraming framing_;      // where the request being read ends
  std::string response_head_;   // the start of the response being written
  std::string held_;            // a final response head not sent yet (write, Flush)
  bool response_head_seen_ = false;
  bool response_closes_ = false;
  bool timed_out_ = false;
  bool failed_ = false;
};

}  // namespace gpufed::server
