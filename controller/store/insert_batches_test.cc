#include "controller/store/insert_batches.h"

#include <gtest/gtest.h>

#include <vector>

namespace gpufed::store {
namespace {

// Splits `sizes` as store_rows.cc does: the rows each INSERT takes, in order.
std::vector<size_t> Split(const std::vector<size_t>& sizes) {
  std::vector<size_t> out;
  for (size_t done = 0; done < sizes.size();) {
    const size_t rows = RowsInNextInsert(std::span<const size_t>(sizes).subspan(done));
    EXPECT_GT(rows, 0u);
    if (rows == 0) break;
    out.push_back(rows);
    done += rows;
  }
  return out;
}

TEST(InsertBatches, SmallRowsGoSixtyFourToAnInsert) {
  EXPECT_EQ(Split(std::vector<size_t>(8, 600)), (std::vector<size_t>{8}));
  EXPECT_EQ(Split(std::vector<size_t>(64, 600)), (std::vector<size_t>{64}));
  EXPECT_EQ(Split(std::vector<size_t>(200, 600)), (std::vector<size_t>{64, 64, 64, 8}));
  EXPECT_EQ(RowsInNextInsert({}), 0u);
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

}  // namespace
}  // namespace gpufed::store
