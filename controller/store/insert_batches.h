#pragma once
// How a run of rows is split into multi-row statements (store_rows.cc, store_ledger.cc):
// few statements for a submission group or a pass's changes, yet no statement that grows
// with the run without bound. Internal to the store.
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "controller/common/status.h"
#include "controller/store/sql.h"

namespace gpufed::store {

// Rows per statement: enough that a group of the usual size (8-16 at 16 clients) is one
// statement per table, and at most 64 distinct texts per table are prepared per session
// (the PostgreSQL session's statement cache holds 256). 64 rows of the workloads table's
// 23 columns are 1,472 parameters, far below either engine's limit (SQLite 32,766,
// PostgreSQL 65,535).
inline constexpr size_t kRowsPerInsert = 64;
// Text per statement: a statement's parameters travel in one message (PostgreSQL refuses
// one of 1 GiB or more, and holds each whole in memory), and a spec text may be as large
// as the API's --max-body. A row larger than this is a statement of its own.
inline constexpr size_t kBytesPerInsert = size_t{8} << 20;

// How many of the rows whose text sizes are `row_bytes` the next INSERT takes: the longest
// prefix within kRowsPerInsert rows and kBytesPerInsert bytes, and always at least one
// row (0 only when there is none).
size_t RowsInNextInsert(std::span<const size_t> row_bytes);

// How a run of rows is cut into statements.
enum class Batching {
  // As many as RowsInNextInsert allows: a submission group is one statement per table.
  kLongest,
  // The largest power of two within that: a pass writes any number of rows, and powers of
  // two keep the texts a session prepares for one table to seven (1, 2, 4, ..., 64).
  kPowersOfTwo,
};

// The rows per statement, in order, for rows whose text sizes are `row_bytes`; they sum
// to row_bytes.size().
std::vector<size_t> StatementSizes(std::span<const size_t> row_bytes, Batching batching);

// Writes `rows` on `db` in the statements StatementSizes cuts them into (a row's text size
// is `text_bytes(row)`): `sql_for(n)` is the statement for n rows, `bind(statement, i, row)`
// binds the i-th of them (from 0). Each statement is sent with the next (RunWithNext), so
// the first refusal is the error of the caller's next statement or of this call. `lookup`
// says how each statement finds its rows (sql.h).
template <typename Row, typename TextBytes, typename SqlFor, typename Bind>
Status WriteInStatements(Connection& db, std::span<const Row> rows, Batching batching, RowLookup lookup,
                         TextBytes text_bytes, SqlFor sql_for, Bind bind) {
  std::vector<size_t> row_bytes;
  row_bytes.reserve(rows.size());
  for (const Row& row : rows) row_bytes.push_back(text_bytes(row));
  size_t done = 0;
  for (const size_t n : StatementSizes(row_bytes, batching)) {
    Result<std::unique_ptr<Statement>> s =
        lookup == RowLookup::kByKey ? db.PrepareByKey(sql_for(n)) : db.Prepare(sql_for(n));
    if (!s.ok()) return s.status();
    for (size_t i = 0; i < n; ++i) bind(**s, i, rows[done + i]);
    GPUFED_RETURN_IF_ERROR((*s)->RunWithNext());
    done += n;
  }
  return Status::Ok();
}

// "($1,...,$c),($c+1,...)": `rows` rows of `columns` parameters.
std::string ValuesOf(size_t rows, int columns);
// The same with every parameter cast to its column's type, `types[i]` for column i (a
// VALUES list joined in an UPDATE: PostgreSQL would read untyped parameters as text).
std::string TypedValuesOf(size_t rows, std::span<const char* const> types);

}  // namespace gpufed::store
