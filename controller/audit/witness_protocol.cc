#include "controller/audit/witness_protocol.h"

#include <charconv>

namespace gpufed::audit {
namespace {

bool ParseDecimal(std::string_view text, uint64_t* out) {
  if (text.empty() || text.size() > 20 || (text.size() > 1 && text[0] == '0')) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::string EncodeAddCheckpoint(const AddCheckpointRequest& request) {
  std::string out = "old " + std::to_string(request.old_size) + "\n";
  for (const MerkleHash& h : request.proof) out += MerkleHashBase64(h) + "\n";
  out += "\n";
  out += request.checkpoint;
  return out;
}

Result<AddCheckpointRequest> ParseAddCheckpoint(std::string_view body) {
  if (body.size() > kMaxAddCheckpointBytes) return InvalidArgument("the request is over 64 KiB");
  AddCheckpointRequest out;
  size_t line_no = 0;
  auto next_line = [&body, &line_no](std::string_view* line) {
    size_t nl = body.find('\n');
    if (nl == std::string_view::npos) return false;
    *line = body.substr(0, nl);
    body.remove_prefix(nl + 1);
    ++line_no;
    return true;
  };
  std::string_view line;
  if (!next_line(&line) || line.substr(0, 4) != "old " || !ParseDecimal(line.substr(4), &out.old_size)) {
    return InvalidArgument("line 1 must be 'old <size>'");
  }
  for (;;) {
    if (!next_line(&line)) return InvalidArgument("no blank line before the checkpoint");
    if (line.empty()) break;
    if (out.proof.size() == kMaxConsistencyProofHashes) {
      return InvalidArgument("the consistency proof has over " + std::to_string(kMaxConsistencyProofHashes) +
                             " hashes");
    }
    Result<MerkleHash> hash = MerkleHashFromBase64(line);
    if (!hash.ok()) return InvalidArgument("line " + std::to_string(line_no) + ": " + hash.status().message());
    out.proof.push_back(*hash);
  }
  if (body.empty()) return InvalidArgument("the checkpoint is missing");
  out.checkpoint = std::string(body);
  return out;
}

Result<uint64_t> ParseTlogSize(std::string_view body) {
  if (!body.empty() && body.back() == '\n') body.remove_suffix(1);
  uint64_t size = 0;
  if (!ParseDecimal(body, &size)) return InvalidArgument("a tree size answer is a decimal and a newline");
  return size;
}

}  // namespace gpufed::audit
