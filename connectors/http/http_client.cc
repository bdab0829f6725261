#include "connectors/http/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "connectors/http/peer_text.h"

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

// A reply body as it arrives, in pieces of at most kPieceBytes, so that growing it never
// holds two copies of a large reply (a std::string doubling from 32 to 64 MiB briefly
// holds 96), and so that the cap is enforced before a byte past it is kept.
constexpr size_t kPieceBytes = size_t{1} << 20;

struct ReplyBody {
  size_t cap = 0;
  size_t size = 0;
  bool over_cap = false;
  std::vector<std::string> pieces;

  // Joins the pieces, freeing each as it is copied: at most one piece held twice.
  std::string Take() {
    if (pieces.size() == 1) return std::move(pieces.front());
    std::string out;
    out.reserve(size);
    for (std::string& p : pieces) {
      out += p;
      std::string().swap(p);
    }
    return out;
  }
};

// libcurl's write callback: a short count (0) aborts the transfer (CURLE_WRITE_ERROR).
size_t AppendBody(char* data, size_t size, size_t n, void* user) {
  auto* body = static_cast<ReplyBody*>(user);
  const size_t len = size * n;
  if (len > body->cap - body->size) {
    body->over_cap = true;
    return 0;
  }
  if (body->pieces.empty() || body->pieces.back().size() + len > kPieceBytes) body->pieces.emplace_back();
  body->pieces.back().append(data, len);
  body->size += len;
  return len;
}

struct ReplyHeaders {
  size_t cap = 0;
  size_t size = 0;  // of the current response's header lines
  bool over_cap = false;
  std::map<std::string, std::string> values;
};

size_t AppendHeader(char* data, size_t size, size_t n, void* user) {
  auto* headers = static_cast<ReplyHeaders*>(user);
  const size_t len = size * n;
  std::string_view line(data, len);
  if (line.rfind("HTTP/", 0) == 0) {
    headers->values.clear();  // a new response (after 100 Continue)
    headers->size = 0;
  }
  headers->size += len;
  if (headers->size > headers->cap) {
    headers->over_cap = true;
    return 0;
  }
  size_t colon = line.find(':');
  if (line.rfind("HTTP/", 0) == 0 || colon == std::string_view::npos) return len;
  std::string name(line.substr(0, colon));
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  std::string value(line.substr(colon + 1));
  while (!value.empty() && std::isspace(static_cast<unsigned char>(value.front()))) value.erase(value.begin());
  while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) value.pop_back();
  headers->values[name] = value;
  return len;
}

// "scheme://host[:port]" of a Location value, for the error naming a redirect: the path
// and query are left out (they may carry anything), and the text is the peer's, so it
// is made safe to keep.
std::string OriginOf(const std::string& location) {
  size_t scheme = location.find("://");
  size_t end = scheme == std::string::npos ? std::string::npos : location.find_first_of("/?#", scheme + 3);
  return PeerText(scheme == std::string::npos ? location : location.substr(0, end), 120);
}

// A failed transfer as a Status, and which kind of refusal it counts as.
struct Failure {
  Status status;
  int64_t RefusalCounts::* kind;
};

Failure FromCurl(CURLcode code, const char* detail, const std::string& url) {
  std::string msg = url + ": " + PeerText(detail[0] ? detail : curl_easy_strerror(code), 300);
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT: return {{StatusCode::kDeadlineExceeded, msg}, &RefusalCounts::timeout};
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_ENGINE_NOTFOUND: return {FailedPrecondition("TLS: " + msg), &RefusalCounts::tls};
    default: return {Unavailable(msg), &RefusalCounts::unreachable};
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
    : options_(std::move(options)),
      sleep_(std::move(sleep)),
      bearer_token_(options_.bearer_token),
      bucket_(options_.qps, options_.burst),
      log_(options_.base_url, options_.log) {
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
  {
    MutexLock lock(client->mu_);  // no other thread has the client yet; Configure's rule is kept all the same
    GPUFED_RETURN_IF_ERROR(client->Configure());
  }
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
  curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 0L);
  // A declared Content-Length over the cap fails before the body is read
  // (CURLE_FILESIZE_EXCEEDED); the write callback holds the cap for chunked replies.
  curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(options_.max_reply_bytes));
  // Less than 1 byte/s for stall_timeout: a peer that stopped mid-reply.
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME,
                   static_cast<long>(std::max<int64_t>(1, options_.stall_timeout.millis() / 1000)));
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
  MutexLock lock(mu_);
  bearer_token_ = std::move(token);
}

