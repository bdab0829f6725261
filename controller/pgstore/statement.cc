#include "controller/pgstore/statement.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <span>

#include "controller/common/utf8.h"

namespace gpufed::pgstore {
namespace {

bool StartsWith(const std::string& text, std::string_view prefix) { return text.rfind(prefix, 0) == 0; }

}  // namespace

std::string DoubleText(double v) {
  // PostgreSQL's float8in reads these words (any case); to_chars would write "inf",
  // "-nan", and "-nan" it refuses.
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  std::array<char, 32> buffer{};
  auto [end, error] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), v);
  return error == std::errc() ? std::string(buffer.data(), end) : std::string("NaN");
}

std::string StatementPurpose(const std::string& sql) {
  constexpr size_t kMaxChars = 60;
  std::string out = "store statement `";
  size_t kept = 0;
  bool space = false;
  for (char c : sql) {
    const bool blank = c == ' ' || c == '\n' || c == '\t' || c == '\r';
    if (blank) {
      space = kept > 0;
      continue;
    }
    if (kept >= kMaxChars) {
      out += "...";
      break;
    }
    if (space) out += ' ';
    space = false;
    out += c;
    ++kept;
  }
  return out + "`";
}

store::Statement& PgStatement::Set(int i, std::string text, bool is_text) {
  // Out of range binds are kept out of the vector: the server then says how many
  // parameters the statement has, as SQLite refuses an index it does not have.
  if (i >= 1 && i <= 65535) {
    if (static_cast<size_t>(i) > params_.size()) params_.resize(static_cast<size_t>(i));
    params_[static_cast<size_t>(i) - 1] = Value{std::move(text), is_text};
  }
  rows_.reset();  // a new binding means a new run, as SQLite's reset
  return *this;
}

Status PgStatement::CheckText() const {
  for (size_t i = 0; i < params_.size(); ++i) {
    const Value& value = params_[i];
    if (!value.is_text || !value.text) continue;
    const std::string where = purpose_ + ": text bound to $" + std::to_string(i + 1);
    if (size_t nul = value.text->find('\0'); nul != std::string::npos) {
      return InvalidArgument(where + " holds a NUL byte at offset " + std::to_string(nul) +
                             ", which PostgreSQL's TEXT cannot store; nothing was written");
    }
    if (auto bad = FirstInvalidUtf8(*value.text)) {
      return InvalidArgument(where + " is not UTF-8 at offset " + std::to_string(*bad) +
                             ", which PostgreSQL's TEXT cannot store; nothing was written");
    }
  }
  return Status::Ok();
}

std::vector<pg::Param> PgStatement::Params() const {
  std::vector<pg::Param> params;
  params.reserve(params_.size());
  for (const Value& value : params_) params.push_back(value.text ? pg::Param(*value.text) : pg::Param::Null());
  return params;
}

void PgStatement::Before() {
  if (PlansByKey()) connection_.DeferStatement("the plan by key of " + purpose_, kPlanByKey, {});
}

void PgStatement::After() {
  if (PlansByKey()) connection_.DeferStatement("the session's plan settings after " + purpose_, kPlanAsSession, {});
}

Status PgStatement::RunWithNext() {
  if (!owner_.InTransaction()) return store::Statement::Run();
  GPUFED_RETURN_IF_ERROR(CheckText());
  Before();
  connection_.DeferStatement(purpose_, sql_, Params());
  After();
  rows_.reset();
  changes_ = 0;
  return Status::Ok();
}

Status PgStatement::Run() {
  GPUFED_RETURN_IF_ERROR(CheckText());
  const std::vector<pg::Param> params = Params();
  // A named prepared statement of the connection (its cache): parsed once per session and,
  // unless it is planned by key, planned once too.
  Before();
  Result<pg::Rows> rows = connection_.ExecPrepared(purpose_, sql_, std::span<const pg::Param>(params));
  // A failed run aborted the transaction, and its rollback (to a savepoint too) undoes
  // kPlanByKey: nothing may be queued before that rollback.
  if (rows.ok()) After();
  if (!rows.ok()) {
    // 25006: the session is read-only (a read-only store, or a standby): refused as a
    // read-only SQLite store refuses, so callers see one code for it.
    if (read_only_ && rows.status().message().find("SQLSTATE 25006") != std::string::npos) {
      return FailedPrecondition(store::kReadOnlyRefusal);
    }
    return rows.status();
  }
  const std::string& tag = rows->command_tag();
  const bool writes =
      StartsWith(tag, "INSERT") || StartsWith(tag, "UPDATE") || StartsWith(tag, "DELETE") || StartsWith(tag, "MERGE");
  changes_ = writes ? rows->affected() : 0;
  rows_ = std::move(rows).value();
  next_row_ = 0;
  return Status::Ok();
}

Result<bool> PgStatement::Step() {
  if (!rows_) GPUFED_RETURN_IF_ERROR(Run());
  if (next_row_ < rows_->size()) {
    ++next_row_;
    return true;
  }
  rows_.reset();  // done: the next Step runs it again
  return false;
}

std::optional<std::string> PgStatement::Cell(int col) const {
  if (!rows_ || next_row_ == 0 || col < 0) return std::nullopt;
  Result<std::optional<std::string>> cell = rows_->CellAt(next_row_ - 1, static_cast<size_t>(col));
  return cell.ok() ? *cell : std::nullopt;
}

std::string PgStatement::Text(int col) const { return Cell(col).value_or(std::string()); }

int64_t PgStatement::Int(int col) const {
  std::optional<std::string> text = Cell(col);
  if (!text || text->empty()) return 0;
  int64_t value = 0;
  const char* end = text->data() + text->size();
  auto [ptr, error] = std::from_chars(text->data(), end, value);
  if (error == std::errc() && ptr == end) return value;
  // A boolean expression reads as SQLite's 0/1; a NUMERIC (SUM of BIGINT) or a double
  // truncates toward zero, as sqlite3_column_int64 converts a REAL.
  if (*text == "t") return 1;
  if (*text == "f") return 0;
  const double d = std::strtod(text->c_str(), nullptr);
  if (std::isnan(d)) return 0;
  if (d >= 9.2233720368547758e18) return INT64_MAX;
  if (d <= -9.2233720368547758e18) return INT64_MIN;
  return static_cast<int64_t>(d);
}

double PgStatement::Real(int col) const {
  std::optional<std::string> text = Cell(col);
  if (!text || text->empty()) return 0;
  // from_chars (locale-independent) reads every digit float8out writes and its Infinity,
  // -Infinity and NaN.
  double value = 0;
  auto [ptr, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error == std::errc()) return value;
  return *text == "t" ? 1 : 0;
}

}  // namespace gpufed::pgstore
