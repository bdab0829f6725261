#include "controller/ui/assets.h"

#include <algorithm>

#include "controller/ui/embedded_file.h"

namespace gpufed::ui {

std::string_view ContentTypeOf(std::string_view name) {
  struct Type {
    std::string_view extension, content_type;
  };
  // Explicit charsets: with nosniff the browser must not guess, and a module script needs
  // a JavaScript MIME type or it is refused.
  static constexpr Type kTypes[] = {
      {".html", "text/html; charset=utf-8"},      {".js", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},        {".svg", "image/svg+xml"},
      {".json", "application/json"},              {".png", "image/png"},
      {".txt", "text/plain; charset=utf-8"},
  };
  for (const Type& t : kTypes) {
    if (name.size() > t.extension.size() && name.ends_with(t.extension)) return t.content_type;
  }
  return "application/octet-stream";
}

std::optional<Asset> FindAsset(std::string_view name) {
  // The table is sorted by name (embed_assets.cmake), and names never hold '/' or "..",
  // so a lookup by exact name cannot reach anything outside it.
  const EmbeddedFile* begin = kEmbeddedFiles;
  const EmbeddedFile* end = kEmbeddedFiles + kEmbeddedFileCount;
  const EmbeddedFile* it =
      std::lower_bound(begin, end, name, [](const EmbeddedFile& f, std::string_view n) { return f.name < n; });
  if (it == end || it->name != name) return std::nullopt;
  return Asset{it->name, ContentTypeOf(it->name),
               std::string_view(reinterpret_cast<const char*>(it->data), it->size), it->etag};
}

std::vector<std::string_view> AssetNames() {
  std::vector<std::string_view> names;
  for (size_t i = 0; i < kEmbeddedFileCount; ++i) names.emplace_back(kEmbeddedFiles[i].name);
  return names;
}

}  // namespace gpufed::ui
