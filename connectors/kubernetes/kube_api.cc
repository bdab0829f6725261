#include "connectors/kubernetes/kube_api.h"

#include "connectors/http/peer_text.h"

#include <ctime>
#include <fstream>
#include <sstream>

namespace gpufed::connectors::kubernetes {
namespace {

using nlohmann::json;

// How much of an API error's reason and message a Status keeps.
constexpr size_t kReasonBytes = 64;
constexpr size_t kMessageBytes = 200;

// The API's Status object: {"kind":"Status","reason":"AlreadyExists","message":...},
// or the start of a body that is not one (a proxy's page). Both are the peer's text:
// cut on a character boundary and made valid UTF-8 (http::PeerText).
std::pair<std::string, std::string> ReasonAndMessage(const std::string& body) {
  json j = json::parse(body, nullptr, false);
  if (j.is_object()) {
    auto text = [&](const char* key, size_t max) {
      auto it = j.find(key);
      return it != j.end() && it->is_string() ? http::PeerText(it->get<std::string>(), max) : std::string();
    };
    return {text("reason", kReasonBytes), text("message", kMessageBytes)};
  }
  return {"", http::PeerText(body, kMessageBytes)};
}

}  // namespace

Status StatusFromResponse(const http::Response& r, const std::string& what) {
  auto [reason, message] = ReasonAndMessage(r.body);
  std::string text = what + ": HTTP " + std::to_string(r.status) + (reason.empty() ? "" : " " + reason) +
                     (message.empty() ? "" : ": " + message);
  switch (r.status) {
    case 400: return InvalidArgument(text);
    case 401: return {StatusCode::kUnauthenticated, text};
    case 403: return {StatusCode::kPermissionDenied, text};
    case 404: return NotFound(text);
    case 409: return reason == "AlreadyExists" ? Status(StatusCode::kAlreadyExists, text)
                                                : Status(StatusCode::kAborted, text);
    case 410: return {StatusCode::kAborted, text};
    case 422: return InvalidArgument(text);
    case 429: return Unavailable(text + (r.retry_after ? " (retry after " + r.retry_after->ToString() + ")" : ""));
    case 504: return {StatusCode::kDeadlineExceeded, text};
    default: break;
  }
  if (r.status >= 500) return Unavailable(text);
  return FailedPrecondition(text);
}

std::optional<int64_t> ParseRfc3339(const std::string& text) {
  std::tm tm{};
  const char* rest = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (rest == nullptr) return std::nullopt;
  if (*rest == '.') {
    ++rest;
    while (*rest >= '0' && *rest <= '9') ++rest;
  }
  int64_t offset = 0;
  if (*rest == 'Z' || *rest == 'z') {
    ++rest;
  } else if (*rest == '+' || *rest == '-') {
    // Exactly "+HH:MM". (sscanf's "%2d:%2d" also took "+1:2", and skipping 6 bytes then
    // read past the end of the text: fuzz_kube_response.)
    auto digit = [](char c) { return c >= '0' && c <= '9'; };
    if (!digit(rest[1]) || !digit(rest[2]) || rest[3] != ':' || !digit(rest[4]) || !digit(rest[5])) return std::nullopt;
    const int hh = (rest[1] - '0') * 10 + (rest[2] - '0'), mm = (rest[4] - '0') * 10 + (rest[5] - '0');
    offset = (*rest == '+' ? 1 : -1) * (hh * 3600 + mm * 60);
    rest += 6;
  } else {
    return std::nullopt;
  }
  if (*rest != '\0') return std::nullopt;
  return static_cast<int64_t>(timegm(&tm)) - offset;
}

Result<ListPage> ParseListPage(const std::string& body, const std::string& what) {
  json page;
  try {
    page = json::parse(body);
  } catch (const json::exception& e) {
    return Unavailable(what + ": malformed JSON: " + e.what());
  }
  if (!page.is_object()) return Unavailable(what + ": the answer is not a JSON object");
  ListPage out;
  if (auto items = page.find("items"); items != page.end() && items->is_array()) {
    out.items.reserve(items->size());
    for (json& item : *items) out.items.push_back(std::move(item));
  }
  auto meta = page.find("metadata");
  if (meta == page.end() || meta->is_null()) return out;
  if (!meta->is_object()) return Unavailable(what + ": metadata is not an object");
  // Read with find(): json::value() throws on a member of the wrong type.
  for (auto [key, field] : {std::pair{"resourceVersion", &out.resource_version}, {"continue", &out.continue_token}}) {
    auto it = meta->find(key);
    if (it == meta->end() || it->is_null()) continue;
    if (!it->is_string()) return Unavailable(what + ": metadata." + key + " is not a string");
    *field = it->get<std::string>();
  }
  return out;
}

KubeApi::KubeApi(std::unique_ptr<http::Client> client, std::string token_file)
    : client_(std::move(client)), token_file_(std::move(token_file)) {}

Result<http::Response> KubeApi::Send(http::Request request, const CallContext& ctx) {
  if (!token_file_.empty()) {
    std::ifstream in(token_file_);
    if (!in) return FailedPrecondition("cannot read token file " + token_file_);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string token = ss.str();
    while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) token.pop_back();
    client_->SetBearerToken(std::move(token));
  }
  return client_->Do(request, ctx);
}

