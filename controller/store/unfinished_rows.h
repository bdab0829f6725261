#pragma once
// The unfinished workload rows (waiting and active), mirrored in memory so that a pass
// does not decode every waiting row from SQLite again. The Store is the only writer of
// its database (one controller per state folder: the audit journal's lock), so the
// mirror stays exact if every committed write of a workload row reaches it: the Store
// hands it the rows a transaction wrote once the COMMIT succeeded (Apply), and forgets
// the mirror when a COMMIT that wrote rows failed (its outcome is then unknown); the next
// read loads it from the database again. A rolled-back write never reaches it.
// Records hold exactly what the database would return for them (AsStored), so a record
// from the mirror equals one read back from SQLite. Not thread-safe: the Store's lock.
// The names of its rows are kept in step in a LiveNames of the Store's (live_names.h),
// which has a lock of its own.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "controller/store/live_names.h"
#include "controller/store/records.h"

namespace gpufed::store {

// `r` as the workloads table stores it and reads it back: one currency for the estimate
// and the cost (the cost's, else the estimate's), negative start and end times as 0, and
// `seq` as its submission order.
WorkloadRecord AsStored(const WorkloadRecord& r, int64_t seq);

class UnfinishedRows {
 public:
  // `names` (may be null) follows every row this mirror holds, and whether it is loaded.
  explicit UnfinishedRows(LiveNames* names = nullptr) : names_(names) {}
  bool loaded() const { return loaded_; }
  // Replaces the mirror with `rows` (every unfinished row, read from the database).
  void Load(const std::vector<WorkloadRecord>& rows);
  // Forgets the mirror; the next read loads it again.
  void Forget();

  // Rows a committed transaction wrote, in write order (AsStored applied): each replaces
  // the row of its uid; a terminal one leaves. Nothing happens while not loaded.
  void Apply(std::vector<WorkloadRecord> written);
  // The committed cancel flag of an unfinished row (an autocommit write).
  void MarkCancelRequested(const std::string& uid);

  // The committed unfinished row with this uid; null when it is finished, unknown or the
  // mirror is not loaded.
  const WorkloadRecord* Find(const std::string& uid) const;
  // Every committed unfinished row, by submission order.
  std::vector<WorkloadRecord> List() const;
  // The same into `*out`, assigned over its elements (their strings keep their storage).
  void ListInto(std::vector<WorkloadRecord>* out) const;
  // The sums ActiveEstimates returns, over the committed rows.
  std::map<std::string, ActiveEstimate> ActiveEstimates() const;
  // The earliest submission per (tenant, state name) among the committed rows.
  std::map<std::pair<std::string, std::string>, int64_t> OldestSubmitted() const;
  size_t size() const { return by_seq_.size(); }

 private:
  void Put(WorkloadRecord stored);
  // Adds (sign 1) or removes (-1) an active row's estimate from active_.
  void Count(const WorkloadRecord& r, int sign);

  // Active rows' estimates per (tenant, cloud, currency), kept as rows change so that
  // ActiveEstimates, asked every pass, reads a few sums instead of every row.
  struct ActiveSum {
    int64_t micros = 0;
    int64_t rows = 0;
  };
  std::map<std::tuple<std::string, bool, std::string>, ActiveSum> active_;
  bool loaded_ = false;
  std::map<int64_t, WorkloadRecord> by_seq_;       // seq -> row
  std::unordered_map<std::string, int64_t> seq_of_;  // uid -> seq
  LiveNames* const names_;  // tenant and name -> state of every row here (at most one: workloads_live_name)
};

}  // namespace gpufed::store
