#include "controller/audit/verify.h"

#include <charconv>

#include "controller/audit/checkpoint_record.h"
#include "controller/audit/file_journal_storage.h"
#include "controller/audit/journal.h"
#include "controller/audit/reader.h"
#include "controller/audit/record.h"

namespace gpufed::audit {
namespace {

constexpr std::string_view kRecordStart = "{\"seq\":";

std::array<unsigned char, 32> HexToBytes(std::string_view hex) {
  std::array<unsigned char, 32> out{};
  auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  for (size_t i = 0; i < 32 && 2 * i + 1 < hex.size(); ++i) {
    out[i] = static_cast<unsigned char>(nibble(hex[2 * i]) << 4 | nibble(hex[2 * i + 1]));
  }
  return out;
}

// A checkpoint's string member; "" when absent or of another type. (json::value() throws
// type_error for a member of the wrong type, and a forged checkpoint with a valid hash
// may hold anything: fuzz_audit_record.)
std::string StringMember(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// The seq a damaged line claims, when its header still reads as a number.
uint64_t ClaimedSeq(std::string_view record) {
  uint64_t seq = 0;
  record.remove_prefix(std::min(record.size(), kRecordStart.size()));
  std::from_chars(record.data(), record.data() + record.size(), seq);
  return seq;
}

}  // namespace

ChainVerifier::ChainVerifier(const VerifyOptions& options) : options_(options), last_hash_(kGenesisHash) {
  if (options_.first_seq > 1 && !options_.receiver_copy) {
    report_.first_seq = options_.first_seq;
    report_.last_seq = options_.first_seq - 1;
    last_hash_.clear();  // the archived record's hash: taken from the first record
    tree_known_ = false;
  }
  InitKeys();
}

bool ChainVerifier::Fail(uint64_t seq, std::string message) {
  report_.ok = false;
  report_.first_bad_seq = seq;
  report_.error = std::move(message);
  return false;
}

bool ChainVerifier::AddLine(std::string_view line) {
  if (!report_.ok) return false;
  ++report_.line_number;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::string_view record = line;
  Result<ParsedLine> parsed = Status(StatusCode::kDataLoss, "not an audit record");
  if (options_.receiver_copy) {
    size_t start = line.find(kRecordStart);
    if (start == std::string_view::npos) {
      ++report_.foreign_lines;
      return true;
    }
    record = line.substr(start);
    parsed = ParseRecordLine(record, &hasher_);
    // A receiver killed mid-write leaves a partial record that the next line continues:
    // the partial part is ignored when a complete record follows on the same line.
    for (size_t next = start; !parsed.ok();) {
      next = line.find(kRecordStart, next + 1);
      if (next == std::string_view::npos) break;
      Result<ParsedLine> later = ParseRecordLine(line.substr(next), &hasher_);
      if (later.ok()) {
        ++report_.torn_fragments;
        record = line.substr(next);
        parsed = std::move(later);
      }
    }
  } else {
    parsed = ParseRecordLine(line, &hasher_);
  }
  if (!parsed.ok()) {
    uint64_t claimed = ClaimedSeq(record);
    uint64_t bad = claimed != 0 && claimed <= report_.last_seq + 1 ? claimed : report_.last_seq + 1;
    return Fail(bad, "line " + std::to_string(report_.line_number) + ": " + parsed.status().message());
  }
  const RecordHeader& h = parsed->header;
  const uint64_t expected = report_.last_seq + 1;
  if (h.seq < expected) {
    if (options_.receiver_copy && h.seq <= hashes_.size() && hashes_[h.seq - 1] == HexToBytes(parsed->hash)) {
      ++report_.duplicates;
      return true;
    }
    return Fail(h.seq, "seq " + std::to_string(h.seq) + " appears again after seq " + std::to_string(report_.last_seq) +
                           (options_.receiver_copy ? " with different content" : " (duplicated or reordered)"));
  }
  if (h.seq > expected) {
    return Fail(expected, "seq " + std::to_string(expected) + " is missing (next record is seq " +
                              std::to_string(h.seq) + "): deleted or reordered");
  }
  if (last_hash_.empty()) last_hash_ = report_.first_prev = std::string(h.prev);
  if (h.prev != last_hash_) {
    return Fail(h.seq, "seq " + std::to_string(h.seq) + " does not follow seq " + std::to_string(report_.last_seq) +
                           " (prev hash mismatch): replaced or reordered");
  }
  if (h.kind == "checkpoint" && !CheckCheckpoint(h.seq, record, h.prev)) return false;
  if (h.kind == "checkpoint") report_.last_checkpoint_seq = h.seq;
  if (h.kind == "controller-start") controller_journal_ = true;
  if (h.kind == "journal-repaired") NoteRepair(h.seq, record);
  if (h.kind == "key-rotated" && !NoteRotation(h.seq, record)) return false;
  TrackClose(h.kind);
  last_kind_ = h.kind;
  report_.last_seq = h.seq;
  ++report_.records;
  last_hash_ = std::string(parsed->hash);
  if (options_.receiver_copy) hashes_.push_back(HexToBytes(parsed->hash));
  if (tree_known_) range_.Append(merkle_hasher_.Leaf(record), merkle_hasher_);
  return true;
}

bool ChainVerifier::CheckCheckpoint(uint64_t seq, std::string_view line, const std::string& prev) {
  ++report_.checkpoints;
  Result<nlohmann::json> j = RecordJson(line);
  if (!j.ok()) return Fail(seq, "checkpoint seq " + std::to_string(seq) + " is not JSON");
  const nlohmann::json& cp = *j;
  if (cp.contains("format")) return CheckMerkle(seq, cp);
  if (!cp.contains("signedSeq") || !cp["signedSeq"].is_number_unsigned() ||
      cp["signedSeq"].get<uint64_t>() != seq - 1 || StringMember(cp, "signedHash") != prev) {
    return Fail(seq, "checkpoint seq " + std::to_string(seq) + " does not sign the record before it");
  }
  if (checking_signatures()) {
    const SignatureVerifier* key = KeyFor(seq, StringMember(cp, "keyId"));
    if (key == nullptr) return false;
    if (!key->Verify(CheckpointMessage(seq - 1, prev), StringMember(cp, "sig"))) {
      return Fail(seq, "checkpoint seq " + std::to_string(seq) + ": bad signature");
    }
    ++report_.signatures_verified;
    report_.last_signed_seq = seq;
  }
  NoteCheckpoint(seq, StringMember(cp, "keyId"));
  return true;
}

bool ChainVerifier::CheckMerkle(uint64_t seq, const nlohmann::json& record) {
  const std::string at = "checkpoint seq " + std::to_string(seq);
  Result<std::optional<MerkleCheckpoint>> parsed = ParseMerkleCheckpoint(record);
  if (!parsed.ok() || !parsed->has_value()) {
    return Fail(seq, at + ": " + (parsed.ok() ? "not a signed tree" : parsed.status().message()));
  }
  const MerkleCheckpoint& cp = **parsed;
  if (!tree_known_) {
    // A journal that begins after seq 1: the tree of the archived records is this
    // checkpoint's frontier, which CheckMerkleCheckpoint holds to its signed root.
    Result<CompactRange> from = CompactRange::FromNodes(seq - 1, cp.frontier);
    if (!from.ok()) return Fail(seq, at + ": " + from.status().message());
    range_ = std::move(*from);
    tree_known_ = true;
  }
  if (report_.log_origin.empty()) report_.log_origin = cp.checkpoint.origin;
  if (cp.checkpoint.origin != report_.log_origin) {
    return Fail(seq, at + " is of log '" + cp.checkpoint.origin + "', not '" + report_.log_origin + "'");
  }
  const NoteVerifier* verifier = nullptr;
  if (checking_signatures()) {
    if (KeyFor(seq, cp.key_id) == nullptr) return false;
    Result<const NoteVerifier*> v = keys_->NoteKey(report_.log_origin);
    if (!v.ok()) return Fail(seq, at + ": " + v.status().message());
    verifier = *v;
  }
  Status ok = CheckMerkleCheckpoint(seq, cp, range_, verifier, merkle_hasher_);
  if (!ok.ok()) return Fail(seq, ok.message());
  if (checking_signatures()) {
    ++report_.signatures_verified;
    report_.last_signed_seq = seq;
  }
  report_.last_note_key_id = cp.key_id;
  report_.last_note = cp.note_text;
  NoteCheckpoint(seq, cp.key_id);
  return true;
}

void ChainVerifier::NoteRepair(uint64_t seq, std::string_view line) {
  Result<nlohmann::json> j = RecordJson(line);
  if (!j.ok()) return;
  auto count = [&](const char* key) -> uint64_t {
    auto it = j->find(key);
    return it != j->end() && it->is_number_unsigned() ? it->get<uint64_t>() : 0;
  };
  report_.repairs.push_back({seq, count("afterSeq"), count("tornBytes"), count("droppedFromSeq"), count("droppedToSeq"),
                             StringMember(*j, "quarantine")});
}

VerifyReport ChainVerifier::Finish() {
  if (tree_known_) {
    report_.tree_size = range_.size();
    report_.root_hash = MerkleHashHex(range_.Root(merkle_hasher_));
  }
  if (report_.ok && options_.receiver_copy && report_.records == 0) {
    report_.ok = false;
    report_.first_bad_seq = 1;
    report_.error = "no audit records found";
  }
  report_.unclosed = report_.ok && controller_journal_ && !(last_kind_ == "checkpoint" && closed_);
  if (report_.ok && keys_) {
    for (const SignatureVerifier* key : options_.more_keys) {
      if (ids_in_force_.count(key->key_id()) == 0) report_.keys_never_in_force.push_back(key->key_id());
    }
  }
  return report_;
}

Result<VerifyReport> VerifyJournalDir(Env& env, const std::string& audit_dir, const VerifyOptions& options) {
  if (!env.FileExists(audit_dir + "/journal")) return NotFound(audit_dir + " holds no journal/ folder");
  Result<std::vector<std::pair<uint64_t, std::string>>> segments = ListSegments(env, audit_dir + "/journal");
  if (!segments.ok()) return segments.status();
  VerifyOptions from_first = options;
  if (!segments->empty()) from_first.first_seq = segments->front().first;
  ChainVerifier verifier(from_first);
  Status s = ForEachJournalLine(env, audit_dir, [&](std::string_view line) {
    verifier.AddLine(line);
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return verifier.Finish();
}

Result<VerifyReport> VerifyReceiverFile(Env& env, const std::string& path, VerifyOptions options) {
  options.receiver_copy = true;
  Result<std::unique_ptr<SequentialFile>> file = env.NewSequentialFile(path);
  if (!file.ok()) return file.status();
  ChainVerifier verifier(options);
  std::string buffer;
  std::vector<char> chunk(size_t{1} << 20);
  for (;;) {
    Result<size_t> n = (*file)->Read(chunk.data(), chunk.size());
    if (!n.ok()) return n.status();
    if (*n == 0) break;
    buffer.append(chunk.data(), *n);
    size_t start = 0;
    for (size_t nl; (nl = buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
      verifier.AddLine(std::string_view(buffer).substr(start, nl - start));
    }
    buffer.erase(0, start);
  }
  if (!buffer.empty()) verifier.AddLine(buffer);
  return verifier.Finish();
}

}  // namespace gpufed::audit
