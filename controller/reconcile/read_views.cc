#include "controller/reconcile/read_views.h"

#include "controller/common/metrics_text.h"
#include "controller/reconcile/pass_metrics.h"

namespace gpufed::reconcile {
namespace {

// An item of a view that belongs to a tenant the caller may see.
bool Visible(const nlohmann::json& item, const char* key, const std::string& caller) {
  return caller.empty() || (item.is_object() && item.value(key, "") == caller);
}

}  // namespace

nlohmann::json ScopeTenants(const nlohmann::json& tenants, const std::string& caller) {
  nlohmann::json items = nlohmann::json::array();
  for (const nlohmann::json& t : tenants.value("items", nlohmann::json::array())) {
    if (Visible(t, "name", caller)) items.push_back(t);
  }
  return nlohmann::json{{"items", std::move(items)}};
}

Status TenantVisible(const std::string& name, const std::string& caller) {
  if (!caller.empty() && caller != name) return NotFound("no tenant " + name);
  return Status::Ok();
}

Result<nlohmann::json> ScopeTenant(const nlohmann::json& tenants, const std::string& name, const std::string& caller) {
  GPUFED_RETURN_IF_ERROR(TenantVisible(name, caller));
  bool declared = false;
  for (const nlohmann::json& d : tenants.value("declared", nlohmann::json::array())) {
    declared = declared || (d.is_string() && d.get<std::string>() == name);
  }
  if (declared) {
    for (const nlohmann::json& t : tenants.value("items", nlohmann::json::array())) {
      if (t.is_object() && t.value("name", "") == name) return t;
    }
  }
  return NotFound("no tenant " + name);
}

nlohmann::json ScopeQueue(const nlohmann::json& queue, const std::string& caller) {
  nlohmann::json items = nlohmann::json::array();
  int position = 0;
  for (const nlohmann::json& w : queue.value("items", nlohmann::json::array())) {
    if (!Visible(w, "tenant", caller)) continue;
    nlohmann::json item = w;
    item["position"] = ++position;  // the order the caller's own work is considered in
    items.push_back(std::move(item));
  }
  const nlohmann::json histograms = queue.value("waitHistograms", nlohmann::json::object());
  nlohmann::json waits;
  if (histograms.contains(caller)) {
    waits = histograms[caller];
  } else {
    // A tenant nothing was placed for yet: the empty histogram PassMetrics::Waits gives.
    const Histogram none(PassMetrics::WaitBounds());
    waits = WaitHistogramJson(none);
  }
  return nlohmann::json{{"items", std::move(items)}, {"waitHistogram", std::move(waits)}};
}

nlohmann::json WaitHistogramJson(const Histogram& h) {
  return {{"bounds", h.bounds()}, {"counts", h.counts()}, {"count", h.count()}, {"sum", h.sum()}};
}

}  // namespace gpufed::reconcile
