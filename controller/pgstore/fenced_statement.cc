#include "controller/pgstore/fenced_statement.h"

namespace gpufed::pgstore {

Result<bool> FencedStatement::Step() {
  if (walking_ || connection_.InTransaction()) {
    Result<bool> row = inner_->Step();
    if (!row.ok() || !*row) walking_ = false;
    return row;
  }
  GPUFED_RETURN_IF_ERROR(connection_.Begin());  // runs the guard: a fenced write stops here
  Result<bool> row = inner_->Step();
  if (!row.ok()) {
    (void)connection_.Rollback();
    return row;
  }
  // COMMIT before the caller sees the outcome: OK must mean committed.
  GPUFED_RETURN_IF_ERROR(connection_.Commit());
  walking_ = *row;
  return row;
}

}  // namespace gpufed::pgstore
