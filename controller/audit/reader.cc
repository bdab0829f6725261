#include "controller/audit/reader.h"

#include "controller/audit/file_journal_storage.h"
#include "controller/audit/journal.h"
#include "controller/audit/record.h"

namespace gpufed::audit {
namespace {
constexpr size_t kChunk = size_t{1} << 20;
}  // namespace

JournalReader::JournalReader(Env* env, std::string audit_dir)
    : env_(env), journal_dir_(std::move(audit_dir) + "/journal") {}
JournalReader::~JournalReader() = default;

Status JournalReader::Refresh() {
  auto segments = ListSegments(*env_, journal_dir_);
  if (!segments.ok()) return segments.status();
  segments_ = std::move(*segments);
  return Status::Ok();
}

Status JournalReader::OpenSegment(size_t index) {
  buffer_.clear();
  pos_ = 0;
  file_.reset();
  if (index >= segments_.size()) return Status::Ok();
  current_first_ = segments_[index].first;
  current_path_ = segments_[index].second;
  auto file = env_->NewSequentialFile(segments_[index].second);
  if (!file.ok()) return file.status();
  file_ = std::move(*file);
  return Status::Ok();
}

Status JournalReader::Seek(uint64_t seq) {
  GPUFED_RETURN_IF_ERROR(Refresh());
  next_seq_ = seq == 0 ? 1 : seq;
  read_since_seek_ = false;
  size_t index = 0;
  for (size_t i = 0; i < segments_.size(); ++i) {
    if (segments_[i].first <= next_seq_) index = i;
  }
  return OpenSegment(index);
}

Result<size_t> JournalReader::Next(size_t max, uint64_t limit, std::vector<JournalEntry>* out) {
  size_t added = 0;
  if (file_ == nullptr) {
    GPUFED_RETURN_IF_ERROR(Seek(next_seq_));
    if (file_ == nullptr) return added;
  }
  while (added < max && next_seq_ <= limit) {
    size_t nl = buffer_.find('\n', pos_);
    if (nl == std::string::npos) {
      buffer_.erase(0, pos_);
      pos_ = 0;
      size_t old = buffer_.size();
      buffer_.resize(old + kChunk);
      Result<size_t> n = file_->Read(buffer_.data() + old, kChunk);
      buffer_.resize(old + (n.ok() ? *n : 0));
      if (!n.ok()) return n.status();
      if (*n > 0) continue;
      // End of this segment: move on if a later one exists, else wait for more. Found by
      // its first seq: `gpufed audit archive` may have removed older segments meanwhile.
      GPUFED_RETURN_IF_ERROR(Refresh());
      size_t later = 0;
      while (later < segments_.size() && segments_[later].first <= current_first_) ++later;
      if (later < segments_.size() && buffer_.empty()) {
        GPUFED_RETURN_IF_ERROR(OpenSegment(later));
        continue;
      }
      break;
    }
    std::string_view line(buffer_.data() + pos_, nl - pos_);
    pos_ = nl + 1;
    Result<ParsedLine> parsed = ParseRecordLine(line, &hasher_);
    if (!parsed.ok()) {
      return Status(StatusCode::kDataLoss, current_path_ + ": record after seq " + std::to_string(next_seq_ - 1) +
                                               ": " + parsed.status().message());
    }
    if (parsed->header.seq < next_seq_) continue;
    if (parsed->header.seq > next_seq_ && read_since_seek_) {
      return Status(StatusCode::kDataLoss, current_path_ + ": seq " + std::to_string(next_seq_) +
                                               " is missing (the next record is seq " +
                                               std::to_string(parsed->header.seq) + ")");
    }
    if (parsed->header.seq > limit) {
      pos_ -= line.size() + 1;  // not durable yet: read it again later
      break;
    }
    out->push_back({parsed->header.seq, parsed->header.time_micros, parsed->header.kind, std::string(parsed->hash),
                    std::string(line)});
    next_seq_ = parsed->header.seq + 1;
    read_since_seek_ = true;
    ++added;
  }
  return added;
}

}  // namespace gpufed::audit
