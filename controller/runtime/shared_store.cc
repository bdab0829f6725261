#include "controller/runtime/shared_store.h"

#include "controller/pg/connection_policy.h"
#include "controller/pgjournal/pg_journal_storage.h"
#include "controller/pgstore/connection.h"

namespace gpufed::runtime {

// The store in PostgreSQL, every write transaction fenced by the term's token, on the
// loop's session. Submission groups commit in the journal's transactions instead
// (StoreWritesInJournalTransaction), on the journal's session, so a submission never
// waits for a pass's transaction (store_submit.cc). Each session names itself as the
// writer its state_totals rows are kept under (`loop`, `api`), so the two never wait for
// each other's rows.
Result<std::unique_ptr<store::Store>> OpenSharedStore(const SharedStore& shared) {
  Result<pg::ConnectionPolicy> policy = pg::ConnectionPolicy::Parse(shared.uri);
  if (!policy.ok()) return Status(policy.status().code(), "--store: " + policy.status().message());
  pgstore::OpenOptions options;
  options.writer = "loop";
  Result<std::unique_ptr<pgstore::PgConnection>> connection = pgstore::PgConnection::Open(*policy, options);
  if (!connection.ok()) {
    return Status(connection.status().code(), "--store " + policy->Redacted() + ": " + connection.status().message());
  }
  (*connection)->SetWriteGuard(shared.fence);
  Result<std::unique_ptr<store::Store>> store = store::Store::OpenOn(std::move(connection).value());
  if (!store.ok())
    return Status(store.status().code(), "--store " + policy->Redacted() + ": " + store.status().message());
  return store;
}

reconcile::StoreWritesInJournal StoreWritesInJournalTransaction() {
  return [](audit::CommitScope& scope, std::string_view writer, const store::RidingWrites& writes) -> Status {
    pg::Transaction* tx = pgjournal::TransactionOf(scope);
    if (tx == nullptr) return FailedPrecondition("the store's rows ride only in a PostgreSQL journal's transaction");
    // Fenced already: the journal's transaction ran the term's fence when it began.
    Result<std::unique_ptr<pgstore::PgConnection>> db = pgstore::PgConnection::Within(*tx, std::string(writer));
    if (!db.ok()) return db.status();
    return writes(**db, pgjournal::RefusalFailsCommit(scope) ? store::RefusedRidingWrite::kFailsTheCommit
                                                             : store::RefusedRidingWrite::kUndoneByTheWrites);
  };
}

}  // namespace gpufed::runtime
