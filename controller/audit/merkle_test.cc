#include "controller/audit/merkle.h"

#include <gtest/gtest.h>

#include <random>

namespace gpufed::audit {
namespace {

// The eight leaves of Certificate Transparency's reference tests (RFC 6962 test data).
std::vector<std::string> ReferenceLeaves() {
  auto bytes = [](std::initializer_list<int> b) {
    std::string s;
    for (int c : b) s.push_back(static_cast<char>(c));
    return s;
  };
  std::string l6, l7;
  for (int c = 0x50; c < 0x58; ++c) l6.push_back(static_cast<char>(c));
  for (int c = 0x60; c < 0x70; ++c) l7.push_back(static_cast<char>(c));
  return {
      "", bytes({0x00}), bytes({0x10}), bytes({0x20, 0x21}), bytes({0x30, 0x31}), bytes({0x40, 0x41, 0x42, 0x43}), l6,
      l7};
}

std::vector<MerkleHash> LeafHashes(const std::vector<std::string>& leaves) {
  MerkleHasher hasher;
  std::vector<MerkleHash> out;
  out.reserve(leaves.size());
  for (const std::string& leaf : leaves) out.push_back(hasher.Leaf(leaf));
  return out;
}

std::vector<std::string> RecordLikeLeaves(size_t n) {
  std::vector<std::string> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back("{\"seq\":" + std::to_string(i + 1) + ",\"kind\":\"decision\"}");
  return out;
}

TEST(MerkleTest, RootsMatchTheReferenceVectors) {
  const char* kRoots[] = {"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
                          "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
                          "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
                          "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
                          "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
                          "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
                          "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
                          "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328"};
  MerkleHasher hasher;
  EXPECT_EQ(MerkleHashHex(hasher.Empty()), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  std::vector<MerkleHash> leaves = LeafHashes(ReferenceLeaves());
  MemoryNodeSource source(leaves);
  CompactRange range;
  for (size_t n = 1; n <= leaves.size(); ++n) {
    range.Append(leaves[n - 1], hasher);
    EXPECT_EQ(MerkleHashHex(range.Root(hasher)), kRoots[n - 1]) << n;
    Result<MerkleHash> root = TreeRoot(n, source, hasher);
    ASSERT_TRUE(root.ok());
    EXPECT_EQ(MerkleHashHex(*root), kRoots[n - 1]) << n;
  }
}

TEST(MerkleTest, EveryInclusionProofOfSmallTreesVerifies) {
  MerkleHasher hasher;
  std::vector<MerkleHash> leaves = LeafHashes(RecordLikeLeaves(70));
  MemoryNodeSource source(leaves);
  for (uint64_t size = 1; size <= leaves.size(); ++size) {
    MerkleHash root = *TreeRoot(size, source, hasher);
    for (uint64_t i = 0; i < size; ++i) {
      Result<std::vector<MerkleHash>> proof = InclusionProof(i, size, source, hasher);
      ASSERT_TRUE(proof.ok());
      EXPECT_TRUE(VerifyInclusion(i, size, leaves[i], *proof, root, hasher).ok()) << i << " of " << size;
      if (size > 1) {
        // The same proof for a neighbour, or against another tree size, fails.
        uint64_t other = (i + 1) % size;
        EXPECT_FALSE(VerifyInclusion(other, size, leaves[i], *proof, root, hasher).ok());
        EXPECT_FALSE(VerifyInclusion(i, size, leaves[other], *proof, root, hasher).ok());
      }
    }
    for (uint64_t old_size = 1; old_size <= size; ++old_size) {
      Result<std::vector<MerkleHash>> proof = ConsistencyProof(old_size, size, source, hasher);
      ASSERT_TRUE(proof.ok());
      MerkleHash old_root = *TreeRoot(old_size, source, hasher);
      EXPECT_TRUE(VerifyConsistency(old_size, size, old_root, root, *proof, hasher).ok()) << old_size << "->" << size;
    }
  }
}

TEST(MerkleTest, TenThousandRecordsProveInclusionAndConsistencyAndOneFlippedBitFails) {
  MerkleHasher hasher;
  std::vector<std::string> records = RecordLikeLeaves(10'000);
  std::vector<MerkleHash> leaves = LeafHashes(records);
  MemoryNodeSource source(leaves);
  const uint64_t size = leaves.size();
  MerkleHash root = *TreeRoot(size, source, hasher);
  std::mt19937_64 rng(39);
  for (uint64_t i = 0; i < size; ++i) {
    Result<std::vector<MerkleHash>> proof = InclusionProof(i, size, source, hasher);
    ASSERT_TRUE(proof.ok());
    ASSERT_TRUE(VerifyInclusion(i, size, leaves[i], *proof, root, hasher).ok()) << i;
    if (i % 97 != 0) continue;
    // One flipped bit in the record, in a proof hash or in the root.
    std::string record = records[i];
    record[rng() % record.size()] ^= static_cast<char>(1 << (rng() % 8));
    EXPECT_FALSE(VerifyInclusion(i, size, hasher.Leaf(record), *proof, root, hasher).ok());
    std::vector<MerkleHash> bad = *proof;
    bad[rng() % bad.size()][rng() % 32] ^= static_cast<unsigned char>(1 << (rng() % 8));
    EXPECT_FALSE(VerifyInclusion(i, size, leaves[i], bad, root, hasher).ok());
    MerkleHash bad_root = root;
    bad_root[rng() % 32] ^= static_cast<unsigned char>(1 << (rng() % 8));
    EXPECT_FALSE(VerifyInclusion(i, size, leaves[i], *proof, bad_root, hasher).ok());
  }
  for (int pair = 0; pair < 50; ++pair) {
    uint64_t a = 1 + rng() % size, b = 1 + rng() % size;
    if (a > b) std::swap(a, b);
    MerkleHash old_root = *TreeRoot(a, source, hasher), new_root = *TreeRoot(b, source, hasher);
    Result<std::vector<MerkleHash>> proof = ConsistencyProof(a, b, source, hasher);
    ASSERT_TRUE(proof.ok());
    ASSERT_TRUE(VerifyConsistency(a, b, old_root, new_root, *proof, hasher).ok()) << a << "->" << b;
    if (a == b) continue;
    std::vector<MerkleHash> bad = *proof;
    bad[rng() % bad.size()][rng() % 32] ^= static_cast<unsigned char>(1 << (rng() % 8));
    EXPECT_FALSE(VerifyConsistency(a, b, old_root, new_root, bad, hasher).ok()) << a << "->" << b;
    MerkleHash bad_old = old_root;
    bad_old[rng() % 32] ^= 0x80;
    EXPECT_FALSE(VerifyConsistency(a, b, bad_old, new_root, *proof, hasher).ok());
    MerkleHash bad_new = new_root;
    bad_new[rng() % 32] ^= 0x01;
    EXPECT_FALSE(VerifyConsistency(a, b, old_root, bad_new, *proof, hasher).ok());
    // (A proof does not bind the sizes on its own: a neighbouring size can have the same
    // shape. The signed checkpoints bind them.)
  }
}

TEST(MerkleTest, ACompactRangeFromItsNodesContinuesTheTree) {
  MerkleHasher hasher;
  std::vector<MerkleHash> leaves = LeafHashes(RecordLikeLeaves(1000));
  MemoryNodeSource source(leaves);
  Result<CompactRange> range = CompactRange::FromSource(613, source);
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(range->nodes().size(), 5u);  // 613 = 512 + 64 + 32 + 4 + 1
  for (uint64_t i = 613; i < leaves.size(); ++i) range->Append(leaves[i], hasher);
  EXPECT_EQ(range->Root(hasher), *TreeRoot(1000, source, hasher));
  EXPECT_FALSE(CompactRange::FromNodes(613, {}).ok());
}

TEST(MerkleTest, ProofsOutsideTheTreeAreRefused) {
  MerkleHasher hasher;
  MemoryNodeSource source(LeafHashes(RecordLikeLeaves(10)));
  EXPECT_FALSE(InclusionProof(10, 10, source, hasher).ok());
  EXPECT_FALSE(InclusionProof(0, 11, source, hasher).ok());
  EXPECT_FALSE(ConsistencyProof(0, 5, source, hasher).ok());
  EXPECT_FALSE(ConsistencyProof(6, 5, source, hasher).ok());
  Result<MerkleHash> h = MerkleHashFromBase64(MerkleHashBase64(hasher.Leaf("x")));
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(*h, hasher.Leaf("x"));
  EXPECT_FALSE(MerkleHashFromBase64("AAAA").ok());
  EXPECT_FALSE(MerkleHashFromHex("zz").ok());
}

}  // namespace
}  // namespace gpufed::audit
