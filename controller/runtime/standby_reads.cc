#include "controller/runtime/standby_reads.h"

#include "controller/pgstore/connection.h"
#include "controller/reconcile/scoped_reads.h"

namespace gpufed::runtime {
namespace {

constexpr char kCannotRead[] = "this standby cannot read the database now: ";

// Errors of the session or the server rather than of the request: the database cannot be
// read now (a lost connection, a statement timeout, a server shutting down).
bool SessionFailed(StatusCode code) {
  return code == StatusCode::kUnavailable || code == StatusCode::kDeadlineExceeded || code == StatusCode::kAborted ||
         code == StatusCode::kInternal || code == StatusCode::kDataLoss;
}

}  // namespace

StandbyReads::Opener StandbyReads::PostgresOpener(const pg::ConnectionPolicy& policy, Duration statement_timeout) {
  return [policy, timeout = statement_timeout]() -> Result<std::unique_ptr<store::Store>> {
    pgstore::OpenOptions o;
    o.read_only = true;
    o.connect.statement_timeout = timeout;
    Result<std::unique_ptr<pgstore::PgConnection>> connection = pgstore::PgConnection::Open(policy, o);
    if (!connection.ok()) {
      return Status(connection.status().code(), "--store " + policy.Redacted() + ": " + connection.status().message());
    }
    // Read-only: checks the schema's version (FailedPrecondition before any leader has
    // migrated the store, or for another gpufed's), never migrates.
    Result<std::unique_ptr<store::Store>> opened = store::Store::OpenOn(std::move(connection).value());
    if (!opened.ok())
      return Status(opened.status().code(), "--store " + policy.Redacted() + ": " + opened.status().message());
    return opened;
  };
}

std::unique_ptr<StandbyReads> StandbyReads::OnPostgres(const pg::ConnectionPolicy& policy, const Clock& clock,
                                                       const StandbyReadsOptions& options) {
  return std::make_unique<StandbyReads>(PostgresOpener(policy, options.statement_timeout), clock, options);
}

Status StandbyReads::OpenLocked() {
  if (store_ != nullptr) return Status::Ok();
  if (!open_failure_.ok() && clock_.Now() < failed_at_ + options_.retry_after) return open_failure_;
  Result<std::unique_ptr<store::Store>> opened = open_();
  if (!opened.ok()) {
    open_failure_ = Unavailable(kCannotRead + opened.status().message());
    failed_at_ = clock_.Now();
    return open_failure_;
  }
  if (!(*opened)->read_only()) return Internal("a standby's store must be read-only");
  open_failure_ = Status::Ok();
  store_ = std::move(opened).value();
  return Status::Ok();
}

template <typename T>
Result<T> StandbyReads::Run(const std::function<Result<T>(store::Store&)>& read) {
  MutexLock lock(mu_);
  GPUFED_RETURN_IF_ERROR(OpenLocked());
  Result<T> out = read(*store_);
  if (!out.ok() && SessionFailed(out.status().code())) {
    store_.reset();  // the next read opens a new session
    return Unavailable(kCannotRead + out.status().message());
  }
  return out;
}

Result<std::vector<store::WorkloadRecord>> StandbyReads::List(const std::string& caller, const std::string& owner) {
  return Run<std::vector<store::WorkloadRecord>>(
      [&](store::Store& s) { return reconcile::ScopedWorkloads(s, caller, owner); });
}

Result<store::WorkloadRecord> StandbyReads::Get(const reconcile::WorkloadRef& ref, const std::string& caller) {
  return Run<store::WorkloadRecord>([&](store::Store& s) { return reconcile::ScopedWorkload(s, ref, caller); });
}

Result<std::vector<store::DecisionRow>> StandbyReads::Decisions(const reconcile::WorkloadRef& ref,
                                                                const std::string& caller) {
  return Run<std::vector<store::DecisionRow>>(
      [&](store::Store& s) { return reconcile::ScopedDecisions(s, ref, caller); });
}

}  // namespace gpufed::runtime
