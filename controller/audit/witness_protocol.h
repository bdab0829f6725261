#pragma once
// The request a log sends to a witness (c2sp.org/tlog-witness, POST <prefix>/add-checkpoint):
//
//   old <size the witness last cosigned, as the log believes it>\n
//   <base64 consistency proof hash>\n      (one line per hash, none when old is 0 or equal)
//   \n
//   <the checkpoint as a signed note>
//
// and the witness's answers: 200 with its cosignature line(s); 409 with the size it holds
// (Content-Type text/x.tlog.size) when `old` is not that size; 422 when the proof does not
// show consistency; 403 when the log's signature does not verify; 404 for an origin it
// does not witness; 400 for anything else malformed.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "controller/audit/merkle.h"
#include "controller/common/status.h"

namespace gpufed::audit {

inline constexpr size_t kMaxAddCheckpointBytes = 64 << 10;
inline constexpr size_t kMaxConsistencyProofHashes = 128;  // 2 per level of a 2^64 tree
inline constexpr std::string_view kTlogSizeContentType = "text/x.tlog.size";

struct AddCheckpointRequest {
  uint64_t old_size = 0;
  std::vector<MerkleHash> proof;
  std::string checkpoint;  // the whole signed note
};

std::string EncodeAddCheckpoint(const AddCheckpointRequest& request);
// InvalidArgument naming the line that is wrong; bounded by the constants above.
Result<AddCheckpointRequest> ParseAddCheckpoint(std::string_view body);

// A 409 answer's body: the size as decimal and a newline. InvalidArgument otherwise.
Result<uint64_t> ParseTlogSize(std::string_view body);

}  // namespace gpufed::audit
