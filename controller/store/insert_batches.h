#pragma once
// How a run of new rows is split into multi-row INSERTs (store_rows.cc): few statements
// for a submission group, yet no statement that grows with the group without bound.
// Internal to the store.
#include <cstddef>
#include <span>

namespace gpufed::store {

// Rows per INSERT: enough that a group of the usual size (8-16 at 16 clients) is one
// statement per table, and at most 64 distinct texts per table are prepared per session
// (the PostgreSQL session's statement cache holds 256). 64 rows of the workloads table's
// 23 columns are 1,472 parameters, far below either engine's limit (SQLite 32,766,
// PostgreSQL 65,535).
inline constexpr size_t kRowsPerInsert = 64;
// Text per INSERT: a statement's parameters travel in one message (PostgreSQL refuses one
// of 1 GiB or more, and holds each whole in memory), and a spec text may be as large as
// the API's --max-body. A row larger than this is an INSERT of its own, as every row was.
inline constexpr size_t kBytesPerInsert = size_t{8} << 20;

// How many of the rows whose text sizes are `row_bytes` the next INSERT takes: the longest
// prefix within kRowsPerInsert rows and kBytesPerInsert bytes, and always at least one
// row (0 only when there is none).
size_t RowsInNextInsert(std::span<const size_t> row_bytes);

}  // namespace gpufed::store
