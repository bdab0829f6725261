#include "controller/audit/checkpoint_record.h"

namespace gpufed::audit {
namespace {

Status Malformed(const std::string& what) { return InvalidArgument("checkpoint: " + what); }

}  // namespace

nlohmann::json MerkleCheckpointPayload(const NoteSigner& signer, const std::string& key_id, const CompactRange& range,
                                       MerkleHasher& hasher) {
  const MerkleHash root = range.Root(hasher);
  Note note{CheckpointBody({signer.name(), range.size(), root, {}}), {}};
  note.signatures.push_back(signer.Sign(note.body));
  nlohmann::json frontier = nlohmann::json::array();
  for (const MerkleHash& node : range.nodes()) frontier.push_back(MerkleHashBase64(node));
  return {{"format", 2},
          {"keyId", key_id},
          {"note", FormatNote(note)},
          {"treeSize", range.size()},
          {"rootHash", MerkleHashHex(root)},
          {"frontier", std::move(frontier)}};
}

Result<std::optional<MerkleCheckpoint>> ParseMerkleCheckpoint(const nlohmann::json& record) {
  auto format = record.find("format");
  if (format == record.end()) return std::optional<MerkleCheckpoint>();
  if (!format->is_number_unsigned() || format->get<uint64_t>() != 2) return Malformed("unknown format");
  MerkleCheckpoint out;
  auto key_id = record.find("keyId");
  auto note = record.find("note");
  auto size = record.find("treeSize");
  auto root = record.find("rootHash");
  auto frontier = record.find("frontier");
  if (key_id == record.end() || !key_id->is_string()) return Malformed("keyId is not a string");
  if (note == record.end() || !note->is_string()) return Malformed("note is not a string");
  if (size == record.end() || !size->is_number_unsigned()) return Malformed("treeSize is not a count");
  if (root == record.end() || !root->is_string()) return Malformed("rootHash is not a string");
  if (frontier == record.end() || !frontier->is_array() || frontier->size() > 64) {
    return Malformed("frontier is not a list of at most 64 hashes");
  }
  out.key_id = key_id->get<std::string>();
  out.note_text = note->get<std::string>();
  Result<Note> parsed = ParseNote(out.note_text);
  if (!parsed.ok()) return Malformed(parsed.status().message());
  out.note = std::move(*parsed);
  Result<LogCheckpoint> body = ParseCheckpointBody(out.note.body);
  if (!body.ok()) return Malformed(body.status().message());
  out.checkpoint = std::move(*body);
  Result<MerkleHash> root_hash = MerkleHashFromHex(root->get<std::string>());
  if (!root_hash.ok() || *root_hash != out.checkpoint.root || size->get<uint64_t>() != out.checkpoint.size) {
    return Malformed("treeSize and rootHash differ from the signed note");
  }
  for (const nlohmann::json& node : *frontier) {
    Result<MerkleHash> h = node.is_string() ? MerkleHashFromBase64(node.get<std::string>())
                                            : Result<MerkleHash>(InvalidArgument("not a string"));
    if (!h.ok()) return Malformed("frontier: " + h.status().message());
    out.frontier.push_back(*h);
  }
  return std::optional<MerkleCheckpoint>(std::move(out));
}

Status CheckMerkleCheckpoint(uint64_t seq, const MerkleCheckpoint& checkpoint, const CompactRange& range,
                             const NoteVerifier* verifier, MerkleHasher& hasher) {
  const std::string at = "checkpoint seq " + std::to_string(seq);
  if (checkpoint.checkpoint.size != seq - 1 || range.size() != seq - 1) {
    return Status(StatusCode::kDataLoss, at + " signs a tree of " + std::to_string(checkpoint.checkpoint.size) +
                                             " records, not the " + std::to_string(seq - 1) + " before it");
  }
  if (checkpoint.checkpoint.root != range.Root(hasher)) {
    return Status(StatusCode::kDataLoss, at + " signs a root that the records before it do not have");
  }
  if (checkpoint.frontier != range.nodes()) {
    return Status(StatusCode::kDataLoss, at + " carries a frontier that is not its tree's");
  }
  if (verifier != nullptr) {
    if (checkpoint.checkpoint.origin != verifier->name()) {
      return Status(StatusCode::kDataLoss,
                    at + " is of log '" + checkpoint.checkpoint.origin + "', not '" + verifier->name() + "'");
    }
    Status signature = verifier->Verify(checkpoint.note);
    if (!signature.ok()) return Status(StatusCode::kDataLoss, at + ": " + signature.message());
  }
  return Status::Ok();
}

}  // namespace gpufed::audit
