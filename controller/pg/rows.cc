#include "controller/pg/rows.h"

#include <charconv>

namespace gpufed::pg {

Result<size_t> Rows::Column(std::string_view name) const {
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (columns_[i] == name) return i;
  }
  return NotFound("the reply has no column " + std::string(name));
}

Result<std::optional<std::string>> Rows::Cell(size_t row, std::string_view column) const {
  auto index = Column(column);
  if (!index.ok()) return index.status();
  if (row >= size()) {
    return NotFound("row " + std::to_string(row) + " of a reply with " + std::to_string(size()) + " rows");
  }
  return cells_[row * columns_.size() + *index];
}

Result<std::optional<std::string>> Rows::CellAt(size_t row, size_t column) const {
  if (row >= size() || column >= columns_.size()) {
    return NotFound("cell (" + std::to_string(row) + ", " + std::to_string(column) + ") of a reply with " +
                    std::to_string(size()) + " rows and " + std::to_string(columns_.size()) + " columns");
  }
  return cells_[row * columns_.size() + column];
}

Result<bool> Rows::IsNull(size_t row, std::string_view column) const {
  auto cell = Cell(row, column);
  if (!cell.ok()) return cell.status();
  return !cell->has_value();
}

Result<std::string> Rows::NonNull(size_t row, std::string_view column) const {
  auto cell = Cell(row, column);
  if (!cell.ok()) return cell.status();
  if (!cell->has_value()) {
    return Internal("column " + std::string(column) + " of row " + std::to_string(row) + " is NULL");
  }
  return **cell;
}

Result<std::string> Rows::Text(size_t row, std::string_view column) const { return NonNull(row, column); }

Result<int64_t> Rows::Int64(size_t row, std::string_view column) const {
  auto text = NonNull(row, column);
  if (!text.ok()) return text.status();
  int64_t value = 0;
  const char* end = text->data() + text->size();
  auto [ptr, error] = std::from_chars(text->data(), end, value);
  if (error != std::errc() || ptr != end) {
    return Internal("column " + std::string(column) + " of row " + std::to_string(row) + " is not an integer");
  }
  return value;
}

Result<bool> Rows::Bool(size_t row, std::string_view column) const {
  auto text = NonNull(row, column);
  if (!text.ok()) return text.status();
  if (*text == "t") return true;
  if (*text == "f") return false;
  return Internal("column " + std::string(column) + " of row " + std::to_string(row) + " is not a boolean");
}

}  // namespace gpufed::pg
