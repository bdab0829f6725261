#include "controller/server/ui_routes.h"

#include <httplib.h>

#include "controller/ui/assets.h"

namespace gpufed::server {
namespace {

constexpr std::string_view kPrefix = "/ui/";

// The asset a path names: "" for the index ("/ui", "/ui/").
std::optional<std::string_view> AssetNameOf(std::string_view path) {
  if (path == "/ui" || path == "/ui/") return std::string_view("index.html");
  if (!path.starts_with(kPrefix)) return std::nullopt;
  return path.substr(kPrefix.size());
}

void SetSecurityHeaders(httplib::Response& res) {
  // default-src 'self' with no 'unsafe-inline': the page runs only /ui/*.js and fetches
  // only this origin, so markup that slipped into the DOM could neither run nor send
  // the token anywhere. frame-ancestors: no other site can frame the dashboard.
  res.set_header("Content-Security-Policy",
                 "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
                 "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("X-Frame-Options", "DENY");
  res.set_header("Referrer-Policy", "no-referrer");
}

void Serve(const ui::Asset& asset, const httplib::Request& req, httplib::Response& res) {
  SetSecurityHeaders(res);
  // The URLs stay the same across upgrades, so caching by age could run an old app.js
  // against a new API: revalidate every time; the ETag (a SHA-256 of the bytes) makes
  // that a 304 without a body until the binary's assets change.
  res.set_header("Cache-Control", "no-cache");
  res.set_header("ETag", std::string(asset.etag));
  const std::string match = req.get_header_value("If-None-Match");
  if (!match.empty() && match.find(asset.etag) != std::string::npos) {
    res.status = 304;
    return;
  }
  res.set_content(asset.bytes.data(), asset.bytes.size(), std::string(asset.content_type));
}

}  // namespace

bool IsUiAssetRequest(const std::string& method, const std::string& path) {
  if (method != "GET" && method != "HEAD") return false;
  if (path == "/") return true;
  const std::optional<std::string_view> name = AssetNameOf(path);
  return name.has_value() && ui::FindAsset(*name).has_value();
}

void ServeUiRequest(const httplib::Request& req, httplib::Response& res) {
  if (req.path == "/") {
    SetSecurityHeaders(res);
    res.set_redirect("/ui/", 302);
    return;
  }
  // Names are looked up exactly in the embedded table (never on disk), so "..", "%2e%2e"
  // or a nested path simply find nothing.
  const std::optional<std::string_view> name = AssetNameOf(req.path);
  const std::optional<ui::Asset> asset = name ? ui::FindAsset(*name) : std::nullopt;
  if (!asset) {
    res.status = 404;  // the server's error handler writes the JSON error body
    return;
  }
  Serve(*asset, req, res);
}

void RegisterUiRoutes(httplib::Server& http) {
  http.Get("/", ServeUiRequest);
  // One handler for /ui, /ui/ and /ui/<asset>.
  http.Get(R"(/ui(/[A-Za-z0-9._-]*)?)", ServeUiRequest);
}

}  // namespace gpufed::server
