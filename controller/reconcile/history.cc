#include "controller/reconcile/history.h"

#include "controller/audit/record.h"

namespace gpufed::reconcile {

Status History::Restore(Duration now) {
  Result<std::vector<std::pair<Duration, std::string>>> rows =
      store_->ReadHistory(Duration::FromMillis(now.millis() - options_.window.millis()));
  if (!rows.ok()) return rows.status();
  samples_.clear();
  for (auto& [at, text] : *rows) {
    nlohmann::json sample = nlohmann::json::parse(text, nullptr, false);
    if (sample.is_discarded() || !sample.is_object()) continue;  // a damaged sample is not worth a failed start
    samples_.push_back({at, std::move(sample)});
  }
  return Status::Ok();
}

bool History::Due(Duration now) const {
  return samples_.empty() || now.millis() - samples_.back().at.millis() >= options_.interval.millis();
}

Status History::Sample(Duration now, const std::vector<ClusterView>& clusters, const std::vector<TenantView>& tenants) {
  nlohmann::json sample = {{"clusters", nlohmann::json::object()},
                           {"queue", nlohmann::json::object()},
                           {"spend", nlohmann::json::object()}};
  for (const ClusterView& c : clusters) {
    double allocated = 0;
    int capacity = 0;
    for (const ModelGpus& m : c.models) {
      allocated += m.allocated;
      capacity += m.capacity;
    }
    sample["clusters"][c.name] = {{"allocated", allocated}, {"capacity", capacity}};
  }
  for (const TenantView& t : tenants) {
    sample["queue"][t.name] = t.queued;
    sample["spend"][t.name] = {{"spent", t.spent.AmountString()},
                               {"limit", t.limit ? nlohmann::json(t.limit->AmountString()) : nlohmann::json(nullptr)},
                               {"currency", t.currency}};
  }
  const Duration keep_from = Duration::FromMillis(now.millis() - options_.window.millis());
  // A chart point, not evidence: it commits with the loop's next store write.
  store_->AppendHistoryLater(now, sample.dump(), keep_from);
  if (!samples_.empty() && samples_.back().at.millis() == now.millis()) samples_.pop_back();
  samples_.push_back({now, std::move(sample)});
  while (!samples_.empty() && samples_.front().at < keep_from) samples_.pop_front();
  return Status::Ok();
}

nlohmann::json History::ToJson(const std::string& tenant, std::optional<Duration> since) const {
  nlohmann::json out = nlohmann::json::array();
  for (const Entry& e : samples_) {
    if (since && e.at <= *since) continue;
    nlohmann::json s = {{"at", gpufed::FormatTimeMicros(e.at.millis() * 1000)},
                        {"atSeconds", static_cast<double>(e.at.millis()) / 1000.0},
                        {"clusters", e.sample.value("clusters", nlohmann::json::object())}};
    for (const char* key : {"queue", "spend"}) {
      const nlohmann::json all = e.sample.value(key, nlohmann::json::object());
      if (tenant.empty()) {
        s[key] = all;
      } else {
        s[key] = nlohmann::json::object();
        if (all.contains(tenant)) s[key][tenant] = all[tenant];
      }
    }
    out.push_back(std::move(s));
  }
  nlohmann::json latest = nullptr;
  if (!samples_.empty()) latest = static_cast<double>(samples_.back().at.millis()) / 1000.0;
  return {{"samples", std::move(out)}, {"latestSeconds", latest}};
}

}  // namespace gpufed::reconcile
