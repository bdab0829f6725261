#pragma once
// HTTPS: batches of records POSTed as JSON lines (application/x-ndjson, one record line
// per line, exactly as in the journal) with libcurl, mutual TLS, server verification.
// A 2xx answer acknowledges the whole batch. 5xx, 408, 429, timeouts and connection
// errors are Unavailable (retried with backoff); other answers are FailedPrecondition
// (also retried, never dropped: the receiver is misconfigured and the lag alert fires).
//
// Bounded whatever the receiver does: each POST ends within `timeout_micros` (connect,
// TLS, headers and answer; a transfer stalled for `stall_micros` ends sooner), an answer
// over `max_answer_bytes` (or headers over `max_header_bytes`) is cut off while it
// arrives, and redirects are never followed (a 3xx is FailedPrecondition). Why the
// receiver is refused (certificate verification with the detail "unable to get local
// issuer certificate" or "no alternative certificate subject name matches", a timeout,
// an answer over the cap) is in the Status and logged once per episode (tls_util.h).
#include <string>
#include <string_view>

#include "controller/audit/sinks/https_post.h"
#include "controller/audit/sinks/sink.h"
#include "controller/audit/sinks/tls_util.h"

namespace gpufed::audit {

// The POST's bounds (https_post.h; a receiver answers a batch with a status line and a
// short body, so anything over 64 KiB is not a log collector's answer) and where refusals
// are logged.
struct HttpsOptions : HttpsPostOptions {
  SinkLogFn log;  // refusals; empty: standard error
};

// The start of an answer's body, kept for error messages: `piece` (as curl hands the
// body over, in pieces) is appended while `*head` holds fewer than kAnswerHeadBytes.
inline constexpr size_t kAnswerHeadBytes = 512;
void KeepAnswerHead(std::string_view piece, std::string* head);
// What the receiver's answer to a batch means (see the file comment): OK for 2xx,
// Unavailable for 5xx, 408 and 429, FailedPrecondition otherwise, naming `url`, the code
// and the answer's `head` (made valid UTF-8, ReceiverText).
Status BatchAnswerStatus(const std::string& url, long http_code, std::string_view head);

class HttpsSink final : public Sink {
 public:
  explicit HttpsSink(HttpsOptions options);
  HttpsSink(const HttpsSink&) = delete;
  HttpsSink& operator=(const HttpsSink&) = delete;
  ~HttpsSink() override;

  Status Connect() override;
  Status Send(std::span<const JournalEntry> batch) override;
  Result<uint64_t> Acknowledged() override { return acked_; }
  void Disconnect() override;
  std::string Describe() const override { return "https " + options_.url; }

 private:
  HttpsOptions options_;
  HttpsPoster poster_;  // one handle, reused so the TLS connection is kept alive
  uint64_t acked_ = 0;
  std::string body_;
  RefusalLog refusals_;
};

}  // namespace gpufed::audit
