#include "controller/server/audit_log_routes.h"

#include "controller/server/http_json.h"

namespace gpufed::server {

void AddAuditLogRoutes(httplib::Server& http, const audit::LogView* log, const Authorize& auth) {
  // Tiles of a tree never change once full; the checkpoint and partial tiles do.
  auto send = [](httplib::Response& res, const std::string& body, const char* type, bool immutable) {
    res.set_header("Cache-Control", immutable ? "public, max-age=31536000, immutable" : "no-store");
    res.set_content(body, type);
  };
  http.Get("/v1/audit/log/checkpoint", [log, auth, send](const httplib::Request& req, httplib::Response& res) {
    if (!auth(req, res)) return;
    if (log == nullptr) return SendError(res, Unavailable("this controller serves no audit log"));
    Result<std::string> note = log->Checkpoint();
    if (!note.ok()) return SendError(res, note.status());
    send(res, *note, "text/plain; charset=utf-8", false);
  });
  http.Get(R"(/v1/audit/log/tile/(.+))", [log, auth, send](const httplib::Request& req, httplib::Response& res) {
    const std::optional<Caller> caller = auth(req, res);
    if (!caller) return;
    if (log == nullptr) return SendError(res, Unavailable("this controller serves no audit log"));
    const std::string path = req.matches[1];
    if (audit::LogView::IsEntryBundle(path) && caller->role != Caller::Role::kAdmin) {
      return SendError(res, Status(StatusCode::kPermissionDenied,
                                   "entry bundles hold every tenant's records: an admin token reads them"));
    }
    Result<std::string> tile = log->Tile(path);
    if (!tile.ok()) return SendError(res, tile.status());
    send(res, *tile, "application/octet-stream", path.find(".p/") == std::string::npos);
  });
}

}  // namespace gpufed::server
