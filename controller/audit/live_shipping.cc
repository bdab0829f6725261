#include "controller/audit/live_shipping.h"

#include <chrono>

#include "controller/audit/sinks/factory.h"
#include "controller/common/metrics_text.h"

namespace gpufed::audit {
namespace {

using Micros = std::chrono::microseconds;

bool SameSpec(const model::AuditSink& a, const model::AuditSink& b) {
  return a.metadata.name == b.metadata.name && a.type == b.type && a.endpoint == b.endpoint &&
         a.tls.ca_file == b.tls.ca_file && a.tls.cert_file == b.tls.cert_file && a.tls.key_file == b.tls.key_file &&
         a.tls.server_name == b.tls.server_name && a.lag_limit_records == b.lag_limit_records &&
         a.lag_limit_time == b.lag_limit_time && a.batch_size == b.batch_size && a.on_lag_limit == b.on_lag_limit;
}

SinkLagChange ChangeOf(const model::AuditSink& spec, const ShipperStats& stats, bool lagging) {
  SinkLagChange c;
  c.sink = spec.metadata.name;
  c.lagging = lagging;
  c.lag_records = stats.lag_records;
  c.lag_millis = stats.lag_micros / 1000;
  c.acknowledged = stats.acknowledged;
  c.action = model::LagActionName(spec.on_lag_limit);
  c.last_error = stats.last_error;
  return c;
}

}  // namespace

Result<std::unique_ptr<LiveShipping>> LiveShipping::Start(const LiveShippingOptions& options,
                                                          const std::vector<model::AuditSink>& specs) {
  if (options.env == nullptr) return InvalidArgument("live shipping needs an Env");
  std::vector<SinkSetup> sinks;
  for (const model::AuditSink& spec : specs) {
    Result<std::unique_ptr<Sink>> sink = MakeSink(options.env, spec, options.repo_root);
    if (!sink.ok()) {
      return Status(sink.status().code(), "AuditSink " + spec.metadata.name + ": " + sink.status().message());
    }
    sinks.push_back({spec, std::move(sink).value()});
  }
  return StartWith(options, std::move(sinks));
}

Result<std::unique_ptr<LiveShipping>> LiveShipping::StartWith(const LiveShippingOptions& options,
                                                              std::vector<SinkSetup> sinks) {
  if (options.env == nullptr || !options.durable_head) return InvalidArgument("live shipping needs an Env and a head");
  std::unique_ptr<LiveShipping> live(new LiveShipping(options));
  // Open every shipper before starting any thread: a cursor that does not fit this
  // journal refuses the whole start.
  for (SinkSetup& s : sinks) {
    auto worker = std::make_unique<Worker>();
    worker->spec = s.spec;
    worker->describe = s.sink->Describe();
    ShipperOptions so;
    so.env = options.env;
    so.audit_dir = options.audit_dir;
    so.sink_name = s.spec.metadata.name;
    so.batch_records = static_cast<size_t>(std::max(1, s.spec.batch_size));
    so.lag_limit_records = static_cast<uint64_t>(std::max<int64_t>(0, s.spec.lag_limit_records));
    so.lag_limit_micros = s.spec.lag_limit_time.millis() * 1000;
    so.idle_poll_micros = options.max_idle_micros;
    so.durable_head = options.durable_head;
    so.open_source = options.open_source;
    so.alert = [](const std::string&) {};  // episodes are reported once, after the grace, by the controller
    Result<std::unique_ptr<Shipper>> shipper = Shipper::Open(so, std::move(s.sink));
    if (!shipper.ok()) {
      return Status(shipper.status().code(), "AuditSink " + s.spec.metadata.name + ": " + shipper.status().message());
    }
    worker->shipper = std::move(shipper).value();
    worker->stats = worker->shipper->stats();
    live->workers_.push_back(std::move(worker));
  }
  for (auto& w : live->workers_) w->thread = std::thread([raw = live.get(), worker = w.get()] { raw->Loop(worker); });
  return live;
}

LiveShipping::~LiveShipping() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  wake_.NotifyAll();
  for (auto& w : workers_) {
    if (w->thread.joinable()) w->thread.join();
  }
  // Each Shipper persists its cursor as it is destroyed, after its thread has ended.
}

