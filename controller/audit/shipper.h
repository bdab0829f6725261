#pragma once
// Ships the journal to one sink, at least once, from a durable cursor
// (`<audit>/cursors/<sink>.cursor`: the last acknowledged sequence number and hash).
// A receiver outage only delays shipping: everything after the cursor is resent after
// reconnecting, with exponential backoff. Lag (records and seconds) is reported, and a
// configurable limit raises a loud alert; records are never dropped.
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "controller/audit/env.h"
#include "controller/audit/reader.h"
#include "controller/audit/sinks/sink.h"
#include "controller/common/mutex.h"

namespace gpufed::audit {

struct ShipperOptions {
  Env* env = nullptr;               // required; must outlive the shipper
  std::string audit_dir;
  std::string sink_name;            // names the cursor file: [A-Za-z0-9._-]+
  size_t batch_records = 500;
  int64_t backoff_initial_micros = 200'000;
  int64_t backoff_max_micros = 30'000'000;
  int64_t idle_poll_micros = 20'000;        // wait when everything durable was sent
  int64_t cursor_persist_micros = 200'000;  // cursor writes at most this often
  uint64_t lag_limit_records = 0;           // 0: no limit
  int64_t lag_limit_micros = 0;             // 0: no limit
  // The journal's durable head (AuditJournal::last_seq); records after it are never
  // shipped. Default: every record on disk (for a journal no one is writing).
  std::function<uint64_t()> durable_head;
  // Opens a reader of the journal (JournalRecordSource, journal_storage.h); the shipper
  // opens three. Default: the file journal in `audit_dir` (JournalReader).
  std::function<std::unique_ptr<JournalRecordSource>()> open_source;
  // Receives alert messages (lag above the limit, and back within it). Default: stderr.
  std::function<void(const std::string&)> alert;
};

struct ShipperStats {
  uint64_t head = 0;          // durable journal head
  uint64_t acknowledged = 0;  // the cursor
  uint64_t sent = 0;          // highest seq handed to the sink on this connection
  uint64_t lag_records = 0;
  int64_t lag_micros = 0;     // age of the oldest unacknowledged record
  bool lag_alert = false;
  bool connected = false;
  uint64_t connects = 0;
  uint64_t failures = 0;
  std::string last_error;
};

class Shipper {
 public:
  // Loads the cursor (checking that the journal still holds the record it names).
  static Result<std::unique_ptr<Shipper>> Open(const ShipperOptions& options, std::unique_ptr<Sink> sink);
  ~Shipper();

  // One step: reconnect when due, collect acknowledgements, send one batch. Returns
  // how long to wait before the next step (0: more to do now). Never blocks longer than
  // the sink's own I/O timeouts. Not thread-safe with itself.
  int64_t Step() EXCLUDES(mu_);
  // Steps (sleeping through the Env) until everything up to `head` is acknowledged, or
  // `timeout_micros` passes (DeadlineExceeded, with the last error).
  Status DrainTo(uint64_t head, int64_t timeout_micros) EXCLUDES(mu_);
  // Persists the cursor now (also done by Step, rate-limited).
  Status PersistCursor();

  ShipperStats stats() const EXCLUDES(mu_);  // thread-safe

 private:
  Shipper(const ShipperOptions& options, std::unique_ptr<Sink> sink);
  uint64_t Head();
  void Fail(const Status& status) EXCLUDES(mu_);
  void UpdateLag(int64_t now) EXCLUDES(mu_);

  ShipperOptions options_;
  std::unique_ptr<Sink> sink_;
  std::unique_ptr<JournalRecordSource> reader_;
  std::string cursor_path_;
  uint64_t acked_ = 0;
  std::string acked_hash_;
  uint64_t persisted_ = 0;
  int64_t persisted_at_ = 0;
  uint64_t sent_ = 0;
  bool connected_ = false;
  int64_t backoff_ = 0;
  int64_t next_attempt_ = 0;
  std::vector<JournalEntry> batch_;
  // (seq, hash, time) of records sent and not yet acknowledged, in order.
  struct Sent {
    uint64_t seq;
    std::string hash;
    int64_t time_micros;
  };
  std::deque<Sent> unacked_;
  std::unique_ptr<JournalRecordSource> lag_reader_;  // finds the age of the oldest unsent record
  uint64_t lag_cache_seq_ = 0;
  int64_t lag_cache_time_ = 0;
  bool alerting_ = false;

  // The members above belong to the thread that steps; stats_ is its report to others.
  mutable Mutex mu_;
  ShipperStats stats_ GUARDED_BY(mu_);
};

}  // namespace gpufed::audit
