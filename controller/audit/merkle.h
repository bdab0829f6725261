#pragma once
// The journal's Merkle tree (RFC 9162 section 2.1): every record line, without its
// newline, is a leaf (leaf index = seq - 1). Leaf hash SHA-256(0x00 || line), interior
// node SHA-256(0x01 || left || right). Signed checkpoints sign the root of a tree size;
// inclusion proofs show one record is in it, consistency proofs that a larger tree
// extends a smaller one. Everything here is pure computation over a NodeSource.
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "controller/common/status.h"

namespace gpufed::audit {

using MerkleHash = std::array<unsigned char, 32>;

// SHA-256 through one reusable OpenSSL context. Not thread-safe; one per thread.
class MerkleHasher {
 public:
  MerkleHasher();
  ~MerkleHasher();
  MerkleHasher(MerkleHasher&&) noexcept;
  MerkleHasher& operator=(MerkleHasher&&) noexcept;

  MerkleHash Leaf(std::string_view data);
  MerkleHash Node(const MerkleHash& left, const MerkleHash& right);
  // The root of the empty tree: SHA-256 of nothing.
  MerkleHash Empty();

 private:
  MerkleHash Digest(unsigned char prefix, std::string_view a, std::string_view b);
  struct State;
  std::unique_ptr<State> state_;
};

// The hashes of complete subtrees a proof needs: the node of `height` (0 = a leaf) whose
// leftmost leaf is `index << height`. Only nodes inside the tree the caller proves
// against are asked for.
class NodeSource {
 public:
  virtual ~NodeSource() = default;
  virtual Result<MerkleHash> Node(int height, uint64_t index) = 0;
};

// The right edge of a growing tree: one perfect subtree per set bit of its size, largest
// first. Appending is amortised O(1); the root is O(log n).
class CompactRange {
 public:
  CompactRange() = default;
  // `nodes` are the perfect subtrees of a tree of `size` leaves, largest first.
  // InvalidArgument unless there is one per set bit of `size`.
  static Result<CompactRange> FromNodes(uint64_t size, std::vector<MerkleHash> nodes);
  // The frontier of a tree of `size` leaves read from `source`.
  static Result<CompactRange> FromSource(uint64_t size, NodeSource& source);

  void Append(const MerkleHash& leaf, MerkleHasher& hasher);
  MerkleHash Root(MerkleHasher& hasher) const;
  uint64_t size() const { return size_; }
  const std::vector<MerkleHash>& nodes() const { return nodes_; }

 private:
  uint64_t size_ = 0;
  std::vector<MerkleHash> nodes_;  // largest (leftmost) first
};

// RFC 9162 2.1.3.1: the inclusion proof of leaf `index` in the tree of `size` leaves.
Result<std::vector<MerkleHash>> InclusionProof(uint64_t index, uint64_t size, NodeSource& source, MerkleHasher& hasher);
// RFC 9162 2.1.4.1: the consistency proof from the tree of `old_size` leaves to the one
// of `new_size` (0 < old_size <= new_size; equal sizes give an empty proof).
Result<std::vector<MerkleHash>> ConsistencyProof(uint64_t old_size, uint64_t new_size, NodeSource& source,
                                                 MerkleHasher& hasher);
// The root of the first `size` leaves (the empty-tree hash for 0).
Result<MerkleHash> TreeRoot(uint64_t size, NodeSource& source, MerkleHasher& hasher);

// RFC 9162 2.1.3.2. OK when the proof shows `leaf_hash` at `index` under `root`;
// DataLoss naming what does not match otherwise.
Status VerifyInclusion(uint64_t index, uint64_t size, const MerkleHash& leaf_hash, std::span<const MerkleHash> proof,
                       const MerkleHash& root, MerkleHasher& hasher);
// RFC 9162 2.1.4.2.
Status VerifyConsistency(uint64_t old_size, uint64_t new_size, const MerkleHash& old_root, const MerkleHash& new_root,
                         std::span<const MerkleHash> proof, MerkleHasher& hasher);

// Leaf hashes held in memory: the NodeSource of tests and of `audit prove`, which hash
// the journal once. Nodes above the leaves are computed on demand.
class MemoryNodeSource : public NodeSource {
 public:
  explicit MemoryNodeSource(std::vector<MerkleHash> leaves) : leaves_(std::move(leaves)) {}
  Result<MerkleHash> Node(int height, uint64_t index) override;
  uint64_t size() const { return leaves_.size(); }

 private:
  std::vector<MerkleHash> leaves_;
  std::vector<std::vector<MerkleHash>> levels_;  // levels_[h]: perfect nodes of height h
  MerkleHasher hasher_;
};

std::string MerkleHashHex(const MerkleHash& hash);
std::string MerkleHashBase64(const MerkleHash& hash);
// InvalidArgument unless `text` is the standard base64 of exactly 32 bytes.
Result<MerkleHash> MerkleHashFromBase64(std::string_view text);
Result<MerkleHash> MerkleHashFromHex(std::string_view text);

}  // namespace gpufed::audit
