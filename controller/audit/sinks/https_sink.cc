#include "controller/audit/sinks/https_sink.h"

#include <curl/curl.h>


#include "controller/audit/sinks/tls_util.h"

namespace gpufed::audit {
namespace {

// curl's write callback: keeps the first bytes of the answer and drops the rest.
size_t KeepHead(char* data, size_t size, size_t n, void* out) {
  KeepAnswerHead(std::string_view(data, size * n), static_cast<std::string*>(out));
  return size * n;
}

}  // namespace

void KeepAnswerHead(std::string_view piece, std::string* head) {
  if (head->size() < kAnswerHeadBytes) head->append(piece.substr(0, kAnswerHeadBytes - head->size()));
}

Status BatchAnswerStatus(const std::string& url, long http_code, std::string_view head) {
  if (http_code >= 200 && http_code < 300) return Status::Ok();
  std::string message = "POST " + url + ": HTTP " + std::to_string(http_code) + " " + std::string(head);
  if (http_code >= 500 || http_code == 408 || http_code == 429) return Unavailable(message);
  return FailedPrecondition(message);
}

HttpsSink::HttpsSink(HttpsOptions options) : options_(std::move(options)) {}

HttpsSink::~HttpsSink() { Disconnect(); }

Status HttpsSink::Connect() {
  Disconnect();
  if (options_.url.rfind("https://", 0) != 0) return FailedPrecondition("https sink needs an https:// URL");
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return Internal("curl_easy_init failed");
  curl_easy_setopt(curl, CURLOPT_URL, options_.url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
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
  std::string response;
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body_.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body_.size()));
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response);
  CURLcode rc;
  {
    ScopedSigpipeBlock no_sigpipe;
    rc = curl_easy_perform(curl);
  }
  curl_slist_free_all(headers);
  if (rc != CURLE_OK) return Unavailable("POST " + options_.url + ": " + curl_easy_strerror(rc));
  long code = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
  Status answer = BatchAnswerStatus(options_.url, code, response);
  if (answer.ok()) acked_ = batch.back().seq;
  return answer;
}

}  // namespace gpufed::audit
