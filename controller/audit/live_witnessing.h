#pragma once
// `gpufed run`'s witnessing: one thread per AuditWitness sends the journal's newest signed
// checkpoint to that witness (witness_client.h) whenever the journal has grown past what
// the witness cosigned, at most once per `min_interval_micros` (a busy loop signs every
// commit; a witness needs the newest only, since each cosignature vouches for every record
// before it), and backs off after a failure. A witness that refuses (the history is not
// the one it cosigned) is reported at once and retried only at the slowest backoff.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "controller/audit/env.h"
#include "controller/audit/merkle.h"
#include "controller/audit/witness_client.h"
#include "controller/common/mutex.h"
#include "controller/common/status.h"
#include "controller/model/audit_witness.h"

namespace gpufed::audit {

struct LiveWitnessingOptions {
  Env* env = nullptr;  // required; must outlive this
  std::string audit_dir;
  std::string repo_root;  // TLS file paths of the witnesses are relative to it
  // The journal's newest signed checkpoint (a signed note; empty: none yet). Thread-safe.
  std::function<std::string()> newest_checkpoint;
  NodeSource* tree = nullptr;  // required: the journal's tiles, for consistency proofs; thread-safe
  int64_t min_interval_micros = 1'000'000;
  int64_t max_backoff_micros = 60'000'000;
  // One line per episode of failure and per recovery (never secrets).
  std::function<void(const std::string&)> log;
};

struct WitnessStatus {
  std::string name;      // the AuditWitness's
  std::string url;
  uint64_t cosigned_size = 0;       // newest checkpoint it cosigned (0: none)
  int64_t cosigned_at_micros = 0;   // its cosignature's time (the witness's clock)
  int64_t behind_since_micros = 0;  // when a checkpoint it has not cosigned appeared; 0: caught up
  uint64_t cosigned_total = 0;
  uint64_t failures_total = 0;
  bool refused = false;   // the last answer said the history is not the one it cosigned
  std::string last_error;
  int64_t last_round_trip_micros = 0;
};

class LiveWitnessing {
 public:
  // Fails, starting nothing, when a witness's key or URL is invalid.
  static Result<std::unique_ptr<LiveWitnessing>> Start(const LiveWitnessingOptions& options,
                                                       const std::vector<model::AuditWitness>& specs);
  ~LiveWitnessing();
  LiveWitnessing(const LiveWitnessing&) = delete;
  LiveWitnessing& operator=(const LiveWitnessing&) = delete;

  // A checkpoint was committed: a caught-up witness sends it once its interval allows.
  void Wake() EXCLUDES(mu_);
  std::vector<WitnessStatus> Witnesses() const EXCLUDES(mu_);
  // Blocks until every witness cosigned a checkpoint of at least `size` records, the
  // timeout passes or one refuses; the names of those that did not.
  std::vector<std::string> WaitCosigned(uint64_t size, int64_t timeout_micros) EXCLUDES(mu_);
  // Prometheus text: per witness, the cosigned size, the age of its newest cosignature,
  // how long the newest checkpoint has waited, failures and refusals.
  std::string Metrics() const EXCLUDES(mu_);
  // Whether this instance serves exactly these specs (else the runtime restarts it).
  bool Serves(const std::vector<model::AuditWitness>& specs) const;

 private:
  struct Worker {
    model::AuditWitness spec;
    std::unique_ptr<WitnessClient> client;
    std::thread thread;
    WitnessStatus status;  // guarded by LiveWitnessing::mu_
  };
  explicit LiveWitnessing(const LiveWitnessingOptions& options) : options_(options) {}
  void Loop(Worker* worker) EXCLUDES(mu_);

  LiveWitnessingOptions options_;
  std::vector<std::unique_ptr<Worker>> workers_;
  mutable Mutex mu_;
  CondVar wake_;
  CondVar progressed_;
  bool stopping_ GUARDED_BY(mu_) = false;
  uint64_t wakes_ GUARDED_BY(mu_) = 0;
};

}  // namespace gpufed::audit
