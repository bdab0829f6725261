#include "controller/runtime/shared_store.h"

#include "controller/pg/connection_policy.h"
#include "controller/pgstore/connection.h"

namespace gpufed::runtime {

// The store in PostgreSQL, every write transaction fenced by the term's token: the loop's
// session, and one of their own for API submissions' group commits, so that a submission
// never waits for a pass's transaction (store_submit.cc). Each names itself as the writer
// its state_totals rows are kept under, so the two never wait for each other's rows.
Result<std::unique_ptr<store::Store>> OpenSharedStore(const SharedStore& shared) {
  Result<pg::ConnectionPolicy> policy = pg::ConnectionPolicy::Parse(shared.uri);
  if (!policy.ok()) return Status(policy.status().code(), "--store: " + policy.status().message());
  auto open = [&](const char* writer) -> Result<std::unique_ptr<pgstore::PgConnection>> {
    pgstore::OpenOptions options;
    options.writer = writer;
    Result<std::unique_ptr<pgstore::PgConnection>> connection = pgstore::PgConnection::Open(*policy, options);
    if (!connection.ok()) {
      return Status(connection.status().code(), "--store " + policy->Redacted() + ": " + connection.status().message());
    }
    (*connection)->SetWriteGuard(shared.fence);
    return connection;
  };
  Result<std::unique_ptr<pgstore::PgConnection>> connection = open("loop");
  if (!connection.ok()) return connection.status();
  Result<std::unique_ptr<pgstore::PgConnection>> submissions = open("api");
  if (!submissions.ok()) return submissions.status();
  Result<std::unique_ptr<store::Store>> store =
      store::Store::OpenOn(std::move(connection).value(), std::move(submissions).value());
  if (!store.ok())
    return Status(store.status().code(), "--store " + policy->Redacted() + ": " + store.status().message());
  return store;
}

}  // namespace gpufed::runtime
