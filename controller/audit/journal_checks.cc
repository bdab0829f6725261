// The checks of journal_checks.h, moved here from the file journal's recovery so that
// every storage's Recover makes them the same way.
#include "controller/audit/journal_checks.h"

#include <set>

#include "controller/audit/key_in_force.h"

namespace gpufed::audit {
namespace {

// The key-rotated record of `line`, checked in itself.
Result<KeyRotation> RotationOf(const ScannedLines& segment, const ScannedLine& line, const std::string& origin) {
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
Result<WalkKeys> KeysOfWalk(const std::vector<const ScannedLines*>& walk, const Signer& signer,
                            const std::string& origin) {
  uint64_t last_checkpoint = 0;
  for (const ScannedLines* segment : walk) {
    for (const ScannedLine& line : segment->lines) {
      if (line.kind == "checkpoint") last_checkpoint = line.seq;
    }
  }
  std::optional<KeyRotation> first, torn;
  for (const ScannedLines* segment : walk) {
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

Status Rotate(KeyInForce& keys, const ScannedLines& segment, const ScannedLine& line, const std::string& origin) {
  Result<KeyRotation> rotation = RotationOf(segment, line, origin);
  if (!rotation.ok()) return rotation.status();
  Status rotated = keys.Rotate(std::move(*rotation));
  if (!rotated.ok()) return FailedPrecondition(rotated.message() + "; nothing was changed: run gpufed audit verify");
  return Status::Ok();
}

}  // namespace

Result<ScannedLines> ScanLines(std::string path, std::string text, uint64_t first_seq, LineHasher& hasher) {
  ScannedLines out;
  out.path = std::move(path);
  out.text = std::move(text);
  std::string_view data = out.text;
  uint64_t seq = first_seq - 1;
  for (size_t pos = 0; pos < data.size();) {
    size_t nl = data.find('\n', pos);
    if (nl == std::string_view::npos) break;  // a torn tail
    Result<ParsedLine> line = ParseRecordLine(data.substr(pos, nl - pos), &hasher);
    if (!line.ok() || line->header.seq != seq + 1 ||
        (!out.lines.empty() && line->header.prev != out.lines.back().hash)) {
      return Status(StatusCode::kDataLoss, out.path + ": damaged record at byte " + std::to_string(pos) +
                                               " (after seq " + std::to_string(seq) +
                                               "); nothing was changed: run gpufed audit verify");
    }
    seq = line->header.seq;
    out.lines.push_back({pos, nl, seq, line->header.time_micros, line->header.kind, std::string(line->hash)});
    pos = nl + 1;
    out.good_end = pos;
  }
  return out;
}

std::string_view LineOf(const ScannedLines& lines, const ScannedLine& line) {
  return std::string_view(lines.text).substr(line.begin, line.end - line.begin);
}

Result<std::optional<MerkleCheckpoint>> CheckpointOf(const ScannedLines& lines, const ScannedLine& line) {
  if (line.kind != "checkpoint") return std::optional<MerkleCheckpoint>();
  Result<nlohmann::json> json = RecordJson(LineOf(lines, line));
  if (!json.ok()) return json.status();
  Result<std::optional<MerkleCheckpoint>> checkpoint = ParseMerkleCheckpoint(*json);
  if (!checkpoint.ok()) {
    return Status(StatusCode::kDataLoss, "seq " + std::to_string(line.seq) + ": " + checkpoint.status().message());
  }
  return checkpoint;
}

Result<int> FindCheckpoint(const ScannedLines& lines, bool last) {
  const int n = static_cast<int>(lines.lines.size());
  for (int k = 0; k < n; ++k) {
    const int i = last ? n - 1 - k : k;
    Result<std::optional<MerkleCheckpoint>> cp = CheckpointOf(lines, lines.lines[i]);
    if (!cp.ok()) return cp.status();
    if (cp->has_value()) return i;
  }
  return -1;
}

Result<TreeRecovery> JudgeUnsignedTail(const ScannedLines& last, uint64_t signed_head, bool clean_close,
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

Result<TreeRecovery> RecoverTreeFrom(const std::vector<const ScannedLines*>& walk, int start, const Signer& signer,
                                     const Signer* rotation_from, const std::string& origin, MerkleHasher& merkle) {
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
    const ScannedLines& segment = *walk[w];
    for (size_t i = 0; i < segment.lines.size(); ++i) {
      const ScannedLine& line = segment.lines[i];
      if (line.kind == "key-rotated") GPUFED_RETURN_IF_ERROR(Rotate(*keys, segment, line, origin));
      if (w == 0 && i < static_cast<size_t>(start)) {
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
  return JudgeUnsignedTail(*walk.back(), signed_head, clean_close, std::move(signed_range));
}

void HeadOfKeptLines(const ScannedLines& last, size_t kept_lines, JournalHead* head) {
  head->last_seq = last.lines[kept_lines - 1].seq;
  head->last_hash = last.lines[kept_lines - 1].hash;
  head->since_checkpoint = 0;
  const ScannedLine* newest_checkpoint = nullptr;
  for (size_t i = 0; i < kept_lines; ++i) {
    const ScannedLine& line = last.lines[i];
    head->since_checkpoint = line.kind == "checkpoint" ? 0 : head->since_checkpoint + 1;
    if (line.kind == "checkpoint") newest_checkpoint = &line;
  }
  if (newest_checkpoint == nullptr) return;
  head->last_checkpoint = {newest_checkpoint->seq, newest_checkpoint->time_micros, ""};
  Result<std::optional<MerkleCheckpoint>> cp = CheckpointOf(last, *newest_checkpoint);
  if (cp.ok() && cp->has_value()) head->last_checkpoint.note = (*cp)->note_text;
}

}  // namespace gpufed::audit
