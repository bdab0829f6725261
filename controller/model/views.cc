#include "controller/model/views.h"

#include "controller/common/hash64.h"

namespace gpufed::model {
namespace {

double Decimal(const Money& m) { return static_cast<double>(m.micros()) / Money::kMicrosPerUnit; }

nlohmann::json PriceMap(const std::map<std::string, Money>& prices) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [model, price] : prices) out[model] = Decimal(price);
  return out;
}

// Builds the view's members that `want` selects (every one when it is null).
nlohmann::json BuildWorkloadView(const Workload& w, const ViewMembers* want) {
  // Built member by member into the objects' maps: nlohmann's initializer lists copy
  // every nested value once more, and the placer builds this view for every workload
  // it decides for the first time.
  auto wanted = [want](std::string_view member) { return want == nullptr || want->count(member) > 0; };
  const ResourceRequest& r = w.resources;
  nlohmann::json view = nlohmann::json::object();
  nlohmann::json::object_t& o = view.get_ref<nlohmann::json::object_t&>();
  if (wanted("name")) o.emplace("name", w.metadata.name);
  if (wanted("labels")) o.emplace("labels", w.metadata.labels);
  if (wanted("tenant")) o.emplace("tenant", w.tenant);
  if (wanted("priority")) o.emplace("priority", w.priority);
  if (wanted("priorityClass")) o.emplace("priorityClass", w.priority_class);
  if (wanted("type")) o.emplace("type", WorkloadTypeName(w.type));
  if (wanted("resources")) {
    nlohmann::json& resources = o["resources"] = nlohmann::json::object();
    nlohmann::json::object_t& res = resources.get_ref<nlohmann::json::object_t&>();
    res.emplace("gpus", r.total_gpus());  // gangs included: a rule on gpus must see a 2 x 8 gang as 16
    res.emplace("totalGpus", r.total_gpus());
    res.emplace("gpuMemory", r.gpu_memory.milli() / 1000);
    res.emplace("gpuShare", r.gpu_share.units());
    res.emplace("gpuModels", r.gpu_models);
    res.emplace("migProfile", r.mig_profile);
    res.emplace("fractional", r.is_fractional());
    res.emplace("topology", TopologyName(r.topology));
    res.emplace("nodes", r.nodes);
    res.emplace("gpusPerNode", r.nodes > 1 ? r.gpus_per_node : r.gpus);
    res.emplace("cpu", r.cpu.units());
    res.emplace("memory", r.memory.milli() / 1000);
  }
  if (wanted("durationHint")) o.emplace("durationHint", w.duration_hint.seconds());
  if (wanted("data")) {
    nlohmann::json& data = o["data"] = nlohmann::json::object();
    nlohmann::json::object_t& d = data.get_ref<nlohmann::json::object_t&>();
    d.emplace("dataset", w.data.dataset);
    d.emplace("size", w.data.size.milli() / 1000);
    d.emplace("sensitivity", SensitivityName(w.data.sensitivity));
    d.emplace("pii", w.data.pii);
    d.emplace("residency", w.data.residency);
  }
  if (wanted("checkpoint")) {
    nlohmann::json::object_t& checkpoint =
        (o["checkpoint"] = nlohmann::json::object()).get_ref<nlohmann::json::object_t&>();
    checkpoint.emplace("enabled", w.checkpoint.enabled);
    checkpoint.emplace("interval", w.checkpoint.interval.seconds());
  }
  if (wanted("preemptible")) o.emplace("preemptible", w.preemptible);
  if (wanted("spot")) o.emplace("spot", w.spot);
  if (wanted("submittedAt")) o.emplace("submittedAt", w.submitted_at.seconds());
  if (wanted("metadata")) {
    nlohmann::json::object_t& metadata =
        (o["metadata"] = nlohmann::json::object()).get_ref<nlohmann::json::object_t&>();
    metadata.emplace("name", w.metadata.name);
    metadata.emplace("labels", w.metadata.labels);
  }
  if (w.max_cost && wanted("maxCost")) o.emplace("maxCost", Decimal(*w.max_cost));
  return view;
}

}  // namespace

nlohmann::json WorkloadView(const Workload& w) { return BuildWorkloadView(w, nullptr); }

nlohmann::json WorkloadView(const Workload& w, const ViewMembers& only) { return BuildWorkloadView(w, &only); }

