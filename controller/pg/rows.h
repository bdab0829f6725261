#pragma once
// A statement's reply, copied out of libpq's results into memory gpufed owns (so a Rows
// outlives the connection) with typed access by column name. Cells are text (gpufed sends
// and reads the text format only): Int64 and Bool parse PostgreSQL's text forms.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "controller/common/status.h"

namespace gpufed::pg {

class Rows {
 public:
  Rows() = default;

  size_t size() const { return cells_.empty() || columns_.empty() ? 0 : cells_.size() / columns_.size(); }
  bool empty() const { return size() == 0; }
  const std::vector<std::string>& columns() const { return columns_; }
  // The command tag ("INSERT 0 1", "UPDATE 3", "COMMIT", "ROLLBACK", ...).
  const std::string& command_tag() const { return command_tag_; }
  // Rows an INSERT, UPDATE, DELETE, MERGE, SELECT or COPY touched (PQcmdTuples); 0 for others.
  int64_t affected() const { return affected_; }

  // NotFound when the reply has no such column (a bug in the caller's SQL).
  Result<size_t> Column(std::string_view name) const;
  // Out-of-range rows or unknown columns are errors, never undefined behaviour.
  Result<bool> IsNull(size_t row, std::string_view column) const;
  Result<std::optional<std::string>> Cell(size_t row, std::string_view column) const;
  // By position (0-based), for callers that address columns as SQL does (controller/pgstore:
  // a reply may repeat a name, `SELECT count(*), count(*)`).
  Result<std::optional<std::string>> CellAt(size_t row, size_t column) const;
  // A NULL is an error for these three: use Cell for nullable columns.
  Result<std::string> Text(size_t row, std::string_view column) const;
  Result<int64_t> Int64(size_t row, std::string_view column) const;
  Result<bool> Bool(size_t row, std::string_view column) const;

  // Filled by the connection while it reads a reply.
  void SetColumns(std::vector<std::string> columns) { columns_ = std::move(columns); }
  void AppendCell(std::optional<std::string> cell) { cells_.push_back(std::move(cell)); }
  void SetCommand(std::string tag, int64_t affected) {
    command_tag_ = std::move(tag);
    affected_ = affected;
  }

 private:
  Result<std::string> NonNull(size_t row, std::string_view column) const;

  std::vector<std::string> columns_;
  std::vector<std::optional<std::string>> cells_;  // row-major
  std::string command_tag_;
  int64_t affected_ = 0;
};

}  // namespace gpufed::pg
