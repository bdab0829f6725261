#include "controller/placement/mig.h"

#include <gtest/gtest.h>

#include <random>

namespace gpufed::placement {
namespace {

TEST(Mig, KnowsTheProfileTables) {
  ASSERT_NE(MigProfilesFor("A100-40GB"), nullptr);
  EXPECT_EQ(FindMigProfile("A100-40GB", "1g.5gb")->memory_slices, 1);
  EXPECT_EQ(FindMigProfile("A100-40GB", "3g.20gb")->compute_slices, 3);
  EXPECT_EQ(FindMigProfile("A100-80GB", "1g.20gb")->memory_slices, 2);
  EXPECT_EQ(FindMigProfile("H100-80GB", "7g.80gb")->memory_gib, 80);
  EXPECT_EQ(FindMigProfile("A100-80GB", "1g.5gb"), nullptr);
  EXPECT_EQ(MigProfilesFor("T4"), nullptr);
}

TEST(Mig, SevenSmallInstancesFillAGpu) {
  const MigProfile& small = *FindMigProfile("A100-40GB", "1g.5gb");
  MigLayout layout;
  for (int i = 0; i < 7; ++i) {
    std::optional<int> start = layout.FindStart(small);
    ASSERT_TRUE(start.has_value()) << i;
    layout.Place(small, *start);
  }
  EXPECT_FALSE(layout.FindStart(small).has_value());  // 7 compute slices used
  EXPECT_EQ(layout.compute_used(), 7);
}

TEST(Mig, RespectsPlacementRules) {
  const auto& table = *MigProfilesFor("A100-80GB");
  MigLayout layout;
  const MigProfile& three = table[3];  // 3g.40gb: starts 0 or 4
  layout.Place(three, 4);
  EXPECT_FALSE(layout.CanPlaceAt(three, 4));      // taken
  EXPECT_TRUE(layout.CanPlaceAt(table[4], 0));   // 4g.40gb at 0: slices 0-3 free
  EXPECT_FALSE(layout.CanPlaceAt(table[5], 0));  // 7g needs all
  EXPECT_FALSE(layout.CanPlaceAt(table[2], 1));  // 2g never starts at 1
  layout.Place(table[4], 0);
  EXPECT_EQ(layout.compute_used(), 7);
  EXPECT_FALSE(layout.FindStart(table[0]).has_value());
}

TEST(Mig, SmallInstancesKeepBigHolesFree) {
  const auto& table = *MigProfilesFor("A100-40GB");
  MigLayout layout;
  layout.Place(table[0], *layout.FindStart(table[0]));  // a 1g first
  // A 4g (start 0 only) or a 3g must still fit.
  EXPECT_TRUE(layout.FindStart(table[3]).has_value());
}

TEST(MigProperty, RandomLayoutsStayValid) {
  std::mt19937 rng(7);
  const auto& table = *MigProfilesFor("H100-80GB");
  for (int round = 0; round < 2000; ++round) {
    MigLayout layout;
    std::vector<std::pair<const MigProfile*, int>> placed;
    for (int step = 0; step < 12; ++step) {
      const MigProfile& p = table[rng() % table.size()];
      if (auto start = layout.FindStart(p)) {
        ASSERT_TRUE(layout.CanPlaceAt(p, *start));
        layout.Place(p, *start);
        placed.emplace_back(&p, *start);
      } else if (!placed.empty() && rng() % 2) {
        auto [q, s] = placed.back();
        placed.pop_back();
        layout.Release(*q, s);
      }
      // Invariants: no overlap, compute within 7, every instance at an allowed start.
      uint8_t seen = 0;
      int compute = 0;
      for (auto [q, s] : placed) {
        uint8_t mask = static_cast<uint8_t>(((1u << q->memory_slices) - 1u) << s);
        ASSERT_EQ(seen & mask, 0);
        seen |= mask;
        compute += q->compute_slices;
        ASSERT_NE(std::find(q->starts.begin(), q->starts.end(), s), q->starts.end());
      }
      ASSERT_EQ(seen, layout.occupied());
      ASSERT_LE(compute, kMigComputeSlicesPerGpu);
      ASSERT_EQ(compute, layout.compute_used());
    }
  }
}

// The largest free aligned run of memory slices in `occupied`, searched slice by slice.
int LargestFreeAlignedRun(uint8_t occupied) {
  for (int size = kMigMemorySlices; size >= 1; size /= 2) {
    for (int s = 0; s + size <= kMigMemorySlices; s += size) {
      if ((occupied & (((1 << size) - 1) << s)) == 0) return size;
    }
  }
  return 0;
}

TEST(MigProperty, FindStartKeepsTheLargestHoleAmongTheStartsThatFit) {
  std::mt19937 rng(11);
  const auto& table = *MigProfilesFor("A100-40GB");
  for (int round = 0; round < 3000; ++round) {
    MigLayout layout;
    for (int step = 0; step < static_cast<int>(rng() % 6); ++step) {
      const MigProfile& p = table[rng() % table.size()];
      const int start = p.starts[rng() % p.starts.size()];
      if (layout.CanPlaceAt(p, start)) layout.Place(p, start);
    }
    for (const MigProfile& p : table) {
      std::optional<int> expected;
      int best_room = -1;
      for (int start : p.starts) {
        if (!layout.CanPlaceAt(p, start)) continue;
        const int mask = ((1 << p.memory_slices) - 1) << start;
        const int room = LargestFreeAlignedRun(static_cast<uint8_t>(layout.occupied() | mask));
        if (room > best_room) best_room = room, expected = start;
      }
      ASSERT_EQ(layout.FindStart(p), expected) << p.name << " on occupancy " << int{layout.occupied()};
    }
  }
}

}  // namespace
}  // namespace gpufed::placement