void LiveShipping::Loop(Worker* worker) {
  MutexLock lock(mu_);
  while (!stopping_) {
    lock.Unlock();
    const int64_t wait = worker->shipper->Step();
    const ShipperStats stats = worker->shipper->stats();
    lock.Lock();
    const int64_t now = options_.env->NowMicros();
    if (!stats.lag_alert) {
      worker->over_since = -1;
    } else if (worker->over_since < 0) {
      worker->over_since = now;
    }
    const bool lagging = stats.lag_alert && now - worker->over_since >= options_.lag_grace_micros;
    if (lagging != worker->lagging) changes_.push_back(ChangeOf(worker->spec, stats, lagging));
    worker->lagging = lagging;
    worker->stats = stats;
    progressed_.NotifyAll();
    if (wait <= 0 || stopping_) continue;
    const uint64_t seen = wakes_;
    const auto until = std::chrono::steady_clock::now() + Micros(std::min(wait, options_.max_idle_micros));
    while (!stopping_ && wakes_ == seen) {
      if (!wake_.WaitUntil(mu_, until)) break;
    }
  }
}

void LiveShipping::Wake() {
  {
    MutexLock lock(mu_);
    ++wakes_;
  }
  wake_.NotifyAll();
}

std::vector<SinkStatus> LiveShipping::Sinks() const {
  MutexLock lock(mu_);
  std::vector<SinkStatus> out;
  out.reserve(workers_.size());
  for (const auto& w : workers_) {
    out.push_back({w->spec.metadata.name, w->describe, w->spec.on_lag_limit, w->stats, w->lagging});
  }
  return out;
}

std::vector<SinkLagChange> LiveShipping::TakeLagChanges() {
  MutexLock lock(mu_);
  std::vector<SinkLagChange> out;
  out.swap(changes_);
  return out;
}

std::vector<std::string> LiveShipping::WaitAcknowledged(uint64_t head, int64_t timeout_micros,
                                                        const std::function<bool()>& abort) {
  Wake();
  const auto deadline = std::chrono::steady_clock::now() + Micros(timeout_micros);
  MutexLock lock(mu_);
  for (;;) {
    std::vector<std::string> behind;
    for (const auto& w : workers_) {
      if (w->stats.acknowledged < head) behind.push_back(w->spec.metadata.name);
    }
    const auto now = std::chrono::steady_clock::now();
    if (behind.empty() || now >= deadline || (abort && abort())) return behind;
    // Woken by every step of a sink; the bound only keeps `abort` polled.
    progressed_.WaitUntil(mu_, std::min(deadline, now + std::chrono::milliseconds(100)));
  }
}

std::string LiveShipping::Metrics() const {
  std::vector<SinkStatus> sinks = Sinks();
  MetricsText m;
  using T = MetricsText::Type;
  auto family = [&](const char* name, T type, const char* help, auto value) {
    m.Family(name, type, help);
    for (const SinkStatus& s : sinks) m.Sample({{"sink", s.name}}, static_cast<double>(value(s)));
  };
  family("gpufed_audit_sink_lag_records", T::kGauge, "Journal records the sink has not acknowledged.",
         [](const SinkStatus& s) { return s.stats.lag_records; });
  family("gpufed_audit_sink_lag_seconds", T::kGauge, "Age of the oldest journal record the sink has not acknowledged.",
         [](const SinkStatus& s) { return static_cast<double>(s.stats.lag_micros) / 1e6; });
  family("gpufed_audit_sink_acknowledged_seq", T::kGauge,
         "Highest journal seq the sink acknowledged (its durable cursor).",
         [](const SinkStatus& s) { return s.stats.acknowledged; });
  family("gpufed_audit_sink_connected", T::kGauge, "1 while the controller holds a connection to the sink.",
         [](const SinkStatus& s) { return s.stats.connected ? 1 : 0; });
  family("gpufed_audit_sink_failures_total", T::kCounter,
         "Connection and send failures (each is retried with backoff).",
         [](const SinkStatus& s) { return s.stats.failures; });
  family("gpufed_audit_sink_lagging", T::kGauge, "1 while the sink is past its lagLimit (for longer than a burst).",
         [](const SinkStatus& s) { return s.lagging ? 1 : 0; });
  return m.str();
}

bool LiveShipping::Ships(const std::vector<model::AuditSink>& specs) const {
  if (specs.size() != workers_.size()) return false;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (!SameSpec(specs[i], workers_[i]->spec)) return false;
  }
  return true;
}

}  // namespace gpufed::audit
