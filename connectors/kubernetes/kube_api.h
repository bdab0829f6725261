#pragma once
// The few Kubernetes API verbs the connector uses, over connectors/http, with API
// errors mapped to Status codes:
//   400 BadRequest (e.g. strict decoding: unknown field) -> InvalidArgument
//   401 -> Unauthenticated; 403 -> PermissionDenied; 404 -> NotFound
//   409 AlreadyExists -> AlreadyExists; 409 Conflict -> Aborted (redo the pass)
//   410 Gone (expired resourceVersion or continue token) -> Aborted; List re-lists itself
//   422 Invalid -> InvalidArgument carrying the API's message (terminal)
//   429, 5xx -> Unavailable (the client honours Retry-After); timeouts -> DeadlineExceeded
// Messages carry the API's Status message (at most 200 bytes, cut on a UTF-8 character
// boundary, invalid bytes replaced), never request headers or tokens. Replies are bounded
// by the client's reply cap (http::ClientOptions::max_reply_bytes, per page).
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "connectors/http/http_client.h"

namespace gpufed::connectors::kubernetes {

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  int limit = 500;                  // page size; the server may return fewer
};

struct ListResult {
  std::vector<nlohmann::json> items;
  std::string resource_version;     // of the (last) consistent list
  int64_t server_time = 0;          // Unix seconds from the last response's Date; 0 if absent
  int pages = 0;
  int relists = 0;                  // restarts after 410 Gone
};

class KubeApi {
 public:
  // `token_file`, when set, is re-read before every call (projected service-account
  // tokens rotate hourly).
  KubeApi(std::unique_ptr<http::Client> client, std::string token_file);

  // Lists a collection, page by page (limit/continue). The first page asks for state
  // not older than the last list of the same path (resourceVersionMatch=NotOlderThan),
  // so observations never go back in time across API server replicas. A 410 Gone (an
  // expired continue token or resourceVersion) restarts the list from scratch, up to
  // twice; the items of a restarted list replace what was read before. All pages share
  // ctx.timeout: a list ends within it however many pages the server hands out.
  Result<ListResult> List(const std::string& path, const ListOptions& options, const CallContext& ctx);
  // POST with fieldValidation=Strict, so a misspelt field is an error, not dropped.
  Result<nlohmann::json> Create(const std::string& path, const nlohmann::json& object, const CallContext& ctx);
  Result<nlohmann::json> Get(const std::string& path, const CallContext& ctx);
  // DELETE with DeleteOptions{propagationPolicy}.
  Status Delete(const std::string& path, const std::string& propagation_policy, const CallContext& ctx);

  http::Client* client() { return client_.get(); }

 private:
  Result<http::Response> Send(http::Request request, const CallContext& ctx);

  std::unique_ptr<http::Client> client_;
  std::string token_file_;
  std::map<std::string, std::string> last_list_rv_;  // by path
};

// Maps a non-2xx API answer to a Status (see the file comment). `what` names the request.
Status StatusFromResponse(const http::Response& response, const std::string& what);

// One page of a list answer (HTTP 200): its items, the list's resourceVersion and the
// continue token ("" on the last page). Unavailable, naming `what`, for a body that is
// not a JSON object or whose metadata has the wrong shape (a misbehaving server or
// proxy); never throws.
struct ListPage {
  std::vector<nlohmann::json> items;
  std::string resource_version;
  std::string continue_token;
};
Result<ListPage> ParseListPage(const std::string& body, const std::string& what);

// RFC 3339 ("2025-01-01T10:00:00Z", fractional seconds and offsets allowed) to Unix
// seconds; nullopt when malformed.
std::optional<int64_t> ParseRfc3339(const std::string& text);

}  // namespace gpufed::connectors::kubernetes
