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
#include "controller/audit/checkpoint_record.h"
#include "controller/audit/file_journal_storage.h"
#include "controller/audit/journal_checks.h"
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

// Reads `path` and scans it (journal_checks.h).
Result<ScannedLines> ScanSegment(Env& env, const std::string& path, uint64_t first_seq, LineHasher& hasher) {
  Result<std::string> text = env.ReadFile(path);
  if (!text.ok()) return text.status();
  return ScanLines(path, std::move(*text), first_seq, hasher);
}

// True when a v1 checkpoint of `segment` (a signature over the chain head) verifies with
// `signer`'s key.
bool SignedTheOldWay(const ScannedLines& segment, const Signer& signer) {
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

// A journal without v2 checkpoints: every line is hashed once, from the first segment.
// Older journals (v1 checkpoints) keep their unsigned tail, as before; one that never
// had a checkpoint is judged like any other.
Result<TreeRecovery> LegacyTree(Env& env, const std::vector<std::pair<uint64_t, std::string>>& segments,
                                const ScannedLines& last, MerkleHasher& merkle) {
  CompactRange range;
  bool signed_before = false;
  LineHasher hasher;
  for (size_t i = 0; i + 1 < segments.size(); ++i) {
    Result<ScannedLines> s = ScanSegment(env, segments[i].second, segments[i].first, hasher);
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

// Recovers the tree from the last segment's first v2 checkpoint (so that every later one
// is checked), else from the newest before it, and checks each checkpoint on the way:
// the key in force (this controller's, or an earlier one a key-rotated record hands over
// from) and origin, the tree of the records before it.
Result<TreeRecovery> RecoverTree(Env& env, const Signer& signer, const Signer* rotation_from, const std::string& origin,
                                 const std::vector<std::pair<uint64_t, std::string>>& segments,
                                 const ScannedLines& last, MerkleHasher& merkle) {
  std::vector<ScannedLines> earlier;  // newest first
  Result<int> start = FindCheckpoint(last, /*last=*/false);
  if (!start.ok()) return start.status();
  LineHasher hasher;
  for (size_t i = segments.size() - 1; *start < 0 && i-- > 0;) {
    Result<ScannedLines> s = ScanSegment(env, segments[i].second, segments[i].first, hasher);
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

  std::vector<const ScannedLines*> walk;  // oldest first
  for (auto it = earlier.rbegin(); it != earlier.rend(); ++it) walk.push_back(&*it);
  walk.push_back(&last);
  return RecoverTreeFrom(walk, *start, signer, rotation_from, origin, merkle);
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
  Result<ScannedLines> last = ScanSegment(*env, segments->back().second, segments->back().first, hasher);
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
      Result<ScannedLines> previous = ScanSegment(*env, segments->back().second, segments->back().first, hasher);
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
    HeadOfKeptLines(*last, kept_lines, &head);
    Result<std::unique_ptr<WritableFile>> file = env->NewWritableFile(last->path, false);
    if (!file.ok()) return file.status();
    segment_ = std::move(*file);
    segment_size_ = cut;
  }
  info->last_seq = head.last_seq;
  info->segments = static_cast<int>(segments->size());
  return head;
}

}  // namespace gpufed::audit
