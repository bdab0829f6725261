#pragma once
// Fencing: every write transaction of the leader proves, inside that same transaction,
// that its epoch still holds the lease, and keeps the lease row locked FOR SHARE until it
// commits. Why that orders writes against a takeover (README.md has the whole argument):
//   - a taker must UPDATE the lease row to make epoch E+1; its UPDATE needs a lock that
//     conflicts with FOR SHARE, so it waits until every fenced transaction of epoch E
//     holding the row has committed or rolled back: whatever E committed, it committed
//     before E+1 existed;
//   - a transaction of epoch E that starts its check after the takeover finds no row with
//     holder and epoch E (READ COMMITTED reads the newest committed row under a row lock),
//     and fails before it writes anything.
// FOR SHARE, not FOR KEY SHARE: the taker's UPDATE changes no key column, so it takes FOR
// NO KEY UPDATE, which FOR KEY SHARE would let through.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "controller/common/status.h"
#include "controller/pg/connection.h"
#include "controller/pg/transaction.h"

namespace gpufed::ha {

// What a leader's writes are fenced with: the lease it holds, as whom and at which epoch.
struct FenceToken {
  std::string lease_name;
  std::string holder;
  int64_t epoch = 0;
};

// Locks the lease row FOR SHARE inside `tx` if it still names `token`'s holder and epoch
// and has not expired by the database's clock (the function gpufed_check_fence, the `ha`
// component's migration 3). Unavailable otherwise (the API's 503), naming who holds the lease now
// ("check the fence: fenced: epoch 3 is no longer the lease's, now held by replica-b
// epoch 4 (SQLSTATE GF001)"; IsFenced is true for it); the caller's transaction must then
// roll back (the Transaction's destructor does) and the replica stop acting as leader.
Status CheckFence(pg::Transaction& tx, const FenceToken& token);

// The same check, sent with the transaction's next statement, or its COMMIT, in one
// round trip (pg::Connection::DeferStatement). It returns OK at once; when the fence does
// not hold, that next call fails with CheckFence's refusal, and neither it nor anything
// after it runs, so nothing of the transaction commits. For writers whose every
// transaction ends in a COMMIT they check (the journal, the store, snapshots, read views);
// a caller that must know before it does anything else uses CheckFence.
Status DeferFenceCheck(pg::Transaction& tx, const FenceToken& token);

// CheckFence for a caller that began the transaction on `connection` itself (a storage
// that owns its BEGIN and COMMIT, as the journal's table does). Without an open
// transaction the lock would end with the statement: the caller must have begun one.
Status CheckFenceInTransaction(pg::Connection& connection, const FenceToken& token);

// True for CheckFence's refusal (and what RunFenced passes on of it), also when a caller
// put its own context before the message ("audit journal DIR: fenced: ..."): a replica
// whose term ended while it opened must stand by, not exit.
bool IsFenced(const Status& status);

// Begins a transaction, checks the fence, runs `write` in it and commits. Nothing of
// `write` is committed unless the fence held, and a fenced transaction writes nothing.
// Errors: CheckFence's, `write`'s, or the transaction's (Begin, Commit).
Status RunFenced(pg::Connection& connection, const FenceToken& token, std::string_view purpose,
                 const std::function<Status(pg::Transaction&)>& write);

}  // namespace gpufed::ha
