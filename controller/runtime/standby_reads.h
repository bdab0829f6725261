#pragma once
// A standby replica's reads from the shared database (issue 38): workloads, decisions,
// explanations and the dashboard's history samples (server/workload_reads.h), and the read
// views the leader published (server/view_reads.h, read_view_table.h), so every replica
// answers the API's reads and the dashboard's itself.
//
// One read-only session: the store opened read-only on PostgreSQL (pgstore: the session
// is default_transaction_read_only, and every statement that is not a SELECT is refused
// before it is sent), so a standby never writes. The same scoped reads as the leader's
// Controller (reconcile/scoped_reads.h, reconcile/history.h) run on it, one at a time, and
// the published views are read on the same session; the elector has its own
// sessions and never waits for these. Every statement is bounded by the session's
// statement timeout (and the reply by the pg layer's row and byte limits, as the
// leader's reads are).
//
// When the database cannot be read (no connection, a statement timeout, a store no leader
// has migrated yet), the read is Unavailable with the reason and the session is dropped:
// the next read opens a new one, but not before `retry_after` has passed since a failed
// open (meanwhile the same reason is answered at once), so a database that is away costs
// one connection attempt a second, not one per request.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "controller/common/clock.h"
#include "controller/common/mutex.h"
#include "controller/pg/connection.h"
#include "controller/pg/connection_policy.h"
#include "controller/server/view_reads.h"
#include "controller/server/workload_reads.h"
#include "controller/store/store.h"

namespace gpufed::runtime {

struct StandbyReadsOptions {
  // Every statement of the read session (pg::ConnectOptions::statement_timeout).
  Duration statement_timeout = Duration::FromSeconds(5);
  Duration retry_after = Duration::FromSeconds(1);
};

class StandbyReads final : public server::WorkloadReads, public server::ViewReads {
 public:
  // The session the reads run on: the store, and the same session's connection for the
  // published views (null: none are read; owned by `store`).
  struct Session {
    std::unique_ptr<store::Store> store;
    pg::Connection* sql = nullptr;
  };
  // Opens the session; an error is answered as Unavailable.
  using Opener = std::function<Result<Session>()>;
  // Opens the store read-only on a session `policy` connects, every statement bounded by
  // `statement_timeout`; never migrates (a schema this binary does not read is an error).
  static Opener PostgresOpener(const pg::ConnectionPolicy& policy, Duration statement_timeout);
  // Reads through read-only sessions that `policy` connects (PostgresOpener).
  static std::unique_ptr<StandbyReads> OnPostgres(const pg::ConnectionPolicy& policy, const Clock& clock,
                                                  const StandbyReadsOptions& options = {});
  StandbyReads(Opener open, const Clock& clock, const StandbyReadsOptions& options = {})
      : open_(std::move(open)), clock_(clock), options_(options) {}

  Result<std::vector<store::WorkloadRecord>> List(const std::string& caller, const std::string& owner) override
      EXCLUDES(mu_);
  Result<store::WorkloadRecord> Get(const reconcile::WorkloadRef& ref, const std::string& caller) override
      EXCLUDES(mu_);
  Result<std::vector<store::DecisionRow>> Decisions(const reconcile::WorkloadRef& ref,
                                                    const std::string& caller) override EXCLUDES(mu_);
  Result<nlohmann::json> Explain(const reconcile::WorkloadRef& ref, const std::string& caller) override EXCLUDES(mu_);
  Result<nlohmann::json> History(const std::string& caller, std::optional<Duration> since, Duration now) override
      EXCLUDES(mu_);
  // Unavailable (with the reason) when no view was published yet, too.
  Result<server::PublishedView> ReadView(std::string_view name) override EXCLUDES(mu_);

 private:
  // Runs `read` on the session (opened first when there is none), mapping a database
  // that cannot be read to Unavailable.
  template <typename T>
  Result<T> Run(const std::function<Result<T>(Session&)>& read) EXCLUDES(mu_);
  Status OpenLocked() REQUIRES(mu_);

  const Opener open_;
  const Clock& clock_;
  const StandbyReadsOptions options_;
  Mutex mu_;
  Session session_ GUARDED_BY(mu_);
  Status open_failure_ GUARDED_BY(mu_);  // the last failed open, answered until retry_after
  Duration failed_at_ GUARDED_BY(mu_);
};

}  // namespace gpufed::runtime
