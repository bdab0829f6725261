#include "controller/audit/proofs.h"

#include "controller/audit/checkpoint_record.h"
#include "controller/audit/file_journal_storage.h"
#include "controller/audit/journal.h"
#include "controller/audit/reader.h"
#include "controller/audit/verify.h"

namespace gpufed::audit {
namespace {

nlohmann::json HashList(const std::vector<MerkleHash>& hashes) {
  nlohmann::json out = nlohmann::json::array();
  for (const MerkleHash& h : hashes) out.push_back(MerkleHashBase64(h));
  return out;
}

Status Bad(const std::string& what) { return Status(StatusCode::kDataLoss, what); }

// A member of the proof of the given type, or InvalidArgument naming it.
Result<uint64_t> Count(const nlohmann::json& proof, const char* key) {
  auto it = proof.find(key);
  if (it == proof.end() || !it->is_number_unsigned())
    return InvalidArgument(std::string("proof: ") + key + " is not a count");
  return it->get<uint64_t>();
}
Result<std::string> Text(const nlohmann::json& proof, const char* key) {
  auto it = proof.find(key);
  if (it == proof.end() || !it->is_string()) return InvalidArgument(std::string("proof: ") + key + " is not a string");
  return it->get<std::string>();
}
Result<std::vector<MerkleHash>> Hashes(const nlohmann::json& proof) {
  auto it = proof.find("proof");
  if (it == proof.end() || !it->is_array() || it->size() > 128)
    return InvalidArgument("proof: proof is not a hash list");
  std::vector<MerkleHash> out;
  for (const nlohmann::json& h : *it) {
    Result<MerkleHash> hash = h.is_string() ? MerkleHashFromBase64(h.get<std::string>())
                                            : Result<MerkleHash>(InvalidArgument("not a string"));
    if (!hash.ok()) return InvalidArgument("proof: a proof hash: " + hash.status().message());
    out.push_back(*hash);
  }
  return out;
}

// The checkpoint a proof is checked against, its signature verified.
Result<LogCheckpoint> TrustedCheckpoint(const std::string& text, const ProofKey& key) {
  Result<Note> note = ParseNote(text);
  if (!note.ok()) return InvalidArgument("checkpoint: " + note.status().message());
  Result<LogCheckpoint> body = ParseCheckpointBody(note->body);
  if (!body.ok()) return InvalidArgument("checkpoint: " + body.status().message());
  std::optional<NoteVerifier> from_pem;
  if (key.pem != nullptr) {
    Result<NoteVerifier> v = NoteVerifier::FromPublicKey(body->origin, *key.pem);
    if (!v.ok()) return v.status();
    from_pem.emplace(std::move(*v));
  }
  const NoteVerifier* verifier = key.vkey ? &*key.vkey : from_pem ? &*from_pem : nullptr;
  if (verifier == nullptr) return InvalidArgument("a key is needed to trust a checkpoint");
  if (body->origin != verifier->name())
    return Bad("the checkpoint is of log '" + body->origin + "', not '" + verifier->name() + "'");
  if (Status signed_by = verifier->Verify(*note); !signed_by.ok()) {
    // Another key of this log signed it: after a key rotation, the key in force then.
    for (const NoteSignature& sig : note->signatures) {
      if (sig.name != verifier->name() || sig.key_id == verifier->key_id()) continue;
      return Bad(signed_by.message() + "; the checkpoint is signed by key " + NoteKeyIdHex(sig.key_id) +
                 " of this log: after a key rotation, give the key in force at its tree size (gpufed audit vkey "
                 "prints the current one)");
    }
    return signed_by;
  }
  return body;
}

}  // namespace

Result<JournalProver> JournalProver::Load(Env& env, const std::string& audit_dir) {
  if (!env.FileExists(audit_dir + "/journal")) return NotFound(audit_dir + " holds no journal/ folder");
  Result<std::vector<std::pair<uint64_t, std::string>>> segments = ListSegments(env, audit_dir + "/journal");
  if (!segments.ok()) return segments.status();
  if (!segments->empty() && segments->front().first > 1) {
    // A proof hashes every leaf from seq 1: the archived ones too.
    return FailedPrecondition("the journal begins at seq " + std::to_string(segments->front().first) +
                              " (the records before it are archived): give its archive, --archive DIR");
  }
  return LoadLines(
      [&](const std::function<Status(std::string_view)>& fn) { return ForEachJournalLine(env, audit_dir, fn); },
      [env = &env, audit_dir]() -> std::unique_ptr<JournalRecordSource> {
        return std::make_unique<JournalReader>(env, audit_dir);
      });
}

Result<JournalProver> JournalProver::LoadLines(const LineScan& for_each_line, JournalSourceFactory open_source) {
  JournalProver prover(std::move(open_source));
  ChainVerifier chain(VerifyOptions{});
  std::vector<MerkleHash> leaves;
  MerkleHasher hasher;
  Status read = for_each_line([&](std::string_view line) -> Status {
    if (!chain.AddLine(line)) return Status::Ok();
    if (line.find("\"kind\":\"checkpoint\"") != std::string_view::npos) {
      Result<nlohmann::json> json = RecordJson(line);
      if (json.ok()) {
        Result<std::optional<MerkleCheckpoint>> cp = ParseMerkleCheckpoint(*json);
        if (cp.ok() && cp->has_value()) prover.notes_[(*cp)->checkpoint.size] = (*cp)->note_text;
      }
    }
    leaves.push_back(hasher.Leaf(line));
    return Status::Ok();
  });
  GPUFED_RETURN_IF_ERROR(read);
  VerifyReport report = chain.Finish();
  if (!report.ok) {
    return Bad("the journal fails verification at seq " + std::to_string(report.first_bad_seq) + ": " + report.error);
  }
  leaves.resize(report.last_seq);
  prover.source_ = std::make_unique<MemoryNodeSource>(std::move(leaves));
  return prover;
}

Result<std::string> JournalProver::RecordLine(uint64_t seq) {
  std::unique_ptr<JournalRecordSource> reader = open_source_();
  GPUFED_RETURN_IF_ERROR(reader->Seek(seq));
  std::vector<JournalEntry> entries;
  Result<size_t> n = reader->Next(1, seq, &entries);
  if (!n.ok()) return n.status();
  if (entries.empty() || entries[0].seq != seq) return NotFound("no record seq " + std::to_string(seq));
  return entries[0].line;
}

Result<nlohmann::json> JournalProver::Inclusion(uint64_t seq, uint64_t tree_size, const std::string& checkpoint_note) {
  if (seq == 0 || seq > size()) {
    return NotFound("the journal holds seq 1 to " + std::to_string(size()) + ", not " + std::to_string(seq));
  }
  std::string note;
  if (!checkpoint_note.empty()) {
    Result<Note> parsed = ParseNote(checkpoint_note);
    Result<LogCheckpoint> body =
        parsed.ok() ? ParseCheckpointBody(parsed->body) : Result<LogCheckpoint>(parsed.status());
    if (!body.ok()) return InvalidArgument("--checkpoint: " + body.status().message());
    if (body->size > size())
      return NotFound("--checkpoint is of " + std::to_string(body->size) + " records; this journal holds " +
                      std::to_string(size()));
    Result<MerkleHash> root = TreeRoot(body->size, *source_, hasher_);
    if (!root.ok()) return root.status();
    if (*root != body->root)
      return Bad("this journal's tree of " + std::to_string(body->size) + " records differs from --checkpoint");
    tree_size = body->size;
    note = checkpoint_note;
  } else if (tree_size == 0) {
    auto newest = notes_.rbegin();
    if (newest == notes_.rend() || newest->first < seq) {
      return NotFound("no signed checkpoint covers seq " + std::to_string(seq) + " yet");
    }
    tree_size = newest->first;
  }
  if (tree_size < seq || tree_size > size()) {
    return InvalidArgument("a tree of " + std::to_string(tree_size) + " records does not hold seq " +
                           std::to_string(seq));
  }
  if (note.empty()) {
    auto it = notes_.find(tree_size);
    if (it != notes_.end()) note = it->second;
  }
  Result<std::vector<MerkleHash>> proof = InclusionProof(seq - 1, tree_size, *source_, hasher_);
  if (!proof.ok()) return proof.status();
  Result<std::string> record = RecordLine(seq);
  if (!record.ok()) return record.status();
  nlohmann::json out = {{"type", "inclusion"},   {"seq", seq},        {"leafIndex", seq - 1},
                        {"treeSize", tree_size}, {"record", *record}, {"proof", HashList(*proof)}};
  out["checkpoint"] = note.empty() ? nlohmann::json(nullptr) : nlohmann::json(note);
  return out;
}

Result<nlohmann::json> JournalProver::Consistency(uint64_t from_size, uint64_t to_size) {
  if (to_size == 0) to_size = notes_.empty() ? size() : notes_.rbegin()->first;
  if (to_size > size()) return NotFound("the journal holds " + std::to_string(size()) + " records");
  Result<std::vector<MerkleHash>> proof = ConsistencyProof(from_size, to_size, *source_, hasher_);
  if (!proof.ok()) return proof.status();
  Result<MerkleHash> from_root = TreeRoot(from_size, *source_, hasher_);
  Result<MerkleHash> to_root = TreeRoot(to_size, *source_, hasher_);
  if (!from_root.ok() || !to_root.ok()) return Internal("the tree's roots could not be computed");
  nlohmann::json out = {{"type", "consistency"},
                        {"fromSize", from_size},
                        {"toSize", to_size},
                        {"fromRoot", MerkleHashBase64(*from_root)},
                        {"toRoot", MerkleHashBase64(*to_root)},
                        {"proof", HashList(*proof)}};
  auto it = notes_.find(to_size);
  out["checkpoint"] = it == notes_.end() ? nlohmann::json(nullptr) : nlohmann::json(it->second);
  return out;
}

Result<MerkleHash> JournalProver::Root(uint64_t tree_size) {
  if (tree_size > size()) return NotFound("the journal holds " + std::to_string(size()) + " records");
  return TreeRoot(tree_size, *source_, hasher_);
}

Result<ProofCheck> VerifyProof(const nlohmann::json& proof, const ProofKey& key, const std::string& checkpoint_note,
                               const std::string& old_note) {
  if (!proof.is_object()) return InvalidArgument("a proof is a JSON object");
  Result<std::string> type = Text(proof, "type");
  if (!type.ok()) return type.status();
  Result<std::vector<MerkleHash>> hashes = Hashes(proof);
  if (!hashes.ok()) return hashes.status();
  std::string note = checkpoint_note;
  if (note.empty() && proof.contains("checkpoint") && proof["checkpoint"].is_string()) note = proof["checkpoint"];
  MerkleHasher hasher;
  if (*type == "inclusion") {
    Result<uint64_t> seq = Count(proof, "seq"), index = Count(proof, "leafIndex"), size = Count(proof, "treeSize");
    Result<std::string> record = Text(proof, "record");
    for (const Status& s : {seq.status(), index.status(), size.status(), record.status()}) GPUFED_RETURN_IF_ERROR(s);
    if (*seq == 0 || *index != *seq - 1) return Bad("leafIndex is not seq - 1");
    if (note.empty()) return InvalidArgument("the proof carries no checkpoint: pass --checkpoint");
    Result<LogCheckpoint> cp = TrustedCheckpoint(note, key);
    if (!cp.ok()) return cp.status();
    if (cp->size != *size)
      return Bad("the checkpoint is of " + std::to_string(cp->size) + " records, the proof of " +
                 std::to_string(*size));
    GPUFED_RETURN_IF_ERROR(VerifyInclusion(*index, *size, hasher.Leaf(*record), *hashes, cp->root, hasher));
    return ProofCheck{"record seq " + std::to_string(*seq) + " is in the signed tree of " + std::to_string(*size) +
                      " records of " + cp->origin};
  }
  if (*type == "consistency") {
    Result<uint64_t> from = Count(proof, "fromSize"), to = Count(proof, "toSize");
    Result<std::string> from_root_text = Text(proof, "fromRoot"), to_root_text = Text(proof, "toRoot");
    for (const Status& s : {from.status(), to.status(), from_root_text.status(), to_root_text.status()})
      GPUFED_RETURN_IF_ERROR(s);
    Result<MerkleHash> from_root = MerkleHashFromBase64(*from_root_text), to_root = MerkleHashFromBase64(*to_root_text);
    if (!from_root.ok() || !to_root.ok()) return InvalidArgument("proof: fromRoot and toRoot are base64 hashes");
    std::string trusted;
    if (!note.empty()) {
      Result<LogCheckpoint> cp = TrustedCheckpoint(note, key);
      if (!cp.ok()) return cp.status();
      if (cp->size != *to || cp->root != *to_root) return Bad("the checkpoint does not sign toSize and toRoot");
      trusted = " (new tree signed by " + cp->origin + ")";
    }
    if (!old_note.empty()) {
      Result<LogCheckpoint> old = TrustedCheckpoint(old_note, key);
      if (!old.ok()) return old.status();
      if (old->size != *from || old->root != *from_root) return Bad("--old does not sign fromSize and fromRoot");
      trusted += " (old tree signed)";
    }
    GPUFED_RETURN_IF_ERROR(VerifyConsistency(*from, *to, *from_root, *to_root, *hashes, hasher));
    return ProofCheck{"the tree of " + std::to_string(*to) + " records extends the tree of " + std::to_string(*from) +
                      trusted};
  }
  return InvalidArgument("proof: type is neither inclusion nor consistency");
}

}  // namespace gpufed::audit
