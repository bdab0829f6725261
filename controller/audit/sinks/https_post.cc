#include "controller/audit/sinks/https_post.h"

#include <curl/curl.h>

#include <algorithm>

#include "controller/audit/sinks/tls_util.h"

namespace gpufed::audit {
namespace {

// What curl hands over of an answer, up to its cap.
struct Answer {
  size_t cap = 0;
  bool over_cap = false;
  std::string body;
};

// curl's write callback: a short count (0) aborts the transfer once the answer passes its cap.
size_t KeepBody(char* data, size_t size, size_t n, void* out) {
  auto* answer = static_cast<Answer*>(out);
  const size_t len = size * n;
  if (len > answer->cap - answer->body.size()) {
    answer->over_cap = true;
    return 0;
  }
  answer->body.append(data, len);
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

Status HttpsPoster::Connect() {
  Disconnect();
  if (options_.url.rfind("https://", 0) != 0) return FailedPrecondition("needs an https:// URL: " + options_.url);
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return Internal("curl_easy_init failed");
  curl_easy_setopt(curl, CURLOPT_URL, options_.url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "https");
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(options_.max_answer_bytes));
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME,
                   static_cast<long>(std::max<int64_t>(1, options_.stall_micros / 1'000'000)));
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
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, KeepBody);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, CountHeader);
  curl_ = curl;
  return Status::Ok();
}

void HttpsPoster::Disconnect() {
  if (curl_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(curl_));
  curl_ = nullptr;
}

Result<HttpsAnswer> HttpsPoster::Post(const std::string& body, const std::vector<std::string>& headers) {
  if (curl_ == nullptr) return FailedPrecondition("not connected");
  CURL* curl = static_cast<CURL*>(curl_);
  curl_slist* list = nullptr;
  for (const std::string& h : headers) list = curl_slist_append(list, h.c_str());
  Answer answer{.cap = options_.max_answer_bytes};
  Headers answer_headers{.cap = options_.max_header_bytes};
  char error[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &answer_headers);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  CURLcode rc;
  {
    ScopedSigpipeBlock no_sigpipe;
    rc = curl_easy_perform(curl);
  }
  HttpsAnswer out;
  if (rc == CURLE_OK) {
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &out.code);
    char* type = nullptr;
    if (curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &type) == CURLE_OK && type != nullptr) out.content_type = type;
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, nullptr);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, nullptr);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, nullptr);
  curl_slist_free_all(list);
  if (answer.over_cap || rc == CURLE_FILESIZE_EXCEEDED) {
    return Unavailable("reply from " + options_.url + " larger than " + std::to_string(options_.max_answer_bytes) +
                       " bytes");
  }
  if (answer_headers.over_cap) {
    return Unavailable("reply headers from " + options_.url + " larger than " +
                       std::to_string(options_.max_header_bytes) + " bytes");
  }
  if (rc != CURLE_OK) {
    // The error buffer says why (the certificate problem, the name that did not match);
    // curl_easy_strerror alone only says "SSL peer certificate ... was not OK".
    std::string detail = ReceiverText(error[0] != 0 ? error : curl_easy_strerror(rc), 300);
    const bool tls = rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE ||
                     rc == CURLE_SSL_CERTPROBLEM || rc == CURLE_SSL_CONNECT_ERROR;
    return Unavailable("POST " + options_.url + ": " + (tls ? "TLS: " : "") + detail);
  }
  out.body = std::move(answer.body);
  return out;
}

}  // namespace gpufed::audit
