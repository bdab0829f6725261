#include "controller/ha/elector.h"

#include <algorithm>

namespace gpufed::ha {
namespace {

Duration Minus(Duration a, Duration b) { return Duration::FromMillis(a.millis() - b.millis()); }

}  // namespace

Status ElectorOptions::Validate() const {
  if (identity.empty()) return InvalidArgument("leader election: the replica's identity is empty");
  if (lease_name.empty()) return InvalidArgument("leader election: the lease name is empty");
  if (!(Duration() < retry_period && retry_period < renew_deadline && renew_deadline < lease_duration)) {
    return InvalidArgument("leader election: need 0 < retry period (" + retry_period.ToString() +
                           ") < renew deadline (" + renew_deadline.ToString() + ") < lease duration (" +
                           lease_duration.ToString() +
                           "): a leader must give up on its own clock before anyone can take over");
  }
  return Status::Ok();
}

Result<std::unique_ptr<Elector>> Elector::Create(ElectorOptions options, const Clock& clock, ConnectFunction connect) {
  GPUFED_RETURN_IF_ERROR(options.Validate());
  return std::unique_ptr<Elector>(new Elector(std::move(options), clock, std::move(connect)));
}

bool Elector::LeadingLocked(Duration now) const { return leading_ && now < renew_by_; }

void Elector::ObserveLocked(const LeaseRecord& record) {
  if (!observed_.has_value() || record.epoch > observed_->epoch) {
    // A replica's first look counts only when it made the epoch itself.
    if (observed_.has_value() || record.holder == options_.identity) ++counters_.leader_changes;
  }
  observed_ = record;
}

Result<LeaseAttempt> Elector::Attempt(int64_t held_epoch) {
  if (connection_ == nullptr || !connection_->Healthy()) {
    connection_.reset();
    session_locked_epoch_ = 0;  // a session lock ends with its session
    auto opened = connect_();
    if (!opened.ok()) return opened.status();
    connection_ = std::move(opened).value();
  }
  Result<LeaseAttempt> attempt =
      TryAcquireOrRenew(*connection_, options_.lease_name, options_.identity, held_epoch, options_.lease_duration);
  if (!attempt.ok()) return attempt;
  if (attempt->held) {
    // The term's session lock says "its leader's session is alive" (lease.h); taken once
    // per term. Failing to take it costs only a possibly early takeover, never safety.
    if (session_locked_epoch_ != attempt->lease.epoch) {
      if (session_locked_epoch_ != 0) (void)DropSessionLocks(*connection_);
      Result<bool> locked = TakeSessionLock(*connection_, options_.lease_name, attempt->lease.epoch);
      session_locked_epoch_ = locked.ok() && *locked ? attempt->lease.epoch : 0;
    }
    return attempt;
  }
  // A term of this replica's that ended lets its session lock go.
  if (session_locked_epoch_ != 0) {
    (void)DropSessionLocks(*connection_);
    session_locked_epoch_ = 0;
  }
  // A live lease whose leader's session ended (its process died) is taken now rather than
  // at its expiry: the leader's lock is free (lease.h).
  if (held_epoch == 0 && !attempt->lease.expired) {
    Result<LeaseAttempt> fast = TakeOverFromAnEndedSession(*connection_, options_.lease_name, options_.identity,
                                                           attempt->lease, options_.lease_duration);
    if (fast.ok() && fast->held) session_locked_epoch_ = fast->lease.epoch;
    return fast;
  }
  return attempt;
}

Duration Elector::Step() {
  const Duration sent = clock_.Now();
  int64_t held_epoch = 0;
  {
    MutexLock lock(mu_);
    if (leading_ && !LeadingLocked(sent)) leading_ = false;  // the renew deadline passed
    if (sent < next_attempt_) {
      Duration due = leading_ ? std::min(next_attempt_, renew_by_) : next_attempt_;
      return Minus(due, sent);
    }
    next_attempt_ = sent + options_.retry_period;
    // Only a term still alive is renewed; after a lapse the lease is taken anew.
    if (leading_) held_epoch = epoch_;
  }

  // The database call runs without the lock: IsLeader() never waits for the network.
  Result<LeaseAttempt> attempt = Attempt(held_epoch);

  const Duration after = clock_.Now();
  MutexLock lock(mu_);
  if (!attempt.ok()) {
    if (leading_) ++counters_.renew_failures;
    last_error_ = attempt.status();
  } else {
    last_error_ = Status::Ok();
    ObserveLocked(attempt->lease);
    if (attempt->held) {
      leading_ = true;
      epoch_ = attempt->lease.epoch;
      // From when the renewal was sent: the database's expiry is later than that.
      renew_by_ = sent + options_.renew_deadline;
    } else {
      if (leading_) ++counters_.renew_failures;
      leading_ = false;
    }
  }
  // A call that outlasted the deadline does not lead, even if it renewed.
  if (leading_ && !LeadingLocked(after)) leading_ = false;
  Duration due = leading_ ? std::min(next_attempt_, renew_by_) : next_attempt_;
  return after < due ? Minus(due, after) : Duration();
}

bool Elector::IsLeader() const {
  const Duration now = clock_.Now();
  MutexLock lock(mu_);
  return LeadingLocked(now);
}

std::optional<FenceToken> Elector::Token() const {
  const Duration now = clock_.Now();
  MutexLock lock(mu_);
  if (!LeadingLocked(now)) return std::nullopt;
  return FenceToken{options_.lease_name, options_.identity, epoch_};
}

ElectorCounters Elector::Counters() const {
  MutexLock lock(mu_);
  return counters_;
}

std::optional<LeaseRecord> Elector::Observed() const {
  MutexLock lock(mu_);
  return observed_;
}

Status Elector::LastError() const {
  MutexLock lock(mu_);
  return last_error_;
}

Status Elector::Release() {
  int64_t epoch = 0;
  {
    MutexLock lock(mu_);
    const bool was_leading = LeadingLocked(clock_.Now());
    leading_ = false;
    if (!was_leading) return Status::Ok();
    epoch = epoch_;
  }
  if (connection_ == nullptr || !connection_->Healthy()) {
    return Unavailable("release the lease: no connection to PostgreSQL; the lease expires on its own");
  }
  Status released = ReleaseLease(*connection_, options_.lease_name, options_.identity, epoch);
  (void)DropSessionLocks(*connection_);
  session_locked_epoch_ = 0;
  return released;
}

}  // namespace gpufed::ha
