#include "connectors/http/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

namespace gpufed::connectors::http {
namespace {

// curl_global_init is not thread-safe and must run once per process before any handle
// exists; a function-local once_flag is the narrowest place to keep that fact.
void GlobalInitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

Result<std::string> ReadPem(const PemSource& source, const char* what) {
  if (!source.pem.empty()) return source.pem;
  std::ifstream in(source.file, std::ios::binary);
  if (!in) return FailedPrecondition(std::string("cannot read ") + what + " file " + source.file);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

size_t AppendBody(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

size_t AppendHeader(char* data, size_t size, size_t n, void* user) {
  std::string line(data, size * n);
  auto* headers = static_cast<std::map<std::string, std::string>*>(user);
  if (line.rfind("HTTP/", 0) == 0) {
    headers->clear();  // a new response (after 100 Continue or a redirect)
    return size * n;
  }
  size_t colon = line.find(':');
  if (colon == std::string::npos) return size * n;
  std::string name = line.substr(0, colon);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  std::string value = line.substr(colon + 1);
  while (!value.empty() && std::isspace(static_cast<unsigned char>(value.front()))) value.erase(value.begin());
  while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) value.pop_back();
  (*headers)[name] = value;
  return size * n;
}

Status FromCurl(CURLcode code, const char* detail, const std::string& url) {
  std::string msg = url + ": " + (detail[0] ? detail : curl_easy_strerror(code));
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
      return {StatusCode::kDeadlineExceeded, msg};
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_ENGINE_NOTFOUND:
      return FailedPrecondition("TLS: " + msg);
    default:
      return Unavailable(msg);
  }
}

}  // namespace

std::string Response::Header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? "" : it->second;
}

std::string PercentEncode(const std::string& text) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

Client::Client(ClientOptions options, SleepFn sleep)
    : options_(std::move(options)), sleep_(std::move(sleep)), bucket_(options_.qps, options_.burst) {
  if (!sleep_) {
    sleep_ = [](Duration d) { std::this_thread::sleep_for(std::chrono::milliseconds(d.millis())); };
  }
}

Client::~Client() {
  if (curl_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

Result<std::unique_ptr<Client>> Client::Create(ClientOptions options, SleepFn sleep) {
  bool plain = options.allow_plain_http && options.base_url.rfind("http://", 0) == 0;
  if (options.base_url.rfind("https://", 0) != 0 && !plain) {
    return InvalidArgument("server URL must start with https:// (TLS is required): " + options.base_url);
  }
  while (!options.base_url.empty() && options.base_url.back() == '/') options.base_url.pop_back();
  if (options.client_cert.empty() != options.client_key.empty()) {
    return InvalidArgument("a client certificate needs its key, and a key its certificate");
  }
  // Files are read once here so a missing file is a configuration error at start-up,
  // and so libcurl gets blobs (no file names of secrets in its error messages).
  if (!options.ca.empty()) {
    Result<std::string> pem = ReadPem(options.ca, "certificate authority");
    if (!pem.ok()) return pem.status();
    options.ca = {*pem, ""};
  }
  if (!options.client_cert.empty()) {
    Result<std::string> cert = ReadPem(options.client_cert, "client certificate");
    if (!cert.ok()) return cert.status();
    Result<std::string> key = ReadPem(options.client_key, "client key");
    if (!key.ok()) return key.status();
    options.client_cert = {*cert, ""};
    options.client_key = {*key, ""};
  }
  GlobalInitOnce();
  std::unique_ptr<Client> client(new Client(std::move(options), std::move(sleep)));
  GPUFED_RETURN_IF_ERROR(client->Configure());
  return client;
}

Status Client::Configure() {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return Internal("curl_easy_init failed");
  curl_ = curl;
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, options_.allow_plain_http ? "http,https" : "https");
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
  curl_easy_setopt(curl, CURLOPT_SSLVERSION, static_cast<long>(CURL_SSLVERSION_TLSv1_2));
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);  // never forward a token elsewhere
  curl_easy_setopt(curl, CURLOPT_USERAGENT, options_.user_agent.c_str());
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout.millis()));
  if (!options_.ca.pem.empty()) {
    curl_blob blob{options_.ca.pem.data(), options_.ca.pem.size(), CURL_BLOB_COPY};
    if (curl_easy_setopt(curl, CURLOPT_CAINFO_BLOB, &blob) != CURLE_OK) {
      return FailedPrecondition("this libcurl cannot take an in-memory CA");
    }
  }
  if (!options_.client_cert.pem.empty()) {
    curl_blob cert{options_.client_cert.pem.data(), options_.client_cert.pem.size(), CURL_BLOB_COPY};
    curl_blob key{options_.client_key.pem.data(), options_.client_key.pem.size(), CURL_BLOB_COPY};
    curl_easy_setopt(curl, CURLOPT_SSLCERTTYPE, "PEM");
    curl_easy_setopt(curl, CURLOPT_SSLKEYTYPE, "PEM");
    if (curl_easy_setopt(curl, CURLOPT_SSLCERT_BLOB, &cert) != CURLE_OK ||
        curl_easy_setopt(curl, CURLOPT_SSLKEY_BLOB, &key) != CURLE_OK) {
      return FailedPrecondition("this libcurl cannot take an in-memory client certificate");
    }
  }
  return Status::Ok();
}

