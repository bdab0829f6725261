#include "controller/audit/sinks/https_sink.h"

#include "controller/audit/sinks/tls_util.h"

namespace gpufed::audit {

void KeepAnswerHead(std::string_view piece, std::string* head) {
  if (head->size() < kAnswerHeadBytes) head->append(piece.substr(0, kAnswerHeadBytes - head->size()));
}

Status BatchAnswerStatus(const std::string& url, long http_code, std::string_view head) {
  if (http_code >= 200 && http_code < 300) return Status::Ok();
  std::string message =
      "POST " + url + ": HTTP " + std::to_string(http_code) + " " + ReceiverText(head, kAnswerHeadBytes);
  if (http_code >= 500 || http_code == 408 || http_code == 429) return Unavailable(message);
  if (http_code >= 300 && http_code < 400) return FailedPrecondition(message + " (redirects are not followed)");
  return FailedPrecondition(message);
}

HttpsSink::HttpsSink(HttpsOptions options)
    : options_(std::move(options)), poster_(static_cast<const HttpsPostOptions&>(options_)), refusals_(options_.log) {}

HttpsSink::~HttpsSink() { Disconnect(); }

Status HttpsSink::Connect() {
  if (options_.url.rfind("https://", 0) != 0) {
    return refusals_.Failed(Describe(), FailedPrecondition("https sink needs an https:// URL"));
  }
  acked_ = 0;
  return poster_.Connect();
}

void HttpsSink::Disconnect() { poster_.Disconnect(); }

Status HttpsSink::Send(std::span<const JournalEntry> batch) {
  if (!poster_.connected()) return FailedPrecondition("not connected");
  if (batch.empty()) return Status::Ok();
  body_.clear();
  for (const JournalEntry& e : batch) {
    body_ += e.line;
    body_ += '\n';
  }
  Result<HttpsAnswer> answer = poster_.Post(
      body_, {"Content-Type: application/x-ndjson", "X-Gpufed-First-Seq: " + std::to_string(batch.front().seq),
              "X-Gpufed-Last-Seq: " + std::to_string(batch.back().seq)});
  if (!answer.ok()) return refusals_.Failed(Describe(), answer.status());
  std::string head;
  KeepAnswerHead(answer->body, &head);
  Status status = BatchAnswerStatus(options_.url, answer->code, head);
  if (!status.ok()) return refusals_.Failed(Describe(), status);
  acked_ = batch.back().seq;
  refusals_.Delivered(Describe());
  return status;
}

}  // namespace gpufed::audit
