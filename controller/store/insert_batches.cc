#include "controller/store/insert_batches.h"

#include <bit>

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

std::vector<size_t> StatementSizes(std::span<const size_t> row_bytes, Batching batching) {
  std::vector<size_t> sizes;
  for (size_t done = 0; done < row_bytes.size();) {
    size_t rows = RowsInNextInsert(row_bytes.subspan(done));
    if (batching == Batching::kPowersOfTwo) rows = std::bit_floor(rows);
    sizes.push_back(rows);
    done += rows;
  }
  return sizes;
}

namespace {

// `rows` rows of `columns` parameters, each written by `cell(out, n, column)`.
template <typename Cell>
std::string Rows(size_t rows, int columns, Cell cell) {
  std::string out;
  int n = 0;
  for (size_t row = 0; row < rows; ++row) {
    out += row == 0 ? "(" : ",(";
    for (int c = 0; c < columns; ++c) {
      if (c > 0) out += ',';
      cell(out, ++n, c);
    }
    out += ')';
  }
  return out;
}

}  // namespace

std::string ValuesOf(size_t rows, int columns) {
  return Rows(rows, columns, [](std::string& out, int n, int) {
    out += '$';
    out += std::to_string(n);
  });
}

std::string TypedValuesOf(size_t rows, std::span<const char* const> types) {
  return Rows(rows, static_cast<int>(types.size()), [&](std::string& out, int n, int column) {
    out += "CAST($";
    out += std::to_string(n);
    out += " AS ";
    out += types[static_cast<size_t>(column)];
    out += ')';
  });
}

}  // namespace gpufed::store