Result<ListResult> KubeApi::List(const std::string& path, const ListOptions& options, const CallContext& ctx) {
  ListResult out;
  std::string cont;
  bool not_older_than = last_list_rv_.count(path) > 0;
  const http::CallBudget budget(ctx);  // all pages (and re-lists) within ctx.timeout
  for (int guard = 0; guard < 100000; ++guard) {
    http::Request req;
    req.path = path;
    req.query.push_back({"limit", std::to_string(options.limit)});
    if (!options.label_selector.empty()) req.query.push_back({"labelSelector", options.label_selector});
    if (!options.field_selector.empty()) req.query.push_back({"fieldSelector", options.field_selector});
    if (!cont.empty()) {
      req.query.push_back({"continue", cont});
    } else if (not_older_than) {
      req.query.push_back({"resourceVersion", last_list_rv_[path]});
      req.query.push_back({"resourceVersionMatch", "NotOlderThan"});
    }
    Result<CallContext> page_ctx = budget.Next("list " + path + " (page " + std::to_string(out.pages + 1) + ")");
    if (!page_ctx.ok()) return page_ctx.status();
    Result<http::Response> resp = Send(req, *page_ctx);
    if (!resp.ok()) return resp.status();
    if (resp->status == 410) {
      // The continue token or resourceVersion expired (etcd compaction): the only safe
      // answer is a fresh, complete list.
      if (out.relists >= 2) return StatusFromResponse(*resp, "list " + path);
      ++out.relists;
      out.items.clear();
      out.pages = 0;
      cont.clear();
      not_older_than = false;
      continue;
    }
    if (resp->status != 200) return StatusFromResponse(*resp, "list " + path);
    Result<ListPage> page = ParseListPage(resp->body, "list " + path);
    if (!page.ok()) return page.status();
    ++out.pages;
    if (std::optional<int64_t> t = http::ParseHttpDate(resp->Header("date"))) out.server_time = *t;
    for (json& item : page->items) out.items.push_back(std::move(item));
    out.resource_version = std::move(page->resource_version);
    cont = std::move(page->continue_token);
    if (cont.empty()) {
      if (!out.resource_version.empty()) last_list_rv_[path] = out.resource_version;
      return out;
    }
  }
  return Internal("list " + path + ": too many pages");
}

Result<json> KubeApi::Create(const std::string& path, const json& object, const CallContext& ctx) {
  http::Request req;
  req.method = "POST";
  req.path = path;
  req.query.push_back({"fieldValidation", "Strict"});
  req.body = object.dump();
  Result<http::Response> resp = Send(req, ctx);
  if (!resp.ok()) return resp.status();
  if (resp->status != 200 && resp->status != 201 && resp->status != 202) {
    return StatusFromResponse(*resp, "create " + path);
  }
  try {
    return json::parse(resp->body);
  } catch (const json::exception& e) {
    return Unavailable("create " + path + ": malformed JSON: " + e.what());
  }
}

Result<json> KubeApi::Get(const std::string& path, const CallContext& ctx) {
  http::Request req;
  req.path = path;
  Result<http::Response> resp = Send(req, ctx);
  if (!resp.ok()) return resp.status();
  if (resp->status != 200) return StatusFromResponse(*resp, "get " + path);
  try {
    return json::parse(resp->body);
  } catch (const json::exception& e) {
    return Unavailable("get " + path + ": malformed JSON: " + e.what());
  }
}

Status KubeApi::Delete(const std::string& path, const std::string& propagation_policy, const CallContext& ctx) {
  http::Request req;
  req.method = "DELETE";
  req.path = path;
  req.body = json{{"apiVersion", "v1"}, {"kind", "DeleteOptions"}, {"propagationPolicy", propagation_policy}}.dump();
  Result<http::Response> resp = Send(req, ctx);
  if (!resp.ok()) return resp.status();
  if (resp->status == 200 || resp->status == 202) return Status::Ok();
  return StatusFromResponse(*resp, "delete " + path);
}

}  // namespace gpufed::connectors::kubernetes
