#pragma once
// syslog over TLS (RFC 5425): each record is an RFC 5424 message
//   <110>1 TIME HOST gpufed PID audit [gpufed@32473 seq="N" hash="H" kind="K"] {record JSON}
// (facility 13 "log audit", severity 6), framed by octet counting ("LEN SP MSG"), over
// TLS 1.2+ with the server verified against a CA file and a host name, and a client
// certificate (mutual TLS). OpenSSL, non-blocking socket, bounded waits.
//
// Acknowledgement: syslog has none, and a receiver that rejects our certificate under
// TLS 1.3 only shows it by closing later. A record counts as delivered once the
// receiver's TCP has acknowledged the bytes that carried it (bytes written minus
// SIOCOUTQ) and the connection has then stayed open, without an alert or EOF, for
// `settle_micros`. A lost connection resends everything not yet settled (at-least-once;
// receivers see duplicates). This is evidence, not proof: a receiver that holds records
// in memory longer than the settle time and then dies loses them; give rsyslog a direct
// or disk-assisted queue, or use the https sink, whose 2xx is an acknowledgement.
//
// Bounded whatever the receiver does: the TCP connect within `connect_timeout_micros`,
// the handshake within `io_timeout_micros`, each batch written within
// `io_timeout_micros` in all (a receiver that reads a byte a second cannot hold a Send
// longer), and a receiver that sends application data (a syslog receiver sends none)
// is dropped after `max_unexpected_bytes`. Why a receiver is refused (the certificate's
// verification error: "unable to get local issuer certificate", "hostname mismatch",
// ...) is in the Status and logged once per episode (tls_util.h).
#include <deque>
#include <memory>
#include <string>
#include <string_view>

#include "controller/audit/env.h"
#include "controller/audit/sinks/sink.h"
#include "controller/audit/sinks/tls_util.h"

namespace gpufed::audit {

struct SyslogTlsOptions {
  std::string host = "127.0.0.1";
  int port = 6514;
  std::string ca_file;
  std::string cert_file;    // client certificate (PEM chain)
  std::string key_file;
  std::string server_name;  // checked against the server certificate; default: host
  std::string hostname;     // HOSTNAME field of our messages; default: gethostname()
  std::string app_name = "gpufed";
  int64_t settle_micros = 2'000'000;
  int64_t connect_timeout_micros = 5'000'000;
  int64_t io_timeout_micros = 10'000'000;
  size_t max_message_bytes = 65536;  // the receiver's limit (rsyslog maxMessageSize)
  size_t max_unexpected_bytes = 65536;  // application data from the receiver per connection
  SinkLogFn log;                     // refusals; empty: standard error
};

class SyslogTlsSink final : public Sink {
 public:
  // `env` (the clock) must outlive the sink.
  SyslogTlsSink(Env* env, SyslogTlsOptions options);
  SyslogTlsSink(const SyslogTlsSink&) = delete;
  SyslogTlsSink& operator=(const SyslogTlsSink&) = delete;
  ~SyslogTlsSink() override;

  Status Connect() override;
  Status Send(std::span<const JournalEntry> batch) override;
  Result<uint64_t> Acknowledged() override;
  void Disconnect() override;
  std::string Describe() const override;

  // One RFC 5424 message for `entry`, without framing. Exposed for tests.
  std::string FormatMessage(const JournalEntry& entry) const;

 private:
  struct Tls;
  // Appends the message's header (everything before the record line) to `*out`.
  void AppendHeader(const JournalEntry& entry, std::string_view time_text, std::string* out) const;
  Status ConnectOnce();
  Status WriteAll(const std::string& data);
  Status CheckAlive();

  Env* env_;
  SyslogTlsOptions options_;
  std::string procid_;
  std::unique_ptr<Tls> tls_;
  struct InFlight {
    uint64_t seq;
    uint64_t end_bytes;        // ciphertext bytes written through this batch
    int64_t tcp_acked_micros;  // 0 until the receiver's TCP acknowledged it
  };
  std::deque<InFlight> in_flight_;
  uint64_t acked_ = 0;
  size_t unexpected_bytes_ = 0;  // application data the receiver sent on this connection
  RefusalLog refusals_;
  // Reused by Send: the frames of a batch, one message header, the last time text.
  std::string buffer_;
  std::string header_;
  bool have_time_ = false;
  int64_t time_micros_ = 0;
  std::string time_text_;
};

}  // namespace gpufed::audit
