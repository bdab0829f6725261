#include "controller/audit/tile_store.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "controller/audit/journal.h"
#include "controller/audit/verify.h"
#include "tests/testutil/temp_dir.h"

namespace gpufed::audit {
namespace {

std::vector<MerkleHash> RandomLeaves(size_t n) {
  std::mt19937_64 rng(39);
  std::vector<MerkleHash> out(n);
  for (MerkleHash& h : out) {
    for (unsigned char& b : h) b = static_cast<unsigned char>(rng());
  }
  return out;
}

TEST(TileStoreTest, TilesAndNodesAreTheTreesAndSurviveAReopen) {
  testutil::TempDir dir;
  std::unique_ptr<Env> env = NewPosixEnv();
  const std::vector<MerkleHash> leaves = RandomLeaves(70'000);  // three tile levels
  MerkleHasher hasher;
  MemoryNodeSource expected(leaves);
  const MerkleHash root = *TreeRoot(leaves.size(), expected, hasher);
  {
    Result<std::unique_ptr<TileStore>> store = TileStore::Open(*env, dir.str(), 0, hasher.Empty());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    for (size_t i = 0; i < leaves.size(); i += 1000) {
      size_t n = std::min<size_t>(1000, leaves.size() - i);
      ASSERT_TRUE((*store)->Append(std::span(leaves).subspan(i, n)).ok());
    }
  }
  // No journal to read: a reopen that needed one would fail.
  Result<std::unique_ptr<TileStore>> store = TileStore::Open(*env, dir.str(), leaves.size(), root);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->size(), leaves.size());
  for (int height : {0, 3, 8, 11, 16}) {
    const uint64_t nodes = leaves.size() >> height;
    for (uint64_t index : {uint64_t{0}, nodes / 2, nodes - 1}) {
      Result<MerkleHash> node = (*store)->Node(height, index);
      ASSERT_TRUE(node.ok()) << height << "/" << index << ": " << node.status().ToString();
      EXPECT_EQ(*node, *expected.Node(height, index)) << height << "/" << index;
    }
    EXPECT_FALSE((*store)->Node(height, nodes).ok());
  }
  // Level 1 holds the 273 nodes of height 8; its tile 1 is partial (17 hashes).
  Result<std::string> tile = (*store)->Tile(1, 1, 17);
  ASSERT_TRUE(tile.ok());
  ASSERT_EQ(tile->size(), 17u * 32);
  EXPECT_EQ(std::memcmp(tile->data(), expected.Node(8, 256)->data(), 32), 0);
  EXPECT_FALSE((*store)->Tile(1, 1, 18).ok());  // not complete yet
  // An index whose first hash would be past 2^64 is no tile (not a wrapped-around one).
  EXPECT_EQ((*store)->Tile(0, (uint64_t{1} << 56) + 0, 1).status().code(), StatusCode::kNotFound);
  EXPECT_EQ((*store)->Tile(0, UINT64_MAX, 1).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE((*store)->Tile(2, 0, 1).ok());
  EXPECT_EQ(*TreeRoot(leaves.size(), **store, hasher), root);
}

TEST(TileStoreTest, ADamagedOrMissingStoreIsMadeAgainFromTheJournal) {
  testutil::TempDir dir;
  std::unique_ptr<Env> env = NewPosixEnv();
  Signer signer = Signer::Generate().value();
  {
    JournalOptions o;
    o.env = env.get();
    o.dir = dir.str();
    o.signer = &signer;
    auto j = AuditJournal::Open(o);
    ASSERT_TRUE(j.ok());
    for (int i = 0; i < 300; ++i) ASSERT_TRUE((*j)->Append({RecordKind::kDecision, {{"n", i}}}).ok());
    ASSERT_TRUE((*j)->Close().ok());
  }
  Result<VerifyReport> report = VerifyJournalDir(*env, dir.str(), {});
  ASSERT_TRUE(report.ok() && report->ok);
  const MerkleHash root = *MerkleHashFromHex(report->root_hash);
  const uint64_t size = report->tree_size;
  ASSERT_EQ(size, 600u);
  auto open = [&] { return TileStore::Open(*env, dir.str(), size, root); };
  ASSERT_TRUE(open().ok());  // built from the journal
  {
    std::fstream f(dir.str() + "/tiles/level-0", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(std::streamoff{32} * 77);
    f.put('\x5a');
  }
  Result<std::unique_ptr<TileStore>> again = open();
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  MerkleHasher hasher;
  EXPECT_EQ(*TreeRoot(size, **again, hasher), root);
  again->reset();
  std::filesystem::remove_all(dir.str() + "/tiles");
  again = open();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*TreeRoot(size, **again, hasher), root);
  // A journal shorter than the store (a torn commit cut off): the store follows it.
  again->reset();
  Result<std::unique_ptr<TileStore>> shorter = TileStore::Open(*env, dir.str(), 10, *TreeRoot(10, **open(), hasher));
  ASSERT_TRUE(shorter.ok()) << shorter.status().ToString();
  EXPECT_EQ((*shorter)->size(), 10u);
}

TEST(TileStoreTest, TileIndexPathsFollowTlogTiles) {
  EXPECT_EQ(TileIndexPath(0), "000");
  EXPECT_EQ(TileIndexPath(5), "005");
  EXPECT_EQ(TileIndexPath(1000), "x001/000");
  EXPECT_EQ(TileIndexPath(1234067), "x001/x234/067");
  auto parsed = ParseTileIndexPath("x001/x234/067.p/5");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->first, 1234067u);
  EXPECT_EQ(parsed->second, 5u);
  EXPECT_EQ(ParseTileIndexPath("067")->second, 256u);
  for (const char* bad : {"", "67", "x067", "001/234", "x000/001", "067.p/0", "067.p/256", "067.p/05", "067.p/x",
                          "x001/x234/067/", "../067"}) {
    EXPECT_FALSE(ParseTileIndexPath(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace gpufed::audit
