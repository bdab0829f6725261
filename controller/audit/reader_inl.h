#pragma once
// Template part of reader.h.
#include <string_view>

#include "controller/audit/file_journal_storage.h"
#include "controller/audit/journal.h"

namespace gpufed::audit {

template <typename Fn>
Status ForEachJournalLine(Env& env, const std::string& audit_dir, Fn&& fn) {
  auto segments = ListSegments(env, audit_dir + "/journal");
  if (!segments.ok()) return segments.status();
  for (const auto& [first_seq, path] : *segments) {
    auto file = env.NewSequentialFile(path);
    if (!file.ok()) return file.status();
    std::string buffer;
    std::vector<char> chunk(size_t{1} << 20);
    for (;;) {
      auto n = (*file)->Read(chunk.data(), chunk.size());
      if (!n.ok()) return n.status();
      if (*n == 0) break;
      buffer.append(chunk.data(), *n);
      size_t start = 0;
      for (size_t nl; (nl = buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
        GPUFED_RETURN_IF_ERROR(fn(std::string_view(buffer).substr(start, nl - start)));
      }
      buffer.erase(0, start);
    }
    if (!buffer.empty()) GPUFED_RETURN_IF_ERROR(fn(std::string_view(buffer)));
  }
  return Status::Ok();
}

}  // namespace gpufed::audit
