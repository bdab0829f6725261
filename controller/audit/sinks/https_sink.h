#pragma once
// HTTPS: batches of records POSTed as JSON lines (application/x-ndjson, one record line
// per line, exactly as in the journal) with libcurl, mutual TLS, server verification.
// A 2xx answer acknowledges the whole batch. 5xx, 408, 429, timeouts and connection
// errors are Unavailable (retried with backoff); other answers are FailedPrecondition
// (also retried, never dropped: the receiver is misconfigured and the lag alert fires).
#include <string>
#include <string_view>

#include "controller/audit/sinks/sink.h"

namespace gpufed::audit {

struct HttpsOptions {
  std::string url;          // https://host:port/path
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  int64_t timeout_micros = 10'000'000;
  int64_t connect_timeout_micros = 5'000'000;
};

// The start of an answer's body, kept for error messages: `piece` (as curl hands the
// body over, in pieces) is appended while `*head` holds fewer than kAnswerHeadBytes.
inline constexpr size_t kAnswerHeadBytes = 512;
void KeepAnswerHead(std::string_view piece, std::string* head);
// What the receiver's answer to a batch means (see the file comment): OK for 2xx,
// Unavailable for 5xx, 408 and 429, FailedPrecondition otherwise, naming `url`, the code
// and the answer's `head`.
Status BatchAnswerStatus(const std::string& url, long http_code, std::string_view head);

class HttpsSink final : public Sink {
 public:
  explicit HttpsSink(HttpsOptions options);
  ~HttpsSink() override;

  Status Connect() override;
  Status Send(std::span<const JournalEntry> batch) override;
  Result<uint64_t> Acknowledged() override { return acked_; }
  void Disconnect() override;
  std::string Describe() const override { return "https " + options_.url; }

 private:
  HttpsOptions options_;
  void* curl_ = nullptr;  // CURL*, reused so the TLS connection is kept alive
  uint64_t acked_ = 0;
  std::string body_;
};

}  // namespace gpufed::audit
