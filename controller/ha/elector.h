#pragma once
// Leader election on the lease row (lease.h), as a state machine its owner drives: call
// Step() when the Duration it last returned has passed (a thread that sleeps, or a test
// that advances a ManualClock). Time is the injected local monotonic Clock; whether the
// lease is free or expired is the database's judgement (clock_timestamp()), never this
// clock's.
//
//   standby --(lease free or expired: taken, epoch + 1)--> leader
//   standby --(lease live but its leader's session ended, lease.h's session lock:
//              taken at once, epoch + 1)--> leader
//   leader  --(renewed every retry_period)--> leader
//   leader  --(renew_deadline passed on the LOCAL clock since the last successful renew,
//              or the database names another holder)--> standby
//
// The local deadline is measured from when the last successful renew was SENT, so it ends
// before the database's expiry (lease_duration from when the database ran it) by at least
// lease_duration - renew_deadline: a leader whose renewals fail (the database away, a
// partition, a pause) stops by itself before anyone can take over. A replica that stopped
// leading takes the lease again only as a new term (a new epoch), never by renewing the
// old one: each false -> true of IsLeader() is a new epoch, and the old epoch's writes are
// fenced. The epoch can also change while IsLeader() stays true: a renewal that the
// database judged late (its lease had lapsed by the database's clock, say after a failover
// to a server whose clock is ahead) makes a new epoch. A term is therefore identified by
// Token()->epoch, not by IsLeader() alone: the owner compares the epoch it began its term
// with and, when it differs, starts over as a new leader (reloads its state).
//
// Thread-safety: Step() and Release() from one thread; IsLeader, Token, Counters, Observed and
// LastError from any thread (a pass checking it leads, /metrics, /readyz).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "controller/common/clock.h"
#include "controller/common/duration.h"
#include "controller/common/mutex.h"
#include "controller/ha/fence.h"
#include "controller/ha/lease.h"
#include "controller/pg/connection.h"

namespace gpufed::ha {

struct ElectorOptions {
  std::string lease_name = "gpufed-leader";
  // Unique per process (host, PID and a random part, say): two processes with one identity
  // would renew each other's lease.
  std::string identity;
  Duration lease_duration = Duration::FromSeconds(15);
  Duration renew_deadline = Duration::FromSeconds(10);
  Duration retry_period = Duration::FromSeconds(2);

  // InvalidArgument unless 0 < retry_period < renew_deadline < lease_duration and the
  // identity and lease name are non-empty.
  Status Validate() const;
};

// What /metrics exports (gpufed_leader_changes_total, gpufed_lease_renew_failures_total).
struct ElectorCounters {
  // New epochs this replica saw the lease take (its own takeovers included).
  uint64_t leader_changes = 0;
  // Renewals that did not succeed while this replica led (an error, or another holder).
  uint64_t renew_failures = 0;
};

// Opens a connection for the elector (again after one is lost).
using ConnectFunction = std::function<Result<std::unique_ptr<pg::Connection>>()>;

class Elector {
 public:
  // `clock` must outlive the Elector.
  static Result<std::unique_ptr<Elector>> Create(ElectorOptions options, const Clock& clock, ConnectFunction connect);

  // Gives up leadership if the renew deadline has passed; then, when the retry period has
  // passed since the last attempt, renews or tries to take the lease (one statement, which
  // may wait for fenced writes in flight). Returns how long until the next Step is due.
  Duration Step() EXCLUDES(mu_);

  // True while this replica leads by its own clock: it took or renewed the lease, and less
  // than renew_deadline has passed since that renewal was sent.
  bool IsLeader() const EXCLUDES(mu_);
  // The fencing token of the current term while IsLeader().
  std::optional<FenceToken> Token() const EXCLUDES(mu_);
  ElectorCounters Counters() const EXCLUDES(mu_);
  // The lease as the last attempt read it (who leads, epoch, expiry: /readyz), if any.
  std::optional<LeaseRecord> Observed() const EXCLUDES(mu_);
  // The last attempt's error (OK after a success or a plain "held by another").
  Status LastError() const EXCLUDES(mu_);

  // Ends this replica's lease now if it leads (a clean stop), so a standby need not wait
  // for the expiry. Stops leading either way. From Step's thread (it uses the connection).
  Status Release() EXCLUDES(mu_);

  const ElectorOptions& options() const { return options_; }

 private:
  Elector(ElectorOptions options, const Clock& clock, ConnectFunction connect)
      : options_(std::move(options)), clock_(clock), connect_(std::move(connect)) {}
  bool LeadingLocked(Duration now) const REQUIRES(mu_);
  void ObserveLocked(const LeaseRecord& record) REQUIRES(mu_);
  Result<LeaseAttempt> Attempt(int64_t held_epoch);

  const ElectorOptions options_;
  const Clock& clock_;
  const ConnectFunction connect_;
  std::unique_ptr<pg::Connection> connection_;  // Step's thread only
  int64_t session_locked_epoch_ = 0;             // Step's thread only: the term whose session lock it holds

  mutable Mutex mu_;
  bool leading_ GUARDED_BY(mu_) = false;
  int64_t epoch_ GUARDED_BY(mu_) = 0;            // the current term's, while leading_
  Duration renew_by_ GUARDED_BY(mu_);            // local: leading ends here
  Duration next_attempt_ GUARDED_BY(mu_);        // local: the next attempt is due
  std::optional<LeaseRecord> observed_ GUARDED_BY(mu_);
  ElectorCounters counters_ GUARDED_BY(mu_);
  Status last_error_ GUARDED_BY(mu_);
};

}  // namespace gpufed::ha