uint64_t WorkloadViewKey(const Workload& w) {
  Hash64 h;
  auto strings = [&h](const auto& list) {
    h.Add(static_cast<uint64_t>(list.size()));
    for (const std::string& s : list) h.Add(s);
  };
  h.Add(w.metadata.name);
  h.Add(static_cast<uint64_t>(w.metadata.labels.size()));
  for (const auto& [key, value] : w.metadata.labels) {
    h.Add(key);
    h.Add(value);
  }
  h.Add(w.tenant);
  h.Add(static_cast<uint64_t>(static_cast<int64_t>(w.priority)));
  h.Add(w.priority_class);
  h.Add(static_cast<uint64_t>(w.type));
  const ResourceRequest& r = w.resources;
  for (int64_t v : {int64_t{r.gpus}, r.gpu_memory.milli(), r.gpu_share.milli(), static_cast<int64_t>(r.topology),
                    int64_t{r.nodes}, int64_t{r.gpus_per_node}, r.cpu.milli(), r.memory.milli()}) {
    h.Add(static_cast<uint64_t>(v));
  }
  strings(r.gpu_models);
  h.Add(r.mig_profile);
  h.Add(static_cast<uint64_t>(w.duration_hint.millis()));
  h.Add(w.data.dataset);
  h.Add(static_cast<uint64_t>(w.data.size.milli()));
  h.Add(static_cast<uint64_t>(w.data.sensitivity));
  h.Add(uint64_t{w.data.pii});
  strings(w.data.residency);
  h.Add(uint64_t{w.checkpoint.enabled});
  h.Add(static_cast<uint64_t>(w.checkpoint.interval.millis()));
  h.Add(uint64_t{w.preemptible} | uint64_t{w.spot} << 1 | uint64_t{w.max_cost.has_value()} << 2);
  h.Add(static_cast<uint64_t>(w.submitted_at.millis()));
  if (w.max_cost) {
    h.Add(static_cast<uint64_t>(w.max_cost->micros()));
    h.Add(w.max_cost->currency());
  }
  return h.value();
}

nlohmann::json NodePoolView(const NodePool& pool) {
  const char* isolation = pool.gpu.sharing == GpuSharing::kMig      ? "hard"
                          : pool.gpu.sharing == GpuSharing::kMemory ? "soft"
                                                                    : "exclusive";
  return {
      {"name", pool.name},
      {"count", pool.count},
      {"cpu", pool.cpu.units()},
      {"memory", pool.memory.milli() / 1000},
      {"spot", pool.spot},
      {"isolation", isolation},
      {"gpu",
       {{"model", pool.gpu.model},
        {"count", pool.gpu.count},
        {"memory", pool.gpu.memory.milli() / 1000},
        {"nvlink", pool.gpu.nvlink},
        {"sharing", GpuSharingName(pool.gpu.sharing)},
        {"migProfiles", pool.gpu.mig_profiles}}},
  };
}

nlohmann::json ClusterView(const Cluster& c, const CurrencyConverter* rates) {
  nlohmann::json pools = nlohmann::json::array();
  std::vector<std::string> models;
  int total_gpus = 0;
  for (const NodePool& pool : c.node_pools) {
    pools.push_back(NodePoolView(pool));
    if (std::find(models.begin(), models.end(), pool.gpu.model) == models.end()) models.push_back(pool.gpu.model);
    total_gpus += pool.count * pool.gpu.count;
  }
  nlohmann::json view = {
      {"name", c.metadata.name},
      {"labels", c.metadata.labels},
      {"provider", c.provider},
      {"onprem", c.is_onprem()},
      {"region", c.region},
      {"zone", c.zone},
      {"connector", {{"type", c.connector.type}}},
      {"attributes",
       {{"encryptionAtRest", c.attributes.encryption_at_rest},
        {"certifications", c.attributes.certifications},
        {"labels", c.attributes.labels}}},
      {"nodePools", pools},
      {"gpuModels", models},
      {"totalGpus", total_gpus},
      {"elastic", c.elasticity.max_nodes > c.present_nodes()},
      {"pricing",
       {{"currency", c.pricing.currency},
        {"gpuHour", PriceMap(c.pricing.gpu_hour)},
        {"spotGpuHour", PriceMap(c.pricing.spot_gpu_hour)},
        {"egressPerGiB", Decimal(c.pricing.egress_per_gib)}}},
      {"network", {{"bandwidthGbps", c.bandwidth_gbps}}},
      {"datasets", c.datasets},
  };
  // Only a priced cluster has rates (its own currency at 1): an empty table would be a
  // field of no type.
  std::map<std::string, double> reach = (rates == nullptr ? CurrencyConverter() : *rates).RatesFrom(c.pricing.currency);
  if (!reach.empty()) view["pricing"]["rates"] = std::move(reach);
  return view;
}

const nlohmann::json* ResolvePath(const nlohmann::json& view, const std::vector<std::string>& segments) {
  const nlohmann::json* node = &view;
  for (const std::string& segment : segments) {
    if (!node->is_object()) return nullptr;
    auto it = node->find(segment);
    if (it == node->end()) return nullptr;
    node = &*it;
  }
  return node;
}

}  // namespace gpufed::model
