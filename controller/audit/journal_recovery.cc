// FileJournalStorage::Recover: what the file journal's open checks and repairs before
// anything may be written.
//
// The chain of the last segment is checked line by line. With a signing key the
// journal's Merkle tree is also recovered and checked: from the first v2 checkpoint of
// the last segment (or the last one before it) every checkpoint must sign the tree of
// the records before it, with the log's origin and the key in force (key_in_force.h:
// this controller's key, or before a key-rotated record that hands the journal over to
// it, the key that signed that record). Every commit ends with a checkpoint in the same
// write, so complete records after the last checkpoint can only be a commit that a
// crash tore (one commit: one time stamp) and that nobody was told of: it is cut off and
// kept in quarantine. Anything else after the last signature (records of several
// commits, records after a clean close that no controller-start or key rotation begins)
// was not written by this journal: the open is refused and no byte changes.
#include <set>

#include "controller/audit/checkpoint_record.h"
#include "controller/audit/file_journal_storage.h"
#include "controller/audit/key_in_force.h"
#include "controller/common/secure_file.h"

namespace gpufed::audit {
namespace {

// The journal's folders are private (0700; narrowed when an older gpufed left them
// open): records name tenants and workloads, and the snapshots beside the journal hold
// every spec's run.env. Made directly rather than through Env, whose CreateDirs takes no
// mode; files are still read and written only through Env.
Status MakePrivateFolders(std::initializer_list<std::string> dirs) {
  for (const std::string& dir : dirs) {
    if (Result<std::optional<ModeChange>> made = MakePrivateFolder(dir); !made.ok()) return made.status();
  }
  return Status::Ok();
}

struct ScannedLine {
  size_t begin = 0, end = 0;  // the line's bytes in the segment's text, without the newline
  uint64_t seq = 0;
  int64_t time_micros = 0;
  std::string kind;
  std::string hash;
};

// One segment's complete, chained lines. `good_end` is the offset after the last of them.
struct ScannedSegment {
  std::string path;
  std::string text;
  std::vector<ScannedLine> lines;
  size_t good_end = 0;
};

// Reads `path` and checks each line's own hash, its seq and (after the first) its prev.
// Stops at an incomplete last line; a complete line that fails is DataLoss.
Result<ScannedSegment> ScanSegment(Env& env, const std::string& path, uint64_t first_seq, LineHasher& hasher) {
  ScannedSegment out;
  out.path = path;
  Result<std::string> text = env.ReadFile(path);
  if (!text.ok()) return text.status();
  out.text = std::move(*text);
  std::string_view data = out.text;
  uint64_t seq = first_seq - 1;
  for (size_t pos = 0; pos < data.size();) {
    size_t nl = data.find('\n', pos);
    if (nl == std::string_view::npos) break;  // a torn tail
    Result<ParsedLine> line = ParseRecordLine(data.substr(pos, nl - pos), &hasher);
    if (!line.ok() || line->header.seq != seq + 1 ||
        (!out.lines.empty() && line->header.prev != out.lines.back().hash)) {
      return Status(StatusCode::kDataLoss, path + ": damaged record at byte " + std::to_string(pos) + " (after seq " +
                                               std::to_string(seq) + "); nothing was changed: run gpufed audit verify");
    }
    seq = line->header.seq;
    out.lines.push_back({pos, nl, seq, line->header.time_micros, line->header.kind, std::string(line->hash)});
    pos = nl + 1;
    out.good_end = pos;
  }
  return out;
}

std::string_view LineOf(const ScannedSegment& segment, const ScannedLine& line) {
  return std::string_view(segment.text).substr(line.begin, line.end - line.begin);
}

Result<std::optional<MerkleCheckpoint>> CheckpointOf(const ScannedSegment& segment, const ScannedLine& line) {
  if (line.kind != "checkpoint") return std::optional<MerkleCheckpoint>();
  Result<nlohmann::json> json = RecordJson(LineOf(segment, line));
  if (!json.ok()) return json.status();
  Result<std::optional<MerkleCheckpoint>> checkpoint = ParseMerkleCheckpoint(*json);
  if (!checkpoint.ok()) {
    return Status(StatusCode::kDataLoss, "seq " + std::to_string(line.seq) + ": " + checkpoint.status().message());
  }
  return checkpoint;
}

// Index of the first v2 checkpoint of `segment` (or of its last when `last`); -1: none.
Result<int> FindCheckpoint(const ScannedSegment& segment, bool last) {
  const int n = static_cast<int>(segment.lines.size());
  for (int k = 0; k < n; ++k) {
    const int i = last ? n - 1 - k : k;
    Result<std::optional<MerkleCheckpoint>> cp = CheckpointOf(segment, segment.lines[i]);
    if (!cp.ok()) return cp.status();
    if (cp->has_value()) return i;
  }
  return -1;
}

// True when a v1 checkpoint of `segment` (a signature over the chain head) verifies with
// `signer`'s key.
bool SignedTheOldWay(const ScannedSegment& segment, const Signer& signer) {
  Result<SignatureVerifier> key = SignatureVerifier::FromPublicKeyPem(signer.PublicKeyPem());
  if (!key.ok()) return false;
  for (const ScannedLine& line : segment.lines) {
    if (line.kind != "checkpoint") continue;
    Result<nlohmann::json> json = RecordJson(LineOf(segment, line));
    if (!json.ok() || json->contains("format")) continue;
    auto text = [&](const char* member) {
      auto it = json->find(member);
      return it != json->end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    auto seq = json->find("signedSeq");
    if (seq == json->end() || !seq->is_number_unsigned() || seq->get<uint64_t>() + 1 != line.seq) continue;
    if (text("signedHash") != text("prev")) continue;
    if (key->Verify(CheckpointMessage(line.seq - 1, text("prev")), text("sig"))) return true;
  }
  return false;
}

// The tree of the kept records and where the last segment is cut.
struct TreeRecovery {
  CompactRange range;
  size_t kept_lines = 0;  // of the last segment
  size_t cut = 0;         // offset in the last segment
};

// What follows the last checkpoint (seq `signed_head`; 0: none) in the last segment:
// nothing, one commit a crash tore before its checkpoint (nobody was told of it: it is
// cut off), or records this journal did not write, which refuse the open.
Result<TreeRecovery> JudgeUnsignedTail(const ScannedSegment& last, uint64_t signed_head, bool clean_close,
                                       CompactRange signed_range) {
  TreeRecovery out;
  out.range = std::move(signed_range);
  out.kept_lines = last.lines.size();
  out.cut = last.good_end;
  size_t first_unsigned = last.lines.size();
  while (first_unsigned > 0 && last.lines[first_unsigned - 1].seq > signed_head) --first_unsigned;
  if (first_unsigned == last.lines.size()) return out;
  const uint64_t head = last.lines.back().seq;
  if (last.lines[first_unsigned].seq != signed_head + 1) {
    return Status(StatusCode::kDataLoss, "seq " + std::to_string(signed_head + 1) + " to " + std::to_string(head) +
                                             " follow the last signed checkpoint across segments; nothing was "
                                             "changed: run gpufed audit verify");
  }
  std::set<int64_t> times;
  for (size_t i = first_unsigned; i < last.lines.size(); ++i) times.insert(last.lines[i].time_micros);
  const bool several = head > signed_head + 1;
  const std::string span = (several ? "records seq " : "record seq ") + std::to_string(signed_head + 1) +
                           (several ? " to " + std::to_string(head) : "");
  const std::string follow = several ? " follow " : " follows ";
  const std::string signed_text = signed_head == 0
                                      ? "no signed checkpoint"
                                      : "the last signed checkpoint (seq " + std::to_string(signed_head) + ")";
  // After a clean close, only a start or a key rotation (rotate-key, on a stopped
  // controller) begins a commit.
  const std::string& first_kind = last.lines[first_unsigned].kind;
  if (clean_close && first_kind != "controller-start" && first_kind != "key-rotated") {
    return FailedPrecondition(span + follow + "the clean close at seq " + std::to_string(signed_head) +
                              " without a controller-start; nothing was changed: run gpufed audit verify");
  }
  if (times.size() > 1) {
    return FailedPrecondition(span + follow + signed_text +
                              (several ? " but are not one torn commit" : " but is not one torn commit") +
                              "; nothing was changed: run gpufed audit verify");
  }
  out.kept_lines = first_unsigned;
  out.cut = first_unsigned == 0 ? 0 : last.lines[first_unsigned - 1].end + 1;
  return out;
}

// A journal without v2 checkpoints: every line is hashed once, from the first segment.
// Older journals (v1 checkpoints) keep their unsigned tail, as before; one that never
// had a checkpoint is judged like any other.
Result<TreeRecovery> LegacyTree(Env& env, const std::vector<std::pair<uint64_t, std::string>>& segments,
                                const ScannedSegment& last, MerkleHasher& merkle) {
  CompactRange range;
  bool signed_before = false;
  LineHasher hasher;
  for (size_t i = 0; i + 1 < segments.size(); ++i) {
    Result<ScannedSegment> s = ScanSegment(env, segments[i].second, segments[i].first, hasher);
    if (!s.ok()) return s.status();
    for (const ScannedLine& line : s->lines) {
      signed_before = signed_before || line.kind == "checkpoint";
      range.Append(merkle.Leaf(LineOf(*s, line)), merkle);
    }
  }
  for (const ScannedLine& line : last.lines) signed_before = signed_before || line.kind == "checkpoint";
  if (!signed_before) {
    const uint64_t earlier_records = range.size();
    return JudgeUnsignedTail(last, earlier_records, false, std::move(range));
  }
  for (const ScannedLine& line : last.lines) range.Append(merkle.Leaf(LineOf(last, line)), merkle);
  return TreeRecovery{std::move(range), last.lines.size(), last.good_end};
}

// The key-rotated record of `line`, checked in itself.
Result<KeyRotation> RotationOf(const ScannedSegment& segment, const ScannedLine& line, const std::string& origin) {
  Result<nlohmann::json> json = RecordJson(LineOf(segment, line));
  Result<KeyRotation> rotation = json.ok() ? ParseKeyRotation(*json, origin) : Result<KeyRotation>(json.status());
  if (!rotation.ok()) {
    return Status(StatusCode::kDataLoss, "seq " + std::to_string(line.seq) + ": " + rotation.status().message() +
                                             "; nothing was changed: run gpufed audit verify");
  }
  return rotation;
}

// The keys of the walk. The key in force where it begins is the old key of its first
// key-rotated record that a checkpoint follows (each record is then checked against the
// key in force when it is met, and the walk must end with this controller's key signing
// over all of them), else this controller's key. `torn`: a key-rotated record no
// checkpoint follows, for the refusal's instruction.
struct WalkKeys {
  KeyInForce keys;
  std::optional<KeyRotation> torn;
};
Result<WalkKeys> KeysOfWalk(const std::vector<const ScannedSegment*>& walk, const Signer& signer,
                            const std::string& origin) {
  uint64_t last_checkpoint = 0;
  for (const ScannedSegment* segment : walk) {
    for (const ScannedLine& line : segment->lines) {
      if (line.kind == "checkpoint") last_checkpoint = line.seq;
    }
  }
  std::optional<KeyRotation> first, torn;
  for (const ScannedSegment* segment : walk) {
    for (const ScannedLine& line : segment->lines) {
      if (line.kind != "key-rotated" || (first && line.seq < last_checkpoint) || torn) continue;
      Result<KeyRotation> rotation = RotationOf(*segment, line, origin);
      if (!rotation.ok()) return rotation.status();
      (line.seq < last_checkpoint ? first : torn) = std::move(*rotation);
    }
  }
  Result<KeyInForce> keys = KeyInForce::Create(first ? first->old_key : signer.PublicKeyRaw());
  if (!keys.ok()) return keys.status();
  return WalkKeys{std::move(*keys), std::move(torn)};
}

Status Rotate(KeyInForce& keys, const ScannedSegment& segment, const ScannedLine& line, const std::string& origin) {
  Result<KeyRotation> rotation = RotationOf(segment, line, origin);
  if (!rotation.ok()) return rotation.status();
  Status rotated = keys.Rotate(std::move(*rotation));
  if (!rotated.ok()) return FailedPrecondition(rotated.message() + "; nothing was changed: run gpufed audit verify");
  return Status::Ok();
}

// Recovers the tree from the last segment's first v2 checkpoint (so that every later one
// is checked), else from the newest before it, and checks each checkpoint on the way:
// the key in force (this controller's, or an earlier one a key-rotated record hands over
// from) and origin, the tree of the records before it.
Result<TreeRecovery> RecoverTree(Env& env, const Signer& signer, const Signer* rotation_from, const std::string& origin,
                                 const std::vector<std::pair<uint64_t, std::string>>& segments,
                                 const ScannedSegment& last, MerkleHasher& merkle) {
  std::vector<ScannedSegment> earlier;  // newest first
  Result<int> start = FindCheckpoint(last, /*last=*/false);
  if (!start.ok()) return start.status();
  LineHasher hasher;
  for (size_t i = segments.size() - 1; *start < 0 && i-- > 0;) {
    Result<ScannedSegment> s = ScanSegment(env, segments[i].second, segments[i].first, hasher);
    if (!s.ok()) return s.status();
    start = FindCheckpoint(*s, /*last=*/true);
    if (!start.ok()) return start.status();
    // A segment this key signed the old way was written before any v2 checkpoint: the
    // search stops there instead of holding every segment of an older journal in memory
    // (nobody can forge such a signature without the key).
    if (*start < 0 && SignedTheOldWay(*s, signer)) break;
    earlier.push_back(std::move(*s));
  }
  if (*start < 0) return LegacyTree(env, segments, last, merkle);

  std::vector<const ScannedSegment*> walk;  // oldest first
  for (auto it = earlier.rbegin(); it != earlier.rend(); ++it) walk.push_back(&*it);
  walk.push_back(&last);
  Result<WalkKeys> walk_keys = KeysOfWalk(walk, signer, origin);
  if (!walk_keys.ok()) return walk_keys.status();
  KeyInForce* keys = &walk_keys->keys;

  CompactRange range, signed_range;
  uint64_t signed_head = 0;
  // The last checkpoint closes the journal: controller-stop before it, or a closed
  // journal's checkpoint and only key rotations since (rotate-key runs on a stopped
  // controller, and journals a torn tail it cut first).
  bool clean_close = false;
  bool only_rotations = false;  // since the last checkpoint, only key-rotated or journal-repaired
  std::string previous_kind;
  for (size_t w = 0; w < walk.size(); ++w) {
    const ScannedSegment& segment = *walk[w];
    for (size_t i = 0; i < segment.lines.size(); ++i) {
      const ScannedLine& line = segment.lines[i];
      if (line.kind == "key-rotated") GPUFED_RETURN_IF_ERROR(Rotate(*keys, segment, line, origin));
      if (w == 0 && i < static_cast<size_t>(*start)) {
        // Before the first checkpoint checked, only which key is in force matters.
        if (line.kind == "checkpoint") keys->Signed();
        continue;
      }
      Result<std::optional<MerkleCheckpoint>> cp = CheckpointOf(segment, line);
      if (!cp.ok()) return cp.status();
      if (cp->has_value()) {
        const MerkleCheckpoint& checkpoint = **cp;
        if (checkpoint.key_id != keys->key().key_id()) {
          return RefuseCheckpointKey(line.seq, checkpoint.key_id, *keys, signer.key_id(),
                                     walk_keys->torn ? &*walk_keys->torn : nullptr);
        }
        if (signed_head == 0) {
          Result<CompactRange> from = CompactRange::FromNodes(line.seq - 1, checkpoint.frontier);
          if (!from.ok()) {
            return Status(StatusCode::kDataLoss, "seq " + std::to_string(line.seq) + ": " + from.status().message());
          }
          range = std::move(*from);
        }
        Result<const NoteVerifier*> verifier = keys->NoteKey(origin);
        if (!verifier.ok()) return verifier.status();
        Status ok = CheckMerkleCheckpoint(line.seq, checkpoint, range, *verifier, merkle);
        if (!ok.ok()) return Status(ok.code(), ok.message() + "; nothing was changed: run gpufed audit verify");
        keys->Signed();
        signed_head = line.seq;
        clean_close = previous_kind == "controller-stop" || (clean_close && only_rotations);
        only_rotations = true;
      } else {
        only_rotations = only_rotations && (line.kind == "key-rotated" || line.kind == "journal-repaired");
      }
      previous_kind = line.kind;
      range.Append(merkle.Leaf(LineOf(segment, line)), merkle);
      if (line.seq == signed_head) signed_range = range;
    }
  }
  GPUFED_RETURN_IF_ERROR(
      CheckKeyAtHead(*keys, signer.key_id(), rotation_from != nullptr ? rotation_from->key_id() : ""));
  return JudgeUnsignedTail(last, signed_head, clean_close, std::move(signed_range));
}

}  // namespace

Result<JournalHead> FileJournalStorage::Recover(const RecoveryKeys& keys, MerkleHasher& merkle, RecoveryInfo* info) {
  Env* const env = options_.env;
  const std::string jdir = journal_dir();
  GPUFED_RETURN_IF_ERROR(MakePrivateFolders({options_.dir, jdir}));
  Result<std::unique_ptr<FileLock>> lock = env->LockFile(jdir + "/LOCK");
  if (!lock.ok()) return lock.status();
  lock_ = std::move(*lock);

  JournalHead head;
  Result<std::vector<std::pair<uint64_t, std::string>>> segments = ListSegments(*env, jdir);
  if (!segments.ok()) return segments.status();
  if (segments->empty()) return head;
  LineHasher hasher;
  Result<ScannedSegment> last = ScanSegment(*env, segments->back().second, segments->back().first, hasher);
  if (!last.ok()) return last.status();

  // Where the kept part of the last segment ends: after its last complete line, or
  // earlier when the tree's recovery cuts an unsigned commit.
  size_t cut = last->good_end;
  size_t kept_lines = last->lines.size();
  if (keys.signer != nullptr) {
    Result<TreeRecovery> tree =
        RecoverTree(*env, *keys.signer, keys.rotation_from, keys.origin, *segments, *last, merkle);
    if (!tree.ok()) return tree.status();
    head.tree = std::move(tree->range);
    kept_lines = tree->kept_lines;
    cut = tree->cut;
  }
  if (cut < last->text.size()) {
    info->dropped_lines = last->lines.size() - kept_lines + (last->good_end < last->text.size() ? 1 : 0);
    info->truncated_bytes = last->text.size() - cut;
    if (kept_lines < last->lines.size()) {
      info->first_dropped_seq = last->lines[kept_lines].seq;
      info->last_dropped_seq = last->lines.back().seq;
    }
    // Keep the cut bytes before cutting them off, so the repair loses nothing.
    const std::string qdir = options_.dir + "/quarantine";
    GPUFED_RETURN_IF_ERROR(MakePrivateFolders({qdir}));
    const std::string& path = last->path;
    info->quarantined = qdir + "/" + path.substr(path.rfind('/') + 1) + "." + std::to_string(cut) + ".torn";
    GPUFED_RETURN_IF_ERROR(WriteFileAtomic(*env, info->quarantined, std::string_view(last->text).substr(cut)));
    GPUFED_RETURN_IF_ERROR(env->Truncate(path, cut));
  }
  if (kept_lines == 0) {
    // Nothing of the last segment survived: remove it and continue the one before.
    GPUFED_RETURN_IF_ERROR(env->RemoveFile(last->path));
    GPUFED_RETURN_IF_ERROR(env->SyncDir(jdir));
    segments->pop_back();
    if (!segments->empty()) {
      Result<ScannedSegment> previous = ScanSegment(*env, segments->back().second, segments->back().first, hasher);
      if (!previous.ok()) return previous.status();
      if (previous->lines.empty() || previous->good_end != previous->text.size()) {
        return Status(StatusCode::kDataLoss, previous->path + ": its last record is damaged");
      }
      head.last_seq = previous->lines.back().seq;
      head.last_hash = previous->lines.back().hash;
      Result<std::unique_ptr<WritableFile>> file = env->NewWritableFile(previous->path, false);
      if (!file.ok()) return file.status();
      segment_ = std::move(*file);
      segment_size_ = previous->text.size();
    }
  } else {
    head.last_seq = last->lines[kept_lines - 1].seq;
    head.last_hash = last->lines[kept_lines - 1].hash;
    Result<std::unique_ptr<WritableFile>> file = env->NewWritableFile(last->path, false);
    if (!file.ok()) return file.status();
    segment_ = std::move(*file);
    segment_size_ = cut;
    const ScannedLine* newest_checkpoint = nullptr;
    for (size_t i = 0; i < kept_lines; ++i) {
      const ScannedLine& line = last->lines[i];
      head.since_checkpoint = line.kind == "checkpoint" ? 0 : head.since_checkpoint + 1;
      if (line.kind == "checkpoint") newest_checkpoint = &line;
    }
    if (newest_checkpoint != nullptr) {
      head.last_checkpoint = {newest_checkpoint->seq, newest_checkpoint->time_micros, ""};
      Result<std::optional<MerkleCheckpoint>> cp = CheckpointOf(*last, *newest_checkpoint);
      if (cp.ok() && cp->has_value()) head.last_checkpoint.note = (*cp)->note_text;
    }
  }
  info->last_seq = head.last_seq;
  info->segments = static_cast<int>(segments->size());
  return head;
}

}  // namespace gpufed::audit
