#include "controller/audit/live_witnessing.h"

#include <algorithm>
#include <chrono>

#include "controller/audit/sinks/factory.h"
#include "controller/common/metrics_text.h"

namespace gpufed::audit {
namespace {

using Micros = std::chrono::microseconds;

bool SameSpec(const model::AuditWitness& a, const model::AuditWitness& b) {
  return a.metadata.name == b.metadata.name && a.url == b.url && a.vkey == b.vkey && a.tls == b.tls;
}

// The tree size of a checkpoint note; 0 when there is none or it does not parse.
uint64_t CheckpointSize(const std::string& note_text) {
  if (note_text.empty()) return 0;
  Result<Note> note = ParseNote(note_text);
  if (!note.ok()) return 0;
  Result<LogCheckpoint> body = ParseCheckpointBody(note->body);
  return body.ok() ? body->size : 0;
}

}  // namespace

Result<std::unique_ptr<LiveWitnessing>> LiveWitnessing::Start(const LiveWitnessingOptions& options,
                                                              const std::vector<model::AuditWitness>& specs) {
  if (options.env == nullptr || options.tree == nullptr || !options.newest_checkpoint) {
    return InvalidArgument("live witnessing needs an Env, the journal's tree and its newest checkpoint");
  }
  std::unique_ptr<LiveWitnessing> live(new LiveWitnessing(options));
  for (const model::AuditWitness& spec : specs) {
    const std::string where = "AuditWitness " + spec.metadata.name + ": ";
    if (spec.url.rfind("https://", 0) != 0) return InvalidArgument(where + "spec.url must be an https:// URL");
    if (spec.tls.ca_file.empty())
      return InvalidArgument(where + "spec.tls.caFile is required (TLS verification is always on)");
    WitnessClientOptions o;
    o.env = options.env;
    o.audit_dir = options.audit_dir;
    o.vkey = spec.vkey;
    o.https.url = spec.url;
    o.https.ca_file = ResolveRepoPath(options.repo_root, spec.tls.ca_file);
    o.https.cert_file = ResolveRepoPath(options.repo_root, spec.tls.cert_file);
    o.https.key_file = ResolveRepoPath(options.repo_root, spec.tls.key_file);
    Result<std::unique_ptr<WitnessClient>> client = WitnessClient::Create(std::move(o));
    if (!client.ok()) return Status(client.status().code(), where + client.status().message());
    auto worker = std::make_unique<Worker>();
    worker->spec = spec;
    worker->client = std::move(client).value();
    worker->status.name = spec.metadata.name;
    worker->status.url = spec.url;
    if (const auto& newest = worker->client->newest()) {
      worker->status.cosigned_size = newest->size;
      worker->status.cosigned_at_micros = static_cast<int64_t>(newest->timestamp) * 1'000'000;
    }
    live->workers_.push_back(std::move(worker));
  }
  for (auto& w : live->workers_) w->thread = std::thread([raw = live.get(), worker = w.get()] { raw->Loop(worker); });
  return live;
}

LiveWitnessing::~LiveWitnessing() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  wake_.NotifyAll();
  for (auto& w : workers_) {
    if (w->thread.joinable()) w->thread.join();
  }
}

void LiveWitnessing::Loop(Worker* worker) {
  int64_t backoff = 0;
  auto next_try = std::chrono::steady_clock::now();
  MutexLock lock(mu_);
  while (!stopping_) {
    const uint64_t seen = wakes_;
    lock.Unlock();
    const std::string note = options_.newest_checkpoint();
    const uint64_t size = CheckpointSize(note);
    lock.Lock();
    WitnessStatus& st = worker->status;
    const auto now = std::chrono::steady_clock::now();
    if (size <= st.cosigned_size) {
      st.behind_since_micros = 0;
    } else if (st.behind_since_micros == 0) {
      st.behind_since_micros = options_.env->NowMicros();
    }
    if (size > st.cosigned_size && now >= next_try) {
      lock.Unlock();
      const int64_t began = options_.env->NowMicros();
      Result<CosignedCheckpoint> cosigned = worker->client->Cosign(note, *options_.tree);
      const int64_t ended = options_.env->NowMicros();
      lock.Lock();
      st.last_round_trip_micros = ended - began;
      if (cosigned.ok()) {
        if (!st.last_error.empty() && options_.log) {
          options_.log("witness " + st.name + " cosigned again (tree size " + std::to_string(cosigned->size) + ")");
        }
        st.cosigned_size = cosigned->size;
        st.cosigned_at_micros = static_cast<int64_t>(cosigned->timestamp) * 1'000'000;
        st.behind_since_micros = cosigned->size >= size ? 0 : st.behind_since_micros;
        ++st.cosigned_total;
        st.refused = false;
        st.last_error.clear();
        backoff = 0;
        next_try = std::chrono::steady_clock::now() + Micros(options_.min_interval_micros);
      } else {
        ++st.failures_total;
        st.refused = cosigned.status().code() == StatusCode::kDataLoss;
        if (st.last_error != cosigned.status().message() && options_.log) {
          options_.log((st.refused ? "witness refuses the journal's checkpoint: " : "witness unavailable: ") +
                       cosigned.status().message());
        }
        st.last_error = cosigned.status().message();
        // A refusal will not change by asking again soon: only a restored history or a
        // retired witness ends it.
        backoff = st.refused ? options_.max_backoff_micros
                             : std::min(options_.max_backoff_micros, std::max<int64_t>(1'000'000, backoff * 2));
        next_try = std::chrono::steady_clock::now() + Micros(backoff);
      }
      progressed_.NotifyAll();
      continue;
    }
    progressed_.NotifyAll();
    // Until a wake (a new checkpoint) or the next try is due; at most a second, so a
    // checkpoint whose wake was missed is still sent.
    auto until = now + std::chrono::seconds(1);
    if (size > st.cosigned_size) until = std::min(until, next_try);
    while (!stopping_ && wakes_ == seen) {
      if (!wake_.WaitUntil(mu_, until)) break;
    }
  }
}

