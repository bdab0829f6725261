#pragma once
// The dashboard's static files (controller/ui/assets/), embedded in the binary at build
// time. They hold no data (every number comes from the API with the user's token), so
// they may be served without a token.
#include <optional>
#include <string_view>
#include <vector>

namespace gpufed::ui {

struct Asset {
  std::string_view name;          // "app.js"
  std::string_view content_type;  // "text/javascript; charset=utf-8"
  std::string_view bytes;
  std::string_view etag;          // quoted strong validator: "\"<sha256>\""
};

// The asset called `name` (a file name, no folder); nullopt when there is none, for any
// other text (empty, "..", "a/b", a name with a query string) too.
std::optional<Asset> FindAsset(std::string_view name);

// Every asset's name, sorted.
std::vector<std::string_view> AssetNames();

// The Content-Type served for a file name, from its extension; binary for unknown ones.
std::string_view ContentTypeOf(std::string_view name);

}  // namespace gpufed::ui
