// The embedded assets are the files of controller/ui/assets/, byte for byte, with the
// content types a strict CSP and nosniff need; and the dashboard's source keeps to the
// rules that make that CSP hold (no inline script or style, no HTML built from strings,
// nothing fetched from another origin).
#include "controller/ui/assets.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace gpufed::ui {
namespace {

const std::filesystem::path kAssetDir = std::filesystem::path(GPUFED_SOURCE_DIR) / "controller/ui/assets";

std::string Read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Assets, EmbedsEveryFileOfTheFolderByteForByte) {
  std::set<std::string> on_disk;
  for (const auto& entry : std::filesystem::directory_iterator(kAssetDir)) on_disk.insert(entry.path().filename().string());
  std::set<std::string> embedded;
  for (std::string_view name : AssetNames()) embedded.insert(std::string(name));
  EXPECT_EQ(embedded, on_disk);
  for (const std::string& name : on_disk) {
    std::optional<Asset> a = FindAsset(name);
    ASSERT_TRUE(a.has_value()) << name;
    EXPECT_EQ(a->bytes, Read(kAssetDir / name)) << name;
    EXPECT_TRUE(std::regex_match(std::string(a->etag), std::regex("\"[0-9a-f]{64}\""))) << a->etag;
  }
}

TEST(Assets, ServesTheDashboardsFilesWithExplicitTypes) {
  for (const char* name : {"index.html", "app.js", "charts.js", "style.css", "favicon.svg"}) {
    EXPECT_TRUE(FindAsset(name).has_value()) << name;
  }
  EXPECT_EQ(FindAsset("index.html")->content_type, "text/html; charset=utf-8");
  EXPECT_EQ(FindAsset("app.js")->content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(FindAsset("style.css")->content_type, "text/css; charset=utf-8");
  EXPECT_EQ(ContentTypeOf("favicon.svg"), "image/svg+xml");
  EXPECT_EQ(ContentTypeOf("blob"), "application/octet-stream");
  EXPECT_EQ(ContentTypeOf(".js"), "application/octet-stream");
}

TEST(Assets, FindsOnlyExactNames) {
  for (const char* name : {"", "..", "../CMakeLists.txt", "assets/app.js", "/app.js", "app.js?x=1", "APP.JS", "app.j"}) {
    EXPECT_FALSE(FindAsset(name).has_value()) << name;
  }
}

// The CSP (ui_routes.cc) forbids inline script and style; these patterns would break the
// page under it or, worse, tempt someone to loosen it. innerHTML and friends would turn a
// workload name into markup.
TEST(Assets, KeepToTheContentSecurityPolicy) {
  const std::regex inline_script(R"(<script(?![^>]*\bsrc=)[^>]*>)", std::regex::icase);
  const std::regex handler_attribute(R"(<[^>]*\son[a-z]+\s*=)", std::regex::icase);
  const std::regex style_attribute(R"(<[^>]*\sstyle\s*=)", std::regex::icase);
  const std::regex html_sinks(R"(innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\s*\(|new Function|setAttribute\(\s*'style')");
  const std::regex remote_url(R"(https?://(?!www\.w3\.org/2000/svg))");
  for (std::string_view name : AssetNames()) {
    const std::string text(FindAsset(name)->bytes);
    SCOPED_TRACE(std::string(name));
    if (name.ends_with(".html")) {
      EXPECT_FALSE(std::regex_search(text, inline_script));
      EXPECT_FALSE(std::regex_search(text, handler_attribute));
      EXPECT_FALSE(std::regex_search(text, style_attribute));
    }
    if (name.ends_with(".js")) {
      // Comments may name the sinks to forbid them; code may not use them.
      const std::string code = std::regex_replace(text, std::regex(R"(//[^\n]*)"), "");
      EXPECT_FALSE(std::regex_search(code, html_sinks));
    }
    EXPECT_FALSE(std::regex_search(text, remote_url)) << "assets load nothing from another origin";
  }
}

}  // namespace
}  // namespace gpufed::ui
