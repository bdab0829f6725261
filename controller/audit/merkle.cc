#include "controller/audit/merkle.h"

#include <openssl/evp.h>

#include <bit>
#include <cstring>

#include "controller/common/base64.h"

namespace gpufed::audit {
namespace {

bool PowerOfTwo(uint64_t n) { return n != 0 && (n & (n - 1)) == 0; }
// The largest power of two smaller than n (n >= 2): RFC 9162's split point k.
uint64_t SplitPoint(uint64_t n) { return std::bit_floor(n - 1); }
bool Lsb(uint64_t n) { return (n & 1) != 0; }

// MTH(D[begin:end]) of a subtree the RFC's recursion visits: its start is a multiple of
// the largest power of two not above its size, so each perfect part is one node.
Result<MerkleHash> SubtreeHash(uint64_t begin, uint64_t end, NodeSource& source, MerkleHasher& hasher) {
  const uint64_t n = end - begin;
  if (PowerOfTwo(n) && begin % n == 0) return source.Node(std::countr_zero(n), begin / n);
  const uint64_t k = SplitPoint(n);
  Result<MerkleHash> left = SubtreeHash(begin, begin + k, source, hasher);
  if (!left.ok()) return left.status();
  Result<MerkleHash> right = SubtreeHash(begin + k, end, source, hasher);
  if (!right.ok()) return right.status();
  return hasher.Node(*left, *right);
}

// PATH(m, D[begin:end]), m relative to begin.
Status Path(uint64_t m, uint64_t begin, uint64_t end, NodeSource& source, MerkleHasher& hasher,
            std::vector<MerkleHash>* out) {
  const uint64_t n = end - begin;
  if (n == 1) return Status::Ok();
  const uint64_t k = SplitPoint(n);
  Result<MerkleHash> sibling = Status::Ok();
  if (m < k) {
    GPUFED_RETURN_IF_ERROR(Path(m, begin, begin + k, source, hasher, out));
    sibling = SubtreeHash(begin + k, end, source, hasher);
  } else {
    GPUFED_RETURN_IF_ERROR(Path(m - k, begin + k, end, source, hasher, out));
    sibling = SubtreeHash(begin, begin + k, source, hasher);
  }
  if (!sibling.ok()) return sibling.status();
  out->push_back(*sibling);
  return Status::Ok();
}

// SUBPROOF(m, D[begin:end], b).
Status SubProof(uint64_t m, uint64_t begin, uint64_t end, bool whole, NodeSource& source, MerkleHasher& hasher,
                std::vector<MerkleHash>* out) {
  const uint64_t n = end - begin;
  if (m == n) {
    if (whole) return Status::Ok();
    Result<MerkleHash> h = SubtreeHash(begin, end, source, hasher);
    if (!h.ok()) return h.status();
    out->push_back(*h);
    return Status::Ok();
  }
  const uint64_t k = SplitPoint(n);
  Result<MerkleHash> sibling = Status::Ok();
  if (m <= k) {
    GPUFED_RETURN_IF_ERROR(SubProof(m, begin, begin + k, whole, source, hasher, out));
    sibling = SubtreeHash(begin + k, end, source, hasher);
  } else {
    GPUFED_RETURN_IF_ERROR(SubProof(m - k, begin + k, end, false, source, hasher, out));
    sibling = SubtreeHash(begin, begin + k, source, hasher);
  }
  if (!sibling.ok()) return sibling.status();
  out->push_back(*sibling);
  return Status::Ok();
}

Status ProofMismatch(const std::string& what) { return Status(StatusCode::kDataLoss, what); }

}  // namespace

struct MerkleHasher::State {
  EVP_MD* fetched = nullptr;
  const EVP_MD* md = nullptr;
  EVP_MD_CTX* ctx = nullptr;
  ~State() {
    EVP_MD_CTX_free(ctx);
    EVP_MD_free(fetched);
  }
};

MerkleHasher::MerkleHasher() : state_(std::make_unique<State>()) {
  state_->fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  state_->md = state_->fetched != nullptr ? state_->fetched : EVP_sha256();
  state_->ctx = EVP_MD_CTX_new();
}
MerkleHasher::~MerkleHasher() = default;
MerkleHasher::MerkleHasher(MerkleHasher&&) noexcept = default;
MerkleHasher& MerkleHasher::operator=(MerkleHasher&&) noexcept = default;

MerkleHash MerkleHasher::Digest(unsigned char prefix, std::string_view a, std::string_view b) {
  MerkleHash out{};
  unsigned int length = 0;
  EVP_MD_CTX* ctx = state_->ctx;
  bool ok = ctx != nullptr && EVP_DigestInit_ex(ctx, state_->md, nullptr) == 1 &&
            (prefix == 0xff || EVP_DigestUpdate(ctx, &prefix, 1) == 1) &&
            EVP_DigestUpdate(ctx, a.data(), a.size()) == 1 && EVP_DigestUpdate(ctx, b.data(), b.size()) == 1 &&
            EVP_DigestFinal_ex(ctx, out.data(), &length) == 1 && length == out.size();
  if (!ok) {
    // Only an allocation failure gets here; a one-shot digest allocates its own context.
    std::string data;
    if (prefix != 0xff) data.push_back(static_cast<char>(prefix));
    data.append(a);
    data.append(b);
    EVP_Digest(data.data(), data.size(), out.data(), &length, EVP_sha256(), nullptr);
  }
  return out;
}

MerkleHash MerkleHasher::Leaf(std::string_view data) { return Digest(0x00, data, {}); }

MerkleHash MerkleHasher::Node(const MerkleHash& left, const MerkleHash& right) {
  auto view = [](const MerkleHash& h) { return std::string_view(reinterpret_cast<const char*>(h.data()), h.size()); };
  return Digest(0x01, view(left), view(right));
}

MerkleHash MerkleHasher::Empty() { return Digest(0xff, {}, {}); }

Result<CompactRange> CompactRange::FromNodes(uint64_t size, std::vector<MerkleHash> nodes) {
  if (nodes.size() != static_cast<size_t>(std::popcount(size))) {
    return InvalidArgument("a tree of " + std::to_string(size) + " leaves has " + std::to_string(std::popcount(size)) +
                           " frontier nodes, not " + std::to_string(nodes.size()));
  }
  CompactRange range;
  range.size_ = size;
  range.nodes_ = std::move(nodes);
  return range;
}

Result<CompactRange> CompactRange::FromSource(uint64_t size, NodeSource& source) {
  std::vector<MerkleHash> nodes;
  uint64_t offset = 0;
  for (int height = 63; height >= 0; --height) {
    const uint64_t width = uint64_t{1} << height;
    if ((size & width) == 0) continue;
    Result<MerkleHash> node = source.Node(height, offset >> height);
    if (!node.ok()) return node.status();
    nodes.push_back(*node);
    offset += width;
  }
  return FromNodes(size, std::move(nodes));
}

void CompactRange::Append(const MerkleHash& leaf, MerkleHasher& hasher) {
  nodes_.push_back(leaf);
  // Each trailing one bit of the old size is a perfect subtree the new leaf completes.
  for (uint64_t n = size_; Lsb(n); n >>= 1) {
    MerkleHash merged = hasher.Node(nodes_[nodes_.size() - 2], nodes_.back());
    nodes_.pop_back();
    nodes_.back() = merged;
  }
  ++size_;
}

MerkleHash CompactRange::Root(MerkleHasher& hasher) const {
  if (nodes_.empty()) return hasher.Empty();
  MerkleHash root = nodes_.back();
  for (size_t i = nodes_.size() - 1; i-- > 0;) root = hasher.Node(nodes_[i], root);
  return root;
}

Result<std::vector<MerkleHash>> InclusionProof(uint64_t index, uint64_t size, NodeSource& source,
                                               MerkleHasher& hasher) {
  if (index >= size) {
    return InvalidArgument("leaf " + std::to_string(index) + " is not in a tree of " + std::to_string(size) +
                           " leaves");
  }
  std::vector<MerkleHash> proof;
  GPUFED_RETURN_IF_ERROR(Path(index, 0, size, source, hasher, &proof));
  return proof;
}

Result<std::vector<MerkleHash>> ConsistencyProof(uint64_t old_size, uint64_t new_size, NodeSource& source,
                                                 MerkleHasher& hasher) {
  if (old_size == 0 || old_size > new_size) {
    return InvalidArgument("a consistency proof needs 0 < from-size <= to-size (got " + std::to_string(old_size) +
                           " and " + std::to_string(new_size) + ")");
  }
  std::vector<MerkleHash> proof;
  if (old_size == new_size) return proof;
  GPUFED_RETURN_IF_ERROR(SubProof(old_size, 0, new_size, true, source, hasher, &proof));
  return proof;
}

Result<MerkleHash> TreeRoot(uint64_t size, NodeSource& source, MerkleHasher& hasher) {
  if (size == 0) return hasher.Empty();
  return SubtreeHash(0, size, source, hasher);
}

Status VerifyInclusion(uint64_t index, uint64_t size, const MerkleHash& leaf_hash, std::span<const MerkleHash> proof,
                       const MerkleHash& root, MerkleHasher& hasher) {
  if (index >= size) return ProofMismatch("leaf index " + std::to_string(index) + " is outside the tree");
  uint64_t fn = index, sn = size - 1;
  MerkleHash r = leaf_hash;
  for (const MerkleHash& p : proof) {
    if (sn == 0) return ProofMismatch("the inclusion proof is longer than the tree is deep");
    if (Lsb(fn) || fn == sn) {
      r = hasher.Node(p, r);
      while (!Lsb(fn) && fn != 0) {
        fn >>= 1;
        sn >>= 1;
      }
    } else {
      r = hasher.Node(r, p);
    }
    fn >>= 1;
    sn >>= 1;
  }
  if (sn != 0) return ProofMismatch("the inclusion proof is shorter than the tree is deep");
  if (r != root) return ProofMismatch("the inclusion proof does not lead to the root");
  return Status::Ok();
}

Status VerifyConsistency(uint64_t old_size, uint64_t new_size, const MerkleHash& old_root, const MerkleHash& new_root,
                         std::span<const MerkleHash> proof, MerkleHasher& hasher) {
  if (old_size > new_size) return ProofMismatch("the old tree is larger than the new one");
  if (old_size == new_size) {
    if (!proof.empty()) return ProofMismatch("trees of one size need an empty consistency proof");
    if (old_root != new_root) return ProofMismatch("two roots of one tree size differ");
    return Status::Ok();
  }
  if (old_size == 0) {
    if (!proof.empty()) return ProofMismatch("the empty tree needs an empty consistency proof");
    return Status::Ok();
  }
  if (proof.empty()) return ProofMismatch("the consistency proof is empty");
  std::vector<MerkleHash> path;
  if (PowerOfTwo(old_size)) path.push_back(old_root);
  path.insert(path.end(), proof.begin(), proof.end());
  uint64_t fn = old_size - 1, sn = new_size - 1;
  while (Lsb(fn)) {
    fn >>= 1;
    sn >>= 1;
  }
  MerkleHash fr = path[0], sr = path[0];
  for (size_t i = 1; i < path.size(); ++i) {
    const MerkleHash& c = path[i];
    if (sn == 0) return ProofMismatch("the consistency proof is longer than the tree is deep");
    if (Lsb(fn) || fn == sn) {
      fr = hasher.Node(c, fr);
      sr = hasher.Node(c, sr);
      while (!Lsb(fn) && fn != 0) {
        fn >>= 1;
        sn >>= 1;
      }
    } else {
      sr = hasher.Node(sr, c);
    }
    fn >>= 1;
    sn >>= 1;
  }
  if (sn != 0) return ProofMismatch("the consistency proof is shorter than the tree is deep");
  if (fr != old_root) return ProofMismatch("the consistency proof does not lead to the old root");
  if (sr != new_root) return ProofMismatch("the consistency proof does not lead to the new root");
  return Status::Ok();
}

Result<MerkleHash> MemoryNodeSource::Node(int height, uint64_t index) {
  if (height < 0 || height > 63) return InvalidArgument("node height " + std::to_string(height));
  // Built once, level by level: proofs for every leaf then cost O(log n) each.
  if (levels_.empty()) {
    levels_.push_back(leaves_);
    while (levels_.back().size() >= 2) {
      const std::vector<MerkleHash>& below = levels_.back();
      std::vector<MerkleHash> above(below.size() / 2);
      for (size_t i = 0; i < above.size(); ++i) above[i] = hasher_.Node(below[2 * i], below[2 * i + 1]);
      levels_.push_back(std::move(above));
    }
  }
  if (static_cast<size_t>(height) >= levels_.size() || index >= levels_[height].size()) {
    return NotFound("no node of height " + std::to_string(height) + " at " + std::to_string(index) + " in " +
                    std::to_string(leaves_.size()) + " leaves");
  }
  return levels_[height][index];
}

std::string MerkleHashHex(const MerkleHash& hash) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(64, '0');
  for (size_t i = 0; i < hash.size(); ++i) {
    out[2 * i] = kHex[hash[i] >> 4];
    out[2 * i + 1] = kHex[hash[i] & 0xf];
  }
  return out;
}

std::string MerkleHashBase64(const MerkleHash& hash) {
  return Base64Encode(std::string_view(reinterpret_cast<const char*>(hash.data()), hash.size()));
}

Result<MerkleHash> MerkleHashFromBase64(std::string_view text) {
  Result<std::string> bytes = Base64Decode(text);
  if (!bytes.ok() || bytes->size() != 32) return InvalidArgument("not the base64 of a 32-byte hash");
  MerkleHash out{};
  std::memcpy(out.data(), bytes->data(), out.size());
  // One spelling only: a signed text must not have two readings of one hash.
  if (MerkleHashBase64(out) != text) return InvalidArgument("not the canonical base64 of a 32-byte hash");
  return out;
}

Result<MerkleHash> MerkleHashFromHex(std::string_view text) {
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  if (text.size() != 64) return InvalidArgument("a hash is 64 lowercase hex digits");
  MerkleHash out{};
  for (size_t i = 0; i < 32; ++i) {
    int hi = nibble(text[2 * i]), lo = nibble(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return InvalidArgument("a hash is 64 lowercase hex digits");
    out[i] = static_cast<unsigned char>(hi << 4 | lo);
  }
  return out;
}

}  // namespace gpufed::audit
