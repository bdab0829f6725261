#pragma once
// Small helpers shared by the TLS sinks and tests.
#include <csignal>
#include <functional>
#include <string>
#include <string_view>

#include "controller/common/status.h"

namespace gpufed::audit {

// Blocks SIGPIPE on this thread while alive, so a write to a closed socket fails with
// EPIPE instead of killing the process; a pending SIGPIPE is consumed on exit. Keeps
// the process's signal dispositions untouched (no global state).
class ScopedSigpipeBlock {
 public:
  ScopedSigpipeBlock();
  ~ScopedSigpipeBlock();
  ScopedSigpipeBlock(const ScopedSigpipeBlock&) = delete;
  ScopedSigpipeBlock& operator=(const ScopedSigpipeBlock&) = delete;

 private:
  sigset_t old_;
  bool was_blocked_ = false;
};

// The OpenSSL error queue as text (and cleared), for error messages.
std::string OpenSslErrors();

// Text a receiver sent (an answer's body) made safe to keep in a Status, which reaches
// the sink's stats, /v1 JSON and the journal: at most `max_bytes`, cut on a UTF-8
// character boundary, invalid sequences replaced by U+FFFD, control characters by spaces.
// (connectors/http/peer_text.h does the same for the connectors, which audit may not
// include; both belong in controller/common/utf8.h.)
std::string ReceiverText(std::string_view text, size_t max_bytes);

// Where a sink's refusal log goes; empty: standard error, "gpufed audit: LINE".
using SinkLogFn = std::function<void(const std::string& line)>;

// Says why a receiver is refused, once per episode: the first failure after a delivery
// (or after start) is logged with the sink and the reason (a wrong CA, a wrong name, a
// timeout, an answer over the cap), the shipper's retries of the same episode are not,
// and the first delivery after an episode logs the recovery. Reasons are Status
// messages, which never hold key material. Not thread-safe: one shipper drives a sink.
class RefusalLog {
 public:
  explicit RefusalLog(SinkLogFn log) : log_(std::move(log)) {}
  // Returns `status` unchanged, after logging it when it starts an episode.
  Status Failed(const std::string& sink, Status status);
  void Delivered(const std::string& sink);

 private:
  void Write(const std::string& line) const;
  SinkLogFn log_;
  bool failing_ = false;
};

}  // namespace gpufed::audit
