#include "controller/audit/journal_copy.h"

#include <optional>
#include <vector>

#include "controller/audit/journal.h"
#include "controller/audit/reader.h"
#include "controller/audit/record.h"

namespace gpufed::audit {
namespace {

constexpr int64_t kPollMicros = 200'000;

// Where the copy ends: the segment holding the checkpoint and the bytes of it kept.
struct Cut {
  size_t segment = 0;
  uint64_t bytes = 0;
  uint64_t seq = 0;
  std::string hash;
};

// Finds the first checkpoint at or after `cover_seq`, reading complete lines only.
Result<std::optional<Cut>> FindCut(Env& env, const std::vector<std::pair<uint64_t, std::string>>& segments,
                                   uint64_t cover_seq) {
  LineHasher hasher;
  for (size_t i = 0; i < segments.size(); ++i) {
    Result<std::string> text = env.ReadFile(segments[i].second);
    if (!text.ok()) return text.status();
    size_t start = 0;
    for (size_t nl; (nl = text->find('\n', start)) != std::string::npos; start = nl + 1) {
      Result<ParsedLine> parsed = ParseRecordLine(std::string_view(*text).substr(start, nl - start), &hasher);
      if (!parsed.ok()) {
        return Status(StatusCode::kDataLoss, segments[i].second + ": record after seq " + std::to_string(cover_seq) +
                                                 " search: " + parsed.status().message());
      }
      if (parsed->header.seq >= cover_seq && parsed->header.kind == RecordKindName(RecordKind::kCheckpoint)) {
        return std::optional<Cut>(Cut{i, nl + 1, parsed->header.seq, std::string(parsed->hash)});
      }
    }
  }
  return std::optional<Cut>();
}

}  // namespace

Result<uint64_t> JournalHeadSeq(Env& env, const std::string& audit_dir) {
  uint64_t head = 0;
  LineHasher hasher;
  Status read = ForEachJournalLine(env, audit_dir, [&](std::string_view line) -> Status {
    // A torn last line (no newline yet, or cut) is not a record: the head is before it.
    Result<ParsedLine> parsed = ParseRecordLine(line, &hasher);
    if (parsed.ok()) head = parsed->header.seq;
    return Status::Ok();
  });
  if (!read.ok()) return read;
  return head;
}

Result<JournalCopy> CopyJournalToCheckpoint(Env& env, const std::string& audit_dir, const std::string& dest_audit_dir,
                                            uint64_t cover_seq, int64_t wait_micros) {
  const int64_t deadline = env.NowMicros() + wait_micros;
  std::optional<Cut> cut;
  std::vector<std::pair<uint64_t, std::string>> segments;
  while (true) {
    Result<std::vector<std::pair<uint64_t, std::string>>> listed = ListSegments(env, audit_dir + "/journal");
    if (!listed.ok()) return listed.status();
    segments = std::move(listed).value();
    Result<std::optional<Cut>> found = FindCut(env, segments, cover_seq);
    if (!found.ok()) return found.status();
    if (found->has_value()) {
      cut = **found;
      break;
    }
    if (env.NowMicros() >= deadline) {
      return Status(StatusCode::kDeadlineExceeded,
                    "no signed checkpoint at or after seq " + std::to_string(cover_seq) + " in " + audit_dir +
                        "/journal yet (a running controller writes one within its "
                        "--checkpoint-interval once records wait); try again, or wait longer");
    }
    env.SleepMicros(kPollMicros);
  }
  const std::string dest = dest_audit_dir + "/journal";
  GPUFED_RETURN_IF_ERROR(env.CreateDirs(dest));
  for (size_t i = 0; i <= cut->segment; ++i) {
    Result<std::string> text = env.ReadFile(segments[i].second);
    if (!text.ok()) return text.status();
    if (i == cut->segment) text->resize(cut->bytes);
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
  return JournalCopy{cut->seq, cut->hash, cut->segment + 1};
}

}  // namespace gpufed::audit