void Client::BackOffUntil(Duration until) {
  MutexLock lock(mu_);
  if (!has_not_before_ || until > not_before_) not_before_ = until;
  has_not_before_ = true;
}

int64_t Client::requests_sent() const {
  MutexLock lock(mu_);
  return requests_sent_;
}

Result<Response> Client::Do(const Request& request, const CallContext& ctx) {
  MutexLock lock(mu_);
  Duration start = ctx.clock ? ctx.clock->Now() : Duration();
  if (has_not_before_ && ctx.clock && start < not_before_) {
    // Nothing is sent, so nothing new is learnt about the peer: neither logged nor counted.
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
  ReplyBody body{.cap = options_.max_reply_bytes};
  ReplyHeaders reply_headers{.cap = options_.max_header_bytes};
  char error[CURL_ERROR_SIZE] = {0};
  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Accept: application/json");
  if (!request.body.empty()) headers = curl_slist_append(headers, ("Content-Type: " + request.content_type).c_str());
  if (!bearer_token_.empty()) {
    headers = curl_slist_append(headers, ("Authorization: Bearer " + bearer_token_).c_str());
  }
  for (const auto& [name, value] : request.headers) {
    std::string line = name;
    line += ": ";
    line += value;
    headers = curl_slist_append(headers, line.c_str());
  }
  // Without this, libcurl would send "Expect: 100-continue" and wait on larger bodies.
  headers = curl_slist_append(headers, "Expect:");

  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(left_ms));
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, AppendBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, AppendHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &reply_headers);
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
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, nullptr);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, nullptr);
  curl_slist_free_all(headers);
  const std::string where = options_.base_url + request.path;
  if (body.over_cap || code == CURLE_FILESIZE_EXCEEDED) {
    return Refused(Unavailable("reply from " + where + " larger than " + std::to_string(options_.max_reply_bytes) +
                               " bytes (the connector's reply cap)"),
                   &RefusalCounts::over_cap);
  }
  if (reply_headers.over_cap) {
    return Refused(Unavailable("reply headers from " + where + " larger than " +
                               std::to_string(options_.max_header_bytes) + " bytes"),
                   &RefusalCounts::over_cap);
  }
  if (code != CURLE_OK) {
    Failure failure = FromCurl(code, error, options_.base_url);
    return Refused(failure.status, failure.kind);
  }
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  response.status = static_cast<int>(status);
  response.headers = std::move(reply_headers.values);
  response.body = body.Take();
  if (status >= 300 && status < 400 && status != 304) {
    std::string location = response.Header("location");
    return Refused(FailedPrecondition(where + " answered HTTP " + std::to_string(status) + " redirecting to " +
                                      (location.empty() ? "nowhere" : OriginOf(location)) +
                                      "; redirects are not followed (credentials go to the configured endpoint "
                                      "only): set the endpoint the server redirects to"),
                   &RefusalCounts::redirect);
  }
  std::string retry_after = response.Header("retry-after");
  if (!retry_after.empty()) response.retry_after = ParseRetryAfter(retry_after, response.Header("date"));
  if ((status == 429 || status == 503) && response.retry_after && ctx.clock) {
    Duration until = ctx.clock->Now() + *response.retry_after;
    if (!has_not_before_ || until > not_before_) not_before_ = until;
    has_not_before_ = true;
  }
  if (status >= 500 || status == 429) {
    // Still an answer for the caller to read; counted and logged as a refusal.
    ++refusals_.bad_status;
    log_.Failed(where + ": HTTP " + std::to_string(status));
  } else if (status >= 200 && status < 300) {
    log_.Succeeded();
  }
  return response;
}

Status Client::Refused(Status status, int64_t RefusalCounts::* kind) {
  ++(refusals_.*kind);
  log_.Failed(status.message());
  return status;
}

RefusalCounts Client::refusals() const {
  MutexLock lock(mu_);
  return refusals_;
}

CallBudget::CallBudget(const CallContext& ctx)
    : ctx_(ctx), deadline_(std::chrono::steady_clock::now() + std::chrono::milliseconds(ctx.timeout.millis())) {}

Result<CallContext> CallBudget::Next(const std::string& what, Duration cap) const {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - std::chrono::steady_clock::now()).count();
  if (left <= 0) {
    return Status(StatusCode::kDeadlineExceeded,
                  what + ": timed out (the call's " + ctx_.timeout.ToString() + " were spent by its earlier requests)");
  }
  CallContext next = ctx_;
  next.timeout = Duration::FromMillis(left);
  if (cap.millis() > 0 && cap < next.timeout) next.timeout = cap;
  return next;
}

}  // namespace gpufed::connectors::http
