#include "controller/store/insert_batches.h"

namespace gpufed::store {

size_t RowsInNextInsert(std::span<const size_t> row_bytes) {
  if (row_bytes.empty()) return 0;
  size_t rows = 1;
  size_t bytes = row_bytes[0];
  while (rows < row_bytes.size() && rows < kRowsPerInsert && bytes + row_bytes[rows] <= kBytesPerInsert) {
    bytes += row_bytes[rows];
    ++rows;
  }
  return rows;
}

}  // namespace gpufed::store
