#pragma once
// The check that a statement of the Store is portable SQL: the same text means the same
// to SQLite 3.40 and PostgreSQL 15 (sql.h; README.md, "Portable SQL"). store_sql_test
// runs it on every statement the Store prepares or executes, so a query that only one
// engine takes fails a test rather than the PostgreSQL backend in production.
//
// Outside string literals ('...') and comments, a portable statement has:
//  1. placeholders only as `$n`: no `?`, `?NNN`, `:name`, `@name`, `$name` (SQLite's) and
//     no `::` cast (PostgreSQL's; CAST(x AS t) is both engines');
//  2. no double-quoted, bracketed or backquoted names (SQLite takes an unknown "name" for
//     a string);
//  3. none of SQLite's own words: INSERT OR ..., REPLACE as a statement, PRAGMA, INDEXED
//     BY / NOT INDEXED, AUTOINCREMENT, GLOB, IFNULL, IIF, GROUP_CONCAT, BEGIN IMMEDIATE /
//     EXCLUSIVE / DEFERRED, ATTACH, VACUUM, and no SQLite function that PostgreSQL lacks
//     or reads differently (last_insert_rowid, changes, total_changes, strftime,
//     datetime, julianday, unixepoch, json*): ids come back with RETURNING, rows changed
//     from Statement::RowsChanged;
//  4. `rowid` only over tables whose PostgreSQL DDL gives them a column of that name
//     (kTablesWithRowidColumn), never _rowid_ or oid;
//  5. `IS` / `IS NOT` only before NULL, TRUE, FALSE or DISTINCT FROM (SQLite's `a IS NOT
//     b` compares values; PostgreSQL's is IS DISTINCT FROM);
//  6. LIMIT n [OFFSET m], never LIMIT m, n;
//  7. in an upsert's DO UPDATE (SET values and WHERE), every column qualified: by the
//     table's name for the stored row, by `excluded.` for the proposed one (PostgreSQL
//     finds an unqualified column ambiguous there).
#include <array>
#include <string_view>

#include "controller/common/status.h"

namespace gpufed::store {

// The tables whose PostgreSQL DDL declares `rowid BIGINT GENERATED ALWAYS AS IDENTITY`
// (schema_postgres.cc): the Store orders and marks them by insertion.
inline constexpr std::array<std::string_view, 2> kTablesWithRowidColumn = {"attempts", "actions"};

// OK when `sql` keeps to the rules above; InvalidArgument naming the first rule broken.
Status CheckPortableSql(std::string_view sql);

}  // namespace gpufed::store