void Client::SetBearerToken(std::string token) {
  std::lock_guard<std::mutex> lock(mu_);
  options_.bearer_token = std::move(token);
}

void Client::BackOffUntil(Duration until) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!has_not_before_ || until > not_before_) not_before_ = until;
  has_not_before_ = true;
}

int64_t Client::requests_sent() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_sent_;
}

Result<Response> Client::Do(const Request& request, const CallContext& ctx) {
  std::lock_guard<std::mutex> lock(mu_);
  Duration start = ctx.clock ? ctx.clock->Now() : Duration();
  if (has_not_before_ && ctx.clock && start < not_before_) {
    return Unavailable(options_.base_url + ": server asked to retry after " +
                       Duration::FromMillis(not_before_.millis() - start.millis()).ToString());
  }
  if (ctx.clock) {
    std::optional<Duration> wait = bucket_.Reserve(start, ctx.timeout);
    if (!wait) return Unavailable(options_.base_url + ": client rate limit reached");
    if (wait->millis() > 0) sleep_(*wait);
  }
  Duration waited = ctx.clock ? Duration::FromMillis(ctx.clock->Now().millis() - start.millis()) : Duration();
  int64_t left_ms = std::max<int64_t>(1, ctx.timeout.millis() - waited.millis());

  std::string url = options_.base_url + request.path;
  for (size_t i = 0; i < request.query.size(); ++i) {
    url += (i == 0 ? "?" : "&") + PercentEncode(request.query[i].first) + "=" + PercentEncode(request.query[i].second);
  }
  CURL* curl = static_cast<CURL*>(curl_);
  Response response;
  char error[CURL_ERROR_SIZE] = {0};
  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Accept: application/json");
  if (!request.body.empty()) headers = curl_slist_append(headers, ("Content-Type: " + request.content_type).c_str());
  if (!options_.bearer_token.empty()) {
    headers = curl_slist_append(headers, ("Authorization: Bearer " + options_.bearer_token).c_str());
  }
  for (const auto& [name, value] : request.headers) headers = curl_slist_append(headers, (name + ": " + value).c_str());
  // Without this, libcurl would send "Expect: 100-continue" and wait on larger bodies.
  headers = curl_slist_append(headers, "Expect:");

  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(left_ms));
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, AppendBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response.body);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, AppendHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &response.headers);
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  if (request.method == "GET") {
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, nullptr);
  } else {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(request.body.size()));
  }
  ++requests_sent_;
  CURLcode code = curl_easy_perform(curl);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, nullptr);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, nullptr);
  curl_slist_free_all(headers);
  if (code != CURLE_OK) return FromCurl(code, error, options_.base_url);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  response.status = static_cast<int>(status);
  std::string retry_after = response.Header("retry-after");
  if (!retry_after.empty()) response.retry_after = ParseRetryAfter(retry_after, response.Header("date"));
  if ((status == 429 || status == 503) && response.retry_after && ctx.clock) {
    Duration until = ctx.clock->Now() + *response.retry_after;
    if (!has_not_before_ || until > not_before_) not_before_ = until;
    has_not_before_ = true;
  }
  return response;
}

}  // namespace gpufed::connectors::http
