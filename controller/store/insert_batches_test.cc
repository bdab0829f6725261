#include "controller/store/insert_batches.h"

#include <gtest/gtest.h>

#include <array>
#include <numeric>
#include <random>
#include <vector>

namespace gpufed::store {
namespace {

// The rows each statement takes, as the store splits them (and always all of them).
std::vector<size_t> Split(const std::vector<size_t>& sizes, Batching batching = Batching::kLongest) {
  std::vector<size_t> out = StatementSizes(sizes, batching);
  EXPECT_EQ(std::accumulate(out.begin(), out.end(), size_t{0}), sizes.size());
  return out;
}

TEST(InsertBatches, SmallRowsGoSixtyFourToAnInsert) {
  EXPECT_EQ(Split(std::vector<size_t>(8, 600)), (std::vector<size_t>{8}));
  EXPECT_EQ(Split(std::vector<size_t>(64, 600)), (std::vector<size_t>{64}));
  EXPECT_EQ(Split(std::vector<size_t>(200, 600)), (std::vector<size_t>{64, 64, 64, 8}));
  EXPECT_EQ(RowsInNextInsert({}), 0u);
  EXPECT_TRUE(Split({}).empty());
}

// A group of large spec texts (bodies near a raised --max-body) never makes one statement
// of more than kBytesPerInsert, however many rows it has.
TEST(InsertBatches, LargeRowsAreSplitByTheirBytes) {
  const size_t mib = size_t{1} << 20;
  EXPECT_EQ(Split(std::vector<size_t>(5, 3 * mib)), (std::vector<size_t>{2, 2, 1}));
  EXPECT_EQ(Split({kBytesPerInsert, 1, 1}), (std::vector<size_t>{1, 2}));
  // A row larger than the limit is an INSERT of its own, between the rows around it.
  EXPECT_EQ(Split({10, 3 * kBytesPerInsert, 10, 10}), (std::vector<size_t>{1, 1, 2}));
  std::vector<size_t> mixed(100, 600);
  mixed[30] = kBytesPerInsert - size_t{600} * 30;  // fills the first INSERT exactly
  EXPECT_EQ(Split(mixed), (std::vector<size_t>{31, 64, 5}));
}

// A pass's rows go in powers of two: 13 rows are 8 + 4 + 1, never a text of 13.
TEST(InsertBatches, PowersOfTwoTakeTheLargestWithinTheLimits) {
  EXPECT_EQ(Split(std::vector<size_t>(13, 600), Batching::kPowersOfTwo), (std::vector<size_t>{8, 4, 1}));
  EXPECT_EQ(Split(std::vector<size_t>(64, 600), Batching::kPowersOfTwo), (std::vector<size_t>{64}));
  EXPECT_EQ(Split(std::vector<size_t>(130, 600), Batching::kPowersOfTwo), (std::vector<size_t>{64, 64, 2}));
  const size_t mib = size_t{1} << 20;
  EXPECT_EQ(Split(std::vector<size_t>(3, 3 * mib), Batching::kPowersOfTwo), (std::vector<size_t>{2, 1}));
  // Whatever the sizes: every statement a power of two, within both limits.
  std::mt19937 rng(11);
  for (int round = 0; round < 200; ++round) {
    std::vector<size_t> sizes(rng() % 300);
    for (size_t& s : sizes) s = rng() % 4 == 0 ? rng() % (3 * mib) : rng() % 2000;
    size_t done = 0;
    for (const size_t rows : Split(sizes, Batching::kPowersOfTwo)) {
      EXPECT_EQ(rows & (rows - 1), 0u) << rows;
      EXPECT_LE(rows, kRowsPerInsert);
      size_t bytes = 0;
      for (size_t i = done; i < done + rows; ++i) bytes += sizes[i];
      EXPECT_TRUE(rows == 1 || bytes <= kBytesPerInsert) << bytes;
      done += rows;
    }
  }
}

TEST(InsertBatches, ValuesListsNumberTheirParametersRowByRow) {
  EXPECT_EQ(ValuesOf(2, 3), "($1,$2,$3),($4,$5,$6)");
  EXPECT_EQ(ValuesOf(1, 1), "($1)");
  const std::array<const char*, 2> types = {"TEXT", "BIGINT"};
  EXPECT_EQ(TypedValuesOf(2, types), "(CAST($1 AS TEXT),CAST($2 AS BIGINT)),(CAST($3 AS TEXT),CAST($4 AS BIGINT))");
}

}  // namespace
}  // namespace gpufed::store
