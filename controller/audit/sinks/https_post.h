#pragma once
// One HTTPS endpoint that gpufed POSTs to (an https AuditSink, a witness), with libcurl:
// server verification always on, mutual TLS when a client certificate is given, TLS 1.2 or
// later, no redirects, one reused handle so the connection is kept alive. Bounded whatever
// the peer does: each POST ends within `timeout_micros` (a transfer stalled for
// `stall_micros` sooner), and an answer or its headers over their caps is cut off while
// it arrives.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "controller/common/status.h"

namespace gpufed::audit {

struct HttpsPostOptions {
  std::string url;  // https://host:port/path
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  int64_t timeout_micros = 10'000'000;
  int64_t connect_timeout_micros = 5'000'000;
  int64_t stall_micros = 5'000'000;  // under 1 byte/s this long: abandoned
  size_t max_answer_bytes = size_t{64} << 10;
  size_t max_header_bytes = size_t{64} << 10;
};

struct HttpsAnswer {
  long code = 0;
  std::string body;          // all of it (at most max_answer_bytes)
  std::string content_type;  // as the peer sent it; empty when it sent none
};

class HttpsPoster {
 public:
  explicit HttpsPoster(HttpsPostOptions options) : options_(std::move(options)) {}
  HttpsPoster(const HttpsPoster&) = delete;
  HttpsPoster& operator=(const HttpsPoster&) = delete;
  ~HttpsPoster() { Disconnect(); }

  // FailedPrecondition for a URL that is not https://.
  Status Connect();
  void Disconnect();
  bool connected() const { return curl_ != nullptr; }
  // Any HTTP answer is a value; Unavailable (naming the URL and, for TLS, why the peer
  // was refused) when none arrived or it was over a cap.
  Result<HttpsAnswer> Post(const std::string& body, const std::vector<std::string>& headers);
  const HttpsPostOptions& options() const { return options_; }

 private:
  HttpsPostOptions options_;
  void* curl_ = nullptr;  // CURL*
};

}  // namespace gpufed::audit
