#include "controller/audit/journal_copy.h"

#include <optional>
#include <vector>

#include "controller/audit/file_journal_storage.h"
#include "controller/audit/journal.h"
#include "controller/audit/record.h"

namespace gpufed::audit {
namespace {

constexpr int64_t kPollMicros = 200'000;

// A record the scan read: where its line ends, and what it is.
struct Seen {
  uint64_t segment = 0;  // the first seq of its segment (an index would move when older ones are archived)
  uint64_t end = 0;  // bytes of the segment up to and including the record's newline
  uint64_t seq = 0;
  std::string hash;
  bool checkpoint = false;
};

// Reads a journal's complete record lines in order and remembers where it stopped, so a
// later call reads only what was appended since (a torn last line is read again whole).
class JournalScan {
 public:
  JournalScan(Env& env, std::string journal_dir) : env_(env), journal_dir_(std::move(journal_dir)) {}

  // Calls `fn(seen)` for each new record until it returns true (the scan stops after that
  // record) or the journal ends.
  template <typename Fn>
  Status Continue(Fn&& fn) {
    Result<std::vector<std::pair<uint64_t, std::string>>> listed = ListSegments(env_, journal_dir_);
    if (!listed.ok()) return listed.status();
    segments_ = std::move(listed).value();
    // Where the scan stopped, found by first seq: `gpufed audit archive` may have removed
    // older segments since (and a segment the scan had not finished is an error below).
    if (segment_first_ != 0) {
      segment_ = 0;
      while (segment_ < segments_.size() && segments_[segment_].first < segment_first_) ++segment_;
      if (segment_ == segments_.size() || segments_[segment_].first != segment_first_) {
        return FailedPrecondition(journal_dir_ + "/" + SegmentName(segment_first_) +
                                  " was archived while the copy read it; copy again");
      }
    }
    while (segment_ < segments_.size()) {
      segment_first_ = segments_[segment_].first;
      Result<std::string> rest = ReadFrom(segments_[segment_].second, offset_);
      if (!rest.ok()) return rest.status();
      size_t start = 0;
      for (size_t nl; (nl = rest->find('\n', start)) != std::string::npos; start = nl + 1) {
        Result<ParsedLine> parsed = ParseRecordLine(std::string_view(*rest).substr(start, nl - start), &hasher_);
        if (!parsed.ok()) {
          return Status(StatusCode::kDataLoss, segments_[segment_].second + " at byte " +
                                                   std::to_string(offset_ + start) + ": " + parsed.status().message());
        }
        const Seen seen{segment_first_, offset_ + nl + 1, parsed->header.seq, std::string(parsed->hash),
                        parsed->header.kind == RecordKindName(RecordKind::kCheckpoint)};
        if (fn(seen)) {
          offset_ = seen.end;
          return Status::Ok();
        }
      }
      offset_ += start;
      if (segment_ + 1 == segments_.size()) break;  // the open segment: it may still grow
      ++segment_;
      offset_ = 0;
    }
    return Status::Ok();
  }
  const std::vector<std::pair<uint64_t, std::string>>& segments() const { return segments_; }

 private:
  Result<std::string> ReadFrom(const std::string& path, uint64_t offset) {
    Result<std::unique_ptr<SequentialFile>> file = env_.NewSequentialFile(path);
    if (!file.ok()) return file.status();
    GPUFED_RETURN_IF_ERROR((*file)->Seek(offset));
    std::string out;
    std::vector<char> chunk(size_t{1} << 20);
    for (;;) {
      Result<size_t> n = (*file)->Read(chunk.data(), chunk.size());
      if (!n.ok()) return n.status();
      if (*n == 0) return out;
      out.append(chunk.data(), *n);
    }
  }

  Env& env_;
  const std::string journal_dir_;
  std::vector<std::pair<uint64_t, std::string>> segments_;
  size_t segment_ = 0;
  uint64_t segment_first_ = 0;  // first seq of segments_[segment_] (0: none read yet)
  uint64_t offset_ = 0;
  LineHasher hasher_;
};

}  // namespace

Result<JournalCopy> CopyJournalToCheckpoint(Env& env, const std::string& audit_dir, const std::string& dest_audit_dir,
                                            int64_t wait_micros) {
  const int64_t deadline = env.NowMicros() + wait_micros;
  JournalScan scan(env, audit_dir + "/journal");
  // The head as of now; a head that is a checkpoint is the cut itself.
  std::optional<Seen> last;
  GPUFED_RETURN_IF_ERROR(scan.Continue([&](const Seen& seen) {
    last = seen;
    return false;
  }));
  std::optional<Seen> cut = last && last->checkpoint ? last : std::nullopt;
  const uint64_t head = last ? last->seq : 0;
  while (!cut) {
    GPUFED_RETURN_IF_ERROR(scan.Continue([&](const Seen& seen) {
      if (seen.checkpoint && seen.seq > head) cut = seen;
      return cut.has_value();
    }));
    if (cut) break;
    if (env.NowMicros() >= deadline) {
      return Status(StatusCode::kDeadlineExceeded,
                    "no signed checkpoint after seq " + std::to_string(head) + " in " + audit_dir +
                        "/journal yet (a running controller writes one within its --checkpoint-interval once "
                        "records wait); try again, or wait longer");
    }
    env.SleepMicros(kPollMicros);
  }
  const std::string dest = dest_audit_dir + "/journal";
  GPUFED_RETURN_IF_ERROR(env.CreateDirs(dest));
  const auto& segments = scan.segments();
  uint64_t copied = 0;
  for (size_t i = 0; i < segments.size() && segments[i].first <= cut->segment; ++i, ++copied) {
    Result<std::string> text = env.ReadFile(segments[i].second);
    if (!text.ok()) return text.status();
    if (segments[i].first == cut->segment) text->resize(cut->end);
    const std::string name = segments[i].second.substr(segments[i].second.rfind('/') + 1);
    std::string path = dest;
    path.append("/").append(name);
    Result<std::unique_ptr<WritableFile>> out = env.NewWritableFile(path, /*truncate=*/true);
    if (!out.ok()) return out.status();
    GPUFED_RETURN_IF_ERROR((*out)->Append(*text));
    GPUFED_RETURN_IF_ERROR((*out)->Sync());
    GPUFED_RETURN_IF_ERROR((*out)->Close());
  }
  GPUFED_RETURN_IF_ERROR(env.SyncDir(dest));
  return JournalCopy{cut->seq, cut->hash, copied};
}

}  // namespace gpufed::audit
