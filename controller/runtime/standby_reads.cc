#include "controller/runtime/standby_reads.h"

#include "controller/pgstore/connection.h"
#include "controller/reconcile/history.h"
#include "controller/reconcile/scoped_reads.h"
#include "controller/runtime/read_view_table.h"

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
  return [policy, timeout = statement_timeout]() -> Result<Session> {
    pgstore::OpenOptions o;
    o.read_only = true;
    o.connect.statement_timeout = timeout;
    Result<std::unique_ptr<pgstore::PgConnection>> connection = pgstore::PgConnection::Open(policy, o);
    if (!connection.ok()) {
      return Status(connection.status().code(), "--store " + policy.Redacted() + ": " + connection.status().message());
    }
    // The store owns the connection and keeps it for its life.
    pg::Connection* sql = &(*connection)->connection();
    // Read-only: checks the schema's version (FailedPrecondition before any leader has
    // migrated the store, or for another gpufed's), never migrates.
    Result<std::unique_ptr<store::Store>> opened = store::Store::OpenOn(std::move(connection).value());
    if (!opened.ok())
      return Status(opened.status().code(), "--store " + policy.Redacted() + ": " + opened.status().message());
    return Session{std::move(opened).value(), sql};
  };
}

std::unique_ptr<StandbyReads> StandbyReads::OnPostgres(const pg::ConnectionPolicy& policy, const Clock& clock,
                                                       const StandbyReadsOptions& options) {
  return std::make_unique<StandbyReads>(PostgresOpener(policy, options.statement_timeout), clock, options);
}

Status StandbyReads::OpenLocked() {
  if (session_.store != nullptr) return Status::Ok();
  if (!open_failure_.ok() && clock_.Now() < failed_at_ + options_.retry_after) return open_failure_;
  Result<Session> opened = open_();
  if (!opened.ok()) {
    open_failure_ = Unavailable(kCannotRead + opened.status().message());
    failed_at_ = clock_.Now();
    return open_failure_;
  }
  if (opened->store == nullptr || !opened->store->read_only()) return Internal("a standby's store must be read-only");
  open_failure_ = Status::Ok();
  session_ = std::move(opened).value();
  return Status::Ok();
}

template <typename T>
Result<T> StandbyReads::Run(const std::function<Result<T>(Session&)>& read) {
  MutexLock lock(mu_);
  GPUFED_RETURN_IF_ERROR(OpenLocked());
  Result<T> out = read(session_);
  if (!out.ok() && SessionFailed(out.status().code())) {
    session_ = Session{};  // the next read opens a new session
    return Unavailable(kCannotRead + out.status().message());
  }
  return out;
}

Result<std::vector<store::WorkloadRecord>> StandbyReads::List(const std::string& caller, const std::string& owner) {
  return Run<std::vector<store::WorkloadRecord>>(
      [&](Session& s) { return reconcile::ScopedWorkloads(*s.store, caller, owner); });
}

Result<store::WorkloadRecord> StandbyReads::Get(const reconcile::WorkloadRef& ref, const std::string& caller) {
  return Run<store::WorkloadRecord>([&](Session& s) { return reconcile::ScopedWorkload(*s.store, ref, caller); });
}

Result<std::vector<store::DecisionRow>> StandbyReads::Decisions(const reconcile::WorkloadRef& ref,
                                                                const std::string& caller) {
  return Run<std::vector<store::DecisionRow>>(
      [&](Session& s) { return reconcile::ScopedDecisions(*s.store, ref, caller); });
}

Result<nlohmann::json> StandbyReads::Explain(const reconcile::WorkloadRef& ref, const std::string& caller) {
  return Run<nlohmann::json>([&](Session& s) { return reconcile::ScopedExplanation(*s.store, ref, caller); });
}

Result<nlohmann::json> StandbyReads::History(const std::string& caller, std::optional<Duration> since, Duration now) {
  return Run<nlohmann::json>([&](Session& s) -> Result<nlohmann::json> {
    // The leader's History over the samples the store keeps for the window before `now`
    // (a day's, one a minute: the leader's own bound), answered by the leader's ToJson.
    reconcile::History history(s.store.get());
    GPUFED_RETURN_IF_ERROR(history.Restore(now));
    return history.ToJson(caller, since);
  });
}

Result<server::PublishedView> StandbyReads::ReadView(std::string_view name) {
  Result<server::PublishedView> view = Run<server::PublishedView>([&](Session& s) -> Result<server::PublishedView> {
    if (s.sql == nullptr) return NotFound("this standby reads no published views");
    return ReadPublishedView(*s.sql, name);
  });
  // Nothing to answer from yet: as unavailable as a database that cannot be read.
  if (view.status().code() == StatusCode::kNotFound) return Unavailable(view.status().message());
  return view;
}

}  // namespace gpufed::runtime
