#pragma once
// The web dashboard's routes (controller/ui/): GET /ui and /ui/ serve index.html,
// /ui/<asset> the embedded file of that name, and / redirects to /ui/. The assets hold no
// data (every figure is fetched from /v1 with the user's token), so they are served
// without a token; ApiServer's pre-routing check lets exactly IsUiAssetRequest through.
#include <string>

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace gpufed::server {

// True for a GET or HEAD of "/", "/ui", "/ui/" or "/ui/<name of an embedded asset>";
// false for anything else, such as /ui/<unknown>, which then needs a token like any path.
bool IsUiAssetRequest(const std::string& method, const std::string& path);

// Adds the routes above to `http`. Every answer carries a strict Content-Security-Policy
// (scripts, styles and fetches from this origin only; no inline script), nosniff, and
// Cache-Control: no-cache with a content-hash ETag (a browser revalidates each load and
// gets 304 until the binary's assets change).
void RegisterUiRoutes(httplib::Server& http);

// Answers one request of those routes as they do (for a caller that routes requests
// itself, as a standby does: only with IsUiAssetRequest true).
void ServeUiRequest(const httplib::Request& req, httplib::Response& res);

}  // namespace gpufed::server
