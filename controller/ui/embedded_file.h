#pragma once
// The table embed_assets.cmake generates at build time: every file of controller/ui/assets/,
// sorted by name. Only assets.cc reads it; everything else asks assets.h.
#include <cstddef>

namespace gpufed::ui {

struct EmbeddedFile {
  const char* name;           // file name, e.g. "app.js"
  const unsigned char* data;  // `size` bytes (followed by a 0 that is not part of the file)
  size_t size;
  const char* etag;           // "\"<sha256 of the bytes>\"", ready for the ETag header
};

extern const EmbeddedFile kEmbeddedFiles[];
extern const size_t kEmbeddedFileCount;

}  // namespace gpufed::ui
