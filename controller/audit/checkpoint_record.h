#pragma once
// The payload of a `checkpoint` record. Two formats are read:
// - v2 (written now): a C2SP signed note over the Merkle tree of every record before the
//   checkpoint (tree size = the checkpoint's seq - 1), with the tree's frontier so that a
//   journal reopens without re-hashing its history:
//     {"format":2,"keyId":"<16 hex>","note":"<signed note>","treeSize":S,
//      "rootHash":"<64 hex>","frontier":["<base64>",...]}
// - v1 (older journals): an Ed25519 signature over the chain head
//     {"alg":"ed25519","keyId","signedSeq","signedHash","sig"}
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/audit/merkle.h"
#include "controller/audit/signed_note.h"
#include "controller/common/status.h"

namespace gpufed::audit {

// A v2 checkpoint's payload for the tree `range` (every record before the checkpoint).
nlohmann::json MerkleCheckpointPayload(const NoteSigner& signer, const std::string& key_id, const CompactRange& range,
                                       MerkleHasher& hasher);

struct MerkleCheckpoint {
  std::string key_id;
  std::string note_text;
  Note note;
  LogCheckpoint checkpoint;
  std::vector<MerkleHash> frontier;
};

// nullopt for a v1 checkpoint; InvalidArgument naming the member that is malformed.
// `record` is the whole record (RecordJson).
Result<std::optional<MerkleCheckpoint>> ParseMerkleCheckpoint(const nlohmann::json& record);

// Checks a v2 checkpoint at `seq` against the tree of the records before it: the size is
// seq - 1, the body's root is `range`'s root and the frontier its nodes, and, with a
// verifier, the log's signature verifies. DataLoss naming what does not hold.
Status CheckMerkleCheckpoint(uint64_t seq, const MerkleCheckpoint& checkpoint, const CompactRange& range,
                             const NoteVerifier* verifier, MerkleHasher& hasher);

}  // namespace gpufed::audit
