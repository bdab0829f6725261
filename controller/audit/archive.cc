#include "controller/audit/archive.h"

#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "controller/audit/checkpoint_record.h"
#include "controller/audit/file_journal_storage.h"
#include "controller/audit/journal.h"
#include "controller/audit/record.h"
#include "controller/audit/verify.h"
#include "controller/common/secure_file.h"
#include "controller/common/time_text.h"

namespace gpufed::audit {
namespace {

using SegmentList = std::vector<std::pair<uint64_t, std::string>>;

std::string Normal(const std::string& path) {
  std::error_code error;  // the overload that does not throw
  std::filesystem::path absolute = std::filesystem::absolute(path, error);
  std::string out = (error ? std::filesystem::path(path) : absolute).lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

std::string NameOf(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// One segment as read: its bytes, and what its chain says.
struct Scanned {
  std::string path;
  std::string text;
  uint64_t first_seq = 0, last_seq = 0;  // last_seq < first_seq: no complete record
  int64_t last_time_micros = 0;
  std::string first_prev, last_hash;
  bool complete = false;     // ends with a newline: no torn tail
  bool ends_signed = false;  // its last record is a v2 checkpoint
  bool holds_signed = false; // it holds a v2 checkpoint
};

// Reads a segment and checks its complete lines: each record's hash, seqs, prevs, and
// from its first v2 checkpoint on the tree each checkpoint signs (and the signatures,
// with a key). A torn tail is left out (only the newest segment may have one).
Result<Scanned> Scan(Env& env, const std::pair<uint64_t, std::string>& segment, const SignatureVerifier* key) {
  Scanned out;
  out.path = segment.second;
  out.first_seq = segment.first;
  out.last_seq = segment.first - 1;
  Result<std::string> text = env.ReadFile(segment.second);
  if (!text.ok()) return text.status();
  out.text = std::move(*text);
  out.complete = !out.text.empty() && out.text.back() == '\n';
  VerifyOptions options;
  options.key = key;
  options.first_seq = segment.first;
  ChainVerifier chain(options);
  std::string_view data = out.text;
  std::string_view last_line;
  for (size_t pos = 0, nl; (nl = data.find('\n', pos)) != std::string_view::npos; pos = nl + 1) {
    last_line = data.substr(pos, nl - pos);
    chain.AddLine(last_line);
  }
  VerifyReport report = chain.Finish();
  if (!report.ok) {
    return Status(StatusCode::kDataLoss,
                  out.path + ": " + report.error + "; nothing was moved: run gpufed audit verify");
  }
  if (report.records == 0) return out;
  out.last_seq = report.last_seq;
  out.first_prev = report.first_seq > 1 ? report.first_prev : std::string(kGenesisHash);
  out.holds_signed = !report.log_origin.empty();
  Result<ParsedLine> last = ParseRecordLine(last_line);
  if (!last.ok()) return last.status();  // ChainVerifier read it: not reached
  out.last_time_micros = last->header.time_micros;
  out.last_hash = std::string(last->hash);
  if (last->header.kind == "checkpoint") {
    Result<nlohmann::json> json = RecordJson(last_line);
    Result<std::optional<MerkleCheckpoint>> cp =
        json.ok() ? ParseMerkleCheckpoint(*json) : Result<std::optional<MerkleCheckpoint>>(json.status());
    out.ends_signed = cp.ok() && cp->has_value();
  }
  return out;
}

// The lowest seq an AuditSink has acknowledged, and the sink's name; nullopt without
// cursors. A damaged cursor refuses the run: it may be the sink that lags.
Result<std::optional<std::pair<uint64_t, std::string>>> LowestCursor(Env& env, const std::string& audit_dir) {
  const std::string dir = audit_dir + "/cursors";
  Result<std::vector<std::string>> names = env.ListDir(dir);
  if (!names.ok()) {
    if (names.status().code() == StatusCode::kNotFound) return std::optional<std::pair<uint64_t, std::string>>();
    return names.status();
  }
  std::optional<std::pair<uint64_t, std::string>> lowest;
  for (const std::string& name : *names) {
    if (!name.ends_with(".cursor")) continue;
    std::string path = dir;
    path.append("/").append(name);
    Result<std::string> text = env.ReadFile(path);
    if (!text.ok()) return text.status();
    nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
    auto seq = j.is_object() ? j.find("seq") : j.end();
    if (j.is_discarded() || !j.is_object() || seq == j.end() || !seq->is_number_unsigned()) {
      return Status(StatusCode::kDataLoss, path + " is damaged: nothing was moved");
    }
    const std::string sink = name.substr(0, name.size() - 7);
    if (!lowest || seq->get<uint64_t>() < lowest->first) lowest = std::make_pair(seq->get<uint64_t>(), sink);
  }
  return lowest;
}

// The prev the oldest live segment's first record must carry: the hash of the archive's
// last record (genesis for seq 1); empty when a new archive starts a journal whose older
// part was archived elsewhere. FailedPrecondition when the archive is not this journal's.
Result<std::string> ArchiveTail(Env& env, const SegmentList& archived, const SegmentList& live,
                                const std::string& archive_dir) {
  const uint64_t live_first = live.front().first;
  std::set<uint64_t> live_firsts;
  for (const auto& segment : live) live_firsts.insert(segment.first);
  const std::pair<uint64_t, std::string>* before = nullptr;
  for (const auto& segment : archived) {
    if (segment.first < live_first) {
      before = &segment;
    } else if (live_firsts.count(segment.first) == 0) {
      return FailedPrecondition(archive_dir + " holds " + NameOf(segment.second) +
                                ", which the live journal does not: it is not this journal's archive");
    }
  }
  if (before == nullptr) return live_first == 1 ? std::string(kGenesisHash) : std::string();
  Result<Scanned> tail = Scan(env, *before, nullptr);
  if (!tail.ok()) return tail.status();
  if (!tail->complete || tail->last_seq + 1 != live_first) {
    return FailedPrecondition(archive_dir + "/journal ends at seq " + std::to_string(tail->last_seq) +
                              " but the live journal begins at seq " + std::to_string(live_first) +
                              ": it is not this journal's archive");
  }
  return tail->last_hash;
}

// Why `segment` must stay live; empty when it may go. `next` is the segment after it.
std::string Hold(const Scanned& segment, const Scanned& next, bool copied,
                 const std::optional<std::pair<uint64_t, std::string>>& cursor, const ArchiveOptions& o) {
  const std::string name = NameOf(segment.path) + " (seq " + std::to_string(segment.first_seq) + "-" +
                           std::to_string(segment.last_seq) + ")";
  if (!segment.complete || segment.last_seq < segment.first_seq) return name + " ends with an incomplete record";
  if (!segment.ends_signed) {
    return name + " does not end with a signed (v2) checkpoint: an older journal's segments stay live";
  }
  if (!next.holds_signed) {
    return name + " is the last before a segment that holds no signed checkpoint yet: a start may read it";
  }
  if (cursor && segment.last_seq >= cursor->first) {
    return name + " holds records AuditSink " + cursor->second + " has not acknowledged (its cursor is at seq " +
           std::to_string(cursor->first) +
           "): ship them first (gpufed audit ship), or remove the cursor of a sink "
           "that is retired for good";
  }
  if (copied) return "";  // an interrupted run's copy: finished whatever `before` says
  if (o.before_seq && segment.last_seq >= *o.before_seq) {
    return name + " holds seq " + std::to_string(*o.before_seq) + " or later";
  }
  if (o.before_micros && segment.last_time_micros >= *o.before_micros) {
    return name + " ends at " + FormatTimeMicros(segment.last_time_micros) + ", not before " +
           FormatTimeMicros(*o.before_micros);
  }
  return "";
}

// Copies `segment` into `dir` (a temporary name, fdatasync, rename, directory sync) and
// compares the copy with it; an existing copy must be identical.
Status CopyVerified(Env& env, const Scanned& segment, const std::string& dir) {
  const std::string dest = dir + "/" + NameOf(segment.path);
  if (!env.FileExists(dest)) {
    const std::string partial = dest + ".partial";
    Result<std::unique_ptr<WritableFile>> out = env.NewWritableFile(partial, /*truncate=*/true);
    if (!out.ok()) return out.status();
    GPUFED_RETURN_IF_ERROR((*out)->Append(segment.text));
    GPUFED_RETURN_IF_ERROR((*out)->Sync());
    GPUFED_RETURN_IF_ERROR((*out)->Close());
    GPUFED_RETURN_IF_ERROR(env.Rename(partial, dest));
    GPUFED_RETURN_IF_ERROR(env.SyncDir(dir));
  }
  Result<std::string> copy = env.ReadFile(dest);
  if (!copy.ok()) return copy.status();
  if (*copy != segment.text) {
    return Status(StatusCode::kDataLoss, dest + " differs from " + segment.path +
                                             ": the live segment stays; move the differing copy away and run again");
  }
  return Status::Ok();
}

Status PrepareArchive(Env& env, const ArchiveOptions& o) {
  if (Normal(o.archive_dir) == Normal(o.audit_dir)) return InvalidArgument("the archive folder is the journal's own");
  if (env.FileExists(o.archive_dir + "/journal/LOCK")) {
    return FailedPrecondition(o.archive_dir +
                              " holds a live journal (journal/LOCK): an archive is a folder of its own");
  }
  if (o.dry_run) return Status::Ok();
  for (const std::string& dir : {o.archive_dir, o.archive_dir + "/journal"}) {
    // The segments name tenants and workloads: the archive is as private as the state.
    if (Result<std::optional<ModeChange>> made = MakePrivateFolder(dir); !made.ok()) return made.status();
  }
  GPUFED_RETURN_IF_ERROR(env.SyncDir(o.archive_dir));
  const std::string marker = o.archive_dir + "/" + kArchiveMarkerFile;
  if (env.FileExists(marker)) return Status::Ok();
  nlohmann::json j = {{"format", 1}, {"archiveOf", Normal(o.audit_dir)}};
  return WriteFileAtomic(env, marker, j.dump() + "\n");
}

}  // namespace

Result<ArchiveResult> ArchiveSegments(const ArchiveOptions& o) {
  if (o.env == nullptr || o.audit_dir.empty() || o.archive_dir.empty()) {
    return InvalidArgument("archiving needs an Env, the journal's folder and an archive folder");
  }
  if (o.before_micros.has_value() == o.before_seq.has_value()) {
    return InvalidArgument("give one bound: a time or a seq");
  }
  Env& env = *o.env;
  const std::string journal_dir = o.audit_dir + "/journal";
  if (!env.FileExists(journal_dir)) return NotFound(o.audit_dir + " holds no journal/ folder");
  Result<std::unique_ptr<FileLock>> lock = env.LockFile(o.audit_dir + "/archive.lock");
  if (!lock.ok()) {
    if (lock.status().code() != StatusCode::kFailedPrecondition) return lock.status();
    return FailedPrecondition("another gpufed audit archive is running on " + o.audit_dir);
  }
  GPUFED_RETURN_IF_ERROR(PrepareArchive(env, o));
  const std::string archive_journal = o.archive_dir + "/journal";
  Result<SegmentList> live = ListSegments(env, journal_dir);
  if (!live.ok()) return live.status();
  Result<SegmentList> archived = ListSegments(env, archive_journal);
  if (!archived.ok() && !(o.dry_run && archived.status().code() == StatusCode::kNotFound)) return archived.status();
  if (!archived.ok()) archived = SegmentList();  // a dry run into a folder not made yet
  Result<std::optional<std::pair<uint64_t, std::string>>> cursor = LowestCursor(env, o.audit_dir);
  if (!cursor.ok()) return cursor.status();

  ArchiveResult result;
  result.live_first_seq = live->empty() ? 0 : live->front().first;
  if (live->size() < 2) {
    result.stopped = live->empty() ? "the journal has no segments" : "only the segment being written is left";
    return result;
  }
  Result<std::string> prev = ArchiveTail(env, *archived, *live, o.archive_dir);
  if (!prev.ok()) return prev.status();
  Result<Scanned> current = Scan(env, (*live)[0], o.key);
  if (!current.ok()) return current.status();
  // Never the newest segment: a running controller appends to it.
  for (size_t i = 0; i + 1 < live->size(); ++i) {
    Result<Scanned> next = Scan(env, (*live)[i + 1], o.key);
    if (!next.ok()) return next.status();
    const Scanned& segment = *current;
    if (!prev->empty() && segment.first_prev != *prev) {
      return FailedPrecondition(NameOf(segment.path) + " does not continue " + archive_journal +
                                " (its first record's prev is not the hash of the archive's last): it is not this "
                                "journal's archive");
    }
    const bool next_has_records = next->last_seq >= next->first_seq;
    if (segment.complete &&
        (next->first_seq != segment.last_seq + 1 || (next_has_records && next->first_prev != segment.last_hash))) {
      return Status(StatusCode::kDataLoss, NameOf(next->path) + " does not follow " + NameOf(segment.path) +
                                               "; nothing was moved: run gpufed audit verify");
    }
    const bool copied = env.FileExists(archive_journal + "/" + NameOf(segment.path));
    result.stopped = Hold(segment, *next, copied, *cursor, o);
    if (!result.stopped.empty()) break;
    if (!o.dry_run) {
      GPUFED_RETURN_IF_ERROR(CopyVerified(env, segment, archive_journal));
      GPUFED_RETURN_IF_ERROR(env.RemoveFile(segment.path));
      GPUFED_RETURN_IF_ERROR(env.SyncDir(journal_dir));
    }
    result.moved.push_back(
        {NameOf(segment.path), segment.first_seq, segment.last_seq, segment.last_time_micros, copied});
    result.live_first_seq = next->first_seq;
    *prev = segment.last_hash;
    current = std::move(next);
  }
  if (result.stopped.empty()) result.stopped = "only the segment being written is left";
  return result;
}

}  // namespace gpufed::audit