void LiveWitnessing::Wake() {
  {
    MutexLock lock(mu_);
    ++wakes_;
  }
  wake_.NotifyAll();
}

std::vector<WitnessStatus> LiveWitnessing::Witnesses() const {
  MutexLock lock(mu_);
  std::vector<WitnessStatus> out;
  out.reserve(workers_.size());
  for (const auto& w : workers_) out.push_back(w->status);
  return out;
}

std::vector<std::string> LiveWitnessing::WaitCosigned(uint64_t size, int64_t timeout_micros) {
  Wake();
  const auto deadline = std::chrono::steady_clock::now() + Micros(timeout_micros);
  MutexLock lock(mu_);
  for (;;) {
    std::vector<std::string> behind;
    bool refused = false;
    for (const auto& w : workers_) {
      if (w->status.cosigned_size < size) behind.push_back(w->spec.metadata.name);
      refused = refused || w->status.refused;
    }
    const auto now = std::chrono::steady_clock::now();
    if (behind.empty() || refused || now >= deadline) return behind;
    progressed_.WaitUntil(mu_, std::min(deadline, now + std::chrono::milliseconds(100)));
  }
}

std::string LiveWitnessing::Metrics() const {
  std::vector<WitnessStatus> witnesses = Witnesses();
  const int64_t now = options_.env->NowMicros();
  MetricsText m;
  using T = MetricsText::Type;
  auto family = [&](const char* name, T type, const char* help, auto value) {
    m.Family(name, type, help);
    for (const WitnessStatus& w : witnesses) m.Sample({{"witness", w.name}}, static_cast<double>(value(w)));
  };
  family("gpufed_audit_witness_cosigned_size", T::kGauge, "Tree size of the newest checkpoint the witness cosigned.",
         [](const WitnessStatus& w) { return w.cosigned_size; });
  family("gpufed_audit_witness_cosigned_age_seconds", T::kGauge,
         "Age of the witness's newest cosignature (by its clock); grows while the journal is idle too.",
         [now](const WitnessStatus& w) {
           return w.cosigned_at_micros == 0 ? 0.0 : static_cast<double>(now - w.cosigned_at_micros) / 1e6;
         });
  family("gpufed_audit_witness_unwitnessed_seconds", T::kGauge,
         "How long the journal's newest checkpoint has waited for this witness's cosignature (0: caught up).",
         [now](const WitnessStatus& w) {
           return w.behind_since_micros == 0 ? 0.0 : static_cast<double>(now - w.behind_since_micros) / 1e6;
         });
  family("gpufed_audit_witness_cosignatures_total", T::kCounter, "Checkpoints the witness cosigned for this process.",
         [](const WitnessStatus& w) { return w.cosigned_total; });
  family("gpufed_audit_witness_failures_total", T::kCounter,
         "Requests to the witness that did not end in a cosignature.",
         [](const WitnessStatus& w) { return w.failures_total; });
  family("gpufed_audit_witness_refusing", T::kGauge,
         "1 while the witness refuses the journal's checkpoints: the history is not the one it cosigned.",
         [](const WitnessStatus& w) { return w.refused ? 1 : 0; });
  family("gpufed_audit_witness_round_trip_seconds", T::kGauge, "Duration of the last request to the witness.",
         [](const WitnessStatus& w) { return static_cast<double>(w.last_round_trip_micros) / 1e6; });
  return m.str();
}

bool LiveWitnessing::Serves(const std::vector<model::AuditWitness>& specs) const {
  if (specs.size() != workers_.size()) return false;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (!SameSpec(specs[i], workers_[i]->spec)) return false;
  }
  return true;
}

}  // namespace gpufed::audit
