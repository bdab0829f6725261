#include "controller/audit/sinks/https_sink.h"

#include <curl/curl.h>

#include <algorithm>

#include "controller/audit/sinks/tls_util.h"

namespace gpufed::audit {
namespace {

// What curl hands over of an answer: its first bytes are kept for messages, the rest
// counted against the cap.
struct Answer {
  size_t cap = 0;
  size_t size = 0;
  bool over_cap = false;
  std::string head;
};

// curl's write callback: a short count (0) aborts the transfer once the answer passes its cap.
size_t KeepHead(char* data, size_t size, size_t n, void* out) {
  auto* answer = static_cast<Answer*>(out);
  const size_t len = size * n;
  if (len > answer->cap - answer->size) {
    answer->over_cap = true;
    return 0;
  }
  answer->size += len;
  KeepAnswerHead(std::string_view(data, len), &answer->head);
  return len;
}

struct Headers {
  size_t cap = 0;
  size_t size = 0;
  bool over_cap = false;
};

size_t CountHeader(char* /*data*/, size_t size, size_t n, void* out) {
  auto* headers = static_cast<Headers*>(out);
  headers->size += size * n;
  if (headers->size > headers->cap) {
    headers->over_cap = true;
    return 0;
  }
  return size * n;
}

}  // namespace

void KeepAnswerHead(std::string_view piece, std::string* head) {
  if (head->size() < kAnswerHeadBytes) head->append(piece.substr(0, kAnswerHeadBytes - head->size()));
}

Status BatchAnswerStatus(const std::string& url, long http_code, std::string_view head) {
  if (http_code >= 200 && http_code < 300) return Status::Ok();
  std::string message = "POST " + url + ": HTTP " + std::to_string(http_code) + " " + ReceiverText(head, kAnswerHeadBytes);
  if (http_code >= 500 || http_code == 408 || http_code == 429) return Unavailable(message);
  if (http_code >= 300 && http_code < 400) return FailedPrecondition(message + " (redirects are not followed)");
  return FailedPrecondition(message);
}

HttpsSink::HttpsSink(HttpsOptions options) : options_(std::move(options)), refusals_(options_.log) {}

HttpsSink::~HttpsSink() { Disconnect(); }

Status HttpsSink::Connect() {
  Disconnect();
  if (options_.url.rfind("https://", 0) != 0) {
    return refusals_.Failed(Describe(), FailedPrecondition("https sink needs an https:// URL"));
  }
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return Internal("curl_easy_init failed");
  curl_easy_setopt(curl, CURLOPT_URL, options_.url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "https");
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(options_.max_answer_bytes));
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, static_cast<long>(std::max<int64_t>(1, options_.stall_micros / 1'000'000)));
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
  curl_easy_setopt(curl, CURLOPT_SSLVERSION, static_cast<long>(CURL_SSLVERSION_TLSv1_2));
  if (!options_.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, options_.ca_file.c_str());
  if (!options_.cert_file.empty()) {
    curl_easy_setopt(curl, CURLOPT_SSLCERT, options_.cert_file.c_str());
    curl_easy_setopt(curl, CURLOPT_SSLKEY, options_.key_file.c_str());
  }
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.timeout_micros / 1000));
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout_micros / 1000));
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, KeepHead);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, CountHeader);
  curl_ = curl;
  acked_ = 0;
  return Status::Ok();
}

void HttpsSink::Disconnect() {
  if (curl_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(curl_));
  curl_ = nullptr;
}

Status HttpsSink::Send(std::span<const JournalEntry> batch) {
  if (curl_ == nullptr) return FailedPrecondition("not connected");
  if (batch.empty()) return Status::Ok();
  CURL* curl = static_cast<CURL*>(curl_);
  body_.clear();
  for (const JournalEntry& e : batch) {
    body_ += e.line;
    body_ += '\n';
  }
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/x-ndjson");
  std::string first = "X-Gpufed-First-Seq: " + std::to_string(batch.front().seq);
  std::string last = "X-Gpufed-Last-Seq: " + std::to_string(batch.back().seq);
  headers = curl_slist_append(headers, first.c_str());
  headers = curl_slist_append(headers, last.c_str());
  Answer answer{.cap = options_.max_answer_bytes};
  Headers answer_headers{.cap = options_.max_header_bytes};
  char error[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body_.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body_.size()));
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &answer_headers);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  CURLcode rc;
  {
    ScopedSigpipeBlock no_sigpipe;
    rc = curl_easy_perform(curl);
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, nullptr);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, nullptr);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, nullptr);
  curl_slist_free_all(headers);
  if (answer.over_cap || rc == CURLE_FILESIZE_EXCEEDED) {
    return refusals_.Failed(Describe(), Unavailable("reply from " + options_.url + " larger than " +
                                                     std::to_string(options_.max_answer_bytes) + " bytes"));
  }
  if (answer_headers.over_cap) {
    return refusals_.Failed(Describe(), Unavailable("reply headers from " + options_.url + " larger than " +
                                                     std::to_string(options_.max_header_bytes) + " bytes"));
  }
  if (rc != CURLE_OK) {
    // The error buffer says why (the certificate problem, the name that did not match);
    // curl_easy_strerror alone only says "SSL peer certificate ... was not OK".
    std::string detail = ReceiverText(error[0] != 0 ? error : curl_easy_strerror(rc), 300);
    const bool tls = rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE ||
                     rc == CURLE_SSL_CERTPROBLEM || rc == CURLE_SSL_CONNECT_ERROR;
    return refusals_.Failed(Describe(), Unavailable("POST " + options_.url + ": " + (tls ? "TLS: " : "") + detail));
  }
  long code = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
  Status status = BatchAnswerStatus(options_.url, code, answer.head);
  if (!status.ok()) return refusals_.Failed(Describe(), status);
  acked_ = batch.back().seq;
  refusals_.Delivered(Describe());
  return status;
}

}  // namespace gpufed::audit
