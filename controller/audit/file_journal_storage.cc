#include "controller/audit/file_journal_storage.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

namespace gpufed::audit {

std::string SegmentName(uint64_t first_seq) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%020llu.log", static_cast<unsigned long long>(first_seq));
  return buf;
}

Result<std::vector<std::pair<uint64_t, std::string>>> ListSegments(Env& env, const std::string& journal_dir) {
  Result<std::vector<std::string>> names = env.ListDir(journal_dir);
  if (!names.ok()) return names.status();
  std::vector<std::pair<uint64_t, std::string>> out;
  for (const std::string& name : *names) {
    if (name.size() != 24 || name.substr(20) != ".log") continue;
    uint64_t seq = 0;
    auto [ptr, ec] = std::from_chars(name.data(), name.data() + 20, seq);
    if (ec != std::errc() || ptr != name.data() + 20) continue;
    std::string path = journal_dir;
    path += '/';
    path += name;
    out.emplace_back(seq, std::move(path));
  }
  std::sort(out.begin(), out.end());
  return out;
}

FileJournalStorage::FileJournalStorage(FileJournalStorageOptions options) : options_(std::move(options)) {}

FileJournalStorage::~FileJournalStorage() {
  if (segment_ != nullptr) (void)segment_->Close();
  segment_.reset();
  lock_.reset();
}

Status FileJournalStorage::AppendCommit(std::string_view lines, uint64_t first_seq) {
  if (lock_ == nullptr) return FailedPrecondition("the audit journal's storage is not open for writing");
  if (segment_ != nullptr && segment_size_ > 0 && segment_size_ + lines.size() > options_.segment_bytes) {
    GPUFED_RETURN_IF_ERROR(segment_->Close());
    segment_.reset();
  }
  if (segment_ == nullptr) {
    Result<std::unique_ptr<WritableFile>> file =
        options_.env->NewWritableFile(journal_dir() + "/" + SegmentName(first_seq), /*truncate=*/true);
    if (!file.ok()) return file.status();
    segment_ = std::move(*file);
    segment_size_ = 0;
    GPUFED_RETURN_IF_ERROR(options_.env->SyncDir(journal_dir()));
  }
  GPUFED_RETURN_IF_ERROR(segment_->Append(lines));
  segment_size_ += lines.size();
  return segment_->Sync();
}

Status FileJournalStorage::Close() {
  Status status = Status::Ok();
  if (segment_ != nullptr) status = segment_->Close();
  segment_.reset();
  lock_.reset();
  return status;
}

}  // namespace gpufed::audit
