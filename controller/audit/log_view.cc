#include "controller/audit/log_view.h"

#include <algorithm>
#include <charconv>

#include "controller/audit/file_journal_storage.h"
#include "controller/audit/reader.h"
#include "controller/audit/witness_client.h"

namespace gpufed::audit {

Result<std::string> LogView::Checkpoint() const {
  AuditJournal::CheckpointMark mark = journal_->last_checkpoint();
  if (mark.note.empty()) return NotFound("the journal has no signed checkpoint yet");
  return WithCosignatures(mark.note);
}

std::string LogView::WithCosignatures(const std::string& checkpoint) const {
  Result<Note> served = ParseNote(checkpoint);
  Result<std::vector<WitnessedFile>> files = ReadWitnessedNotes(*env_, audit_dir_);
  if (!served.ok() || !files.ok()) return checkpoint;  // the log's signature alone is still a checkpoint
  const size_t before = served->signatures.size();
  for (const WitnessedFile& witnessed : *files) {
    // Only a cosignature of this very checkpoint: the witness cosigns at most once a
    // second, so between records the newest checkpoint is often not cosigned yet.
    if (!witnessed.note.ok() || witnessed.note->body != served->body) continue;
    for (const NoteSignature& s : witnessed.note->signatures) {
      const bool known = std::any_of(served->signatures.begin(), served->signatures.end(),
                                     [&](const NoteSignature& k) { return k.name == s.name && k.key_id == s.key_id; });
      if (!known && served->signatures.size() < kMaxNoteSignatures) served->signatures.push_back(s);
    }
  }
  return served->signatures.size() == before ? checkpoint : FormatNote(*served);
}

Result<std::string> LogView::Tile(std::string_view path) const {
  const bool entries = IsEntryBundle(path);
  std::string_view rest = path;
  uint64_t level = 0;
  if (entries) {
    rest.remove_prefix(8);
  } else {
    const size_t slash = rest.find('/');
    std::string_view level_text = rest.substr(0, slash);
    auto [ptr, ec] = std::from_chars(level_text.data(), level_text.data() + level_text.size(), level);
    if (slash == std::string_view::npos || ec != std::errc() || ptr != level_text.data() + level_text.size() ||
        level > 7 || std::to_string(level) != level_text) {
      return InvalidArgument("not a tile path: tile/<level>/<index>[.p/<width>] or tile/entries/<index>[.p/<width>]");
    }
    rest.remove_prefix(slash + 1);
  }
  Result<std::pair<uint64_t, uint64_t>> index = ParseTileIndexPath(rest);
  if (!index.ok()) return index.status();
  if (entries) return EntryBundle(index->first, index->second);
  if (tiles_ == nullptr) return tiles_status_.ok() ? Unavailable("the journal keeps no tiles") : tiles_status_;
  return tiles_->Tile(static_cast<int>(level), index->first, index->second);
}

Result<std::string> LogView::EntryBundle(uint64_t index, uint64_t width) const {
  if (index > (UINT64_MAX - kTileWidth) / kTileWidth) return NotFound("no such entry bundle");
  const uint64_t first = index * kTileWidth + 1;  // seq of the bundle's first record
  const uint64_t last = first + width - 1;
  if (last > journal_->last_seq())
    return NotFound("the journal has no records " + std::to_string(first) + "-" + std::to_string(last) + " yet");
  if (Result<std::vector<std::pair<uint64_t, std::string>>> segments = ListSegments(*env_, audit_dir_ + "/journal");
      !open_source_ && segments.ok() && !segments->empty() && segments->front().first > first) {
    return NotFound("the journal's records " + std::to_string(first) + "-" + std::to_string(last) +
                    " are archived (gpufed audit archive; the live journal begins at seq " +
                    std::to_string(segments->front().first) + ")");
  }
  std::unique_ptr<JournalRecordSource> reader =
      open_source_ ? open_source_() : std::make_unique<JournalReader>(env_, audit_dir_);
  GPUFED_RETURN_IF_ERROR(reader->Seek(first));
  std::vector<JournalEntry> records;
  while (records.size() < width) {
    Result<size_t> n = reader->Next(width - records.size(), last, &records);
    if (!n.ok()) return n.status();
    if (*n == 0) break;
  }
  if (records.size() != width || records.front().seq != first) {
    return Internal("the journal's records " + std::to_string(first) + "-" + std::to_string(last) +
                    " could not be read");
  }
  std::string out;
  for (const JournalEntry& record : records) {
    if (record.line.size() > 0xffff) {
      return Internal("record seq " + std::to_string(record.seq) +
                      " is over 65535 bytes, more than a tile entry holds");
    }
    out.push_back(static_cast<char>(record.line.size() >> 8));
    out.push_back(static_cast<char>(record.line.size() & 0xff));
    out += record.line;
  }
  return out;
}

}  // namespace gpufed::audit
