#include "controller/config/decoders.h"
#include "controller/model/mig_profile.h"
#include "controller/model/view_fields.h"

#include <algorithm>
#include <regex>

namespace gpufed::config {
namespace {

// The block as the model keeps it (model/connector_spec.h): the provider's name, the
// fields every provider shares, and every other field as written, for the provider to
// decode (the loader checks them through LoadOptions::connectors, loader.cc).
void DecodeConnector(const YamlField& f, model::ConnectorSpec& out) {
  out.type.clear();  // no provider is assumed: a block without a valid type is checked by none
  // Which keys a provider reads is the provider's to say; here only the mapping itself
  // (present, a mapping, no key twice) is checked.
  std::vector<std::string> keys;
  for (const auto& [key, value] : f.Entries()) keys.push_back(key);
  const std::vector<std::string_view> any_key(keys.begin(), keys.end());
  if (!f.ExpectObject(any_key, Required::kYes)) return;
  YamlField type = f.Child("type");
  out.location = type.defined() ? type.location() : f.location();
  if (auto t = type.String(Required::kYes)) {
    out.type = *t;
    if (t->empty()) type.Error("expected a connector type, not an empty string");
  }
  if (auto v = f.Child("timeout").DurationValue()) out.timeout = *v;
  if (auto v = f.Child("qps").Number(0.001, 1e6)) out.qps = *v;
  if (auto v = f.Child("burst").Int(1, 1000000)) out.burst = static_cast<int>(*v);
  for (const auto& [key, value] : f.Entries()) {
    const bool shared = std::find(std::begin(model::kConnectorSharedKeys), std::end(model::kConnectorSharedKeys),
                                  key) != std::end(model::kConnectorSharedKeys);
    if (shared) continue;
    if (std::optional<nlohmann::json> json = ToJson(value)) {
      out.fields[key] = model::ConnectorField{std::move(*json), value.path(), value.location()};
    }
  }
}

void DecodeGpu(const YamlField& f, model::GpuSpec& out) {
  if (!f.ExpectObject({"model", "count", "memory", "nvlink", "sharing", "migProfiles"}, Required::kYes)) return;
  if (auto v = f.Child("model").String(Required::kYes)) out.model = *v;
  if (auto v = f.Child("count").Int(0, kMaxGpusPerNode, Required::kYes)) out.count = static_cast<int>(*v);
  if (auto v = f.Child("memory").QuantityValue(Quantity::FromUnits(1), kMaxGpuMemory, Required::kYes)) out.memory = *v;
  if (auto v = f.Child("nvlink").Bool()) out.nvlink = *v;
  if (auto v = f.Child("sharing").Enum(model::GpuSharingNames())) {
    out.sharing = *v == "mig"      ? model::GpuSharing::kMig
                  : *v == "memory" ? model::GpuSharing::kMemory
                                   : model::GpuSharing::kNone;
  }
  YamlField profiles = f.Child("migProfiles");
  if (auto v = profiles.StringList()) {
    for (size_t i = 0; i < v->size(); ++i) {
      if (!model::ParseMigProfile((*v)[i])) {
        profiles.Elements()[i].Error("invalid MIG profile '" + (*v)[i] + "' (expected like 1g.10gb)");
      }
    }
    out.mig_profiles = *v;
  }
  if (out.sharing == model::GpuSharing::kMig && out.mig_profiles.empty()) {
    f.Child("migProfiles").Error("sharing: mig needs at least one MIG profile");
  }
}

void DecodeNodePool(const YamlField& f, model::NodePool& out) {
  if (!f.ExpectObject({"name", "count", "cpu", "memory", "spot", "gpu"})) return;
  if (auto v = f.Child("name").String(Required::kYes)) {
    out.name = *v;
    if (!IsValidName(*v)) f.Child("name").Error("invalid name '" + *v + "' (lower-case letters, digits, '-', '.')");
  }
  if (auto v = f.Child("count").Int(0, kMaxNodesPerPool, Required::kYes)) out.count = static_cast<int>(*v);
  if (auto v = f.Child("cpu").QuantityValue(Quantity(), kMaxCpu)) out.cpu = *v;
  if (auto v = f.Child("memory").QuantityValue(Quantity(), kMaxNodeMemory)) out.memory = *v;
  if (auto v = f.Child("spot").Bool()) out.spot = *v;
  DecodeGpu(f.Child("gpu"), out.gpu);
}

void DecodePricing(const YamlField& f, model::Pricing& out) {
  if (!f.ExpectObject({"currency", "gpuHour", "spotGpuHour", "egressPerGiB"})) return;
  YamlField currency = f.Child("currency");
  out.currency_location = currency.defined() ? currency.location() : f.location();
  if (auto v = currency.String()) {
    static const std::regex kCurrency("[A-Z]{3}");
    if (!std::regex_match(*v, kCurrency)) currency.Error("currency must be a three-letter code such as EUR");
    out.currency = *v;
  }
  // A cluster prices in one currency: a price that names another is an error, and one
  // named without pricing.currency becomes the cluster's.
  auto one_currency = [&](const YamlField& field, const Money& m) {
    if (m.currency().empty()) return;
    if (out.currency.empty()) {
      out.currency = m.currency();
      out.currency_location = field.location();
    } else if (m.currency() != out.currency) {
      field.Error("price in " + m.currency() + ", but the cluster prices in " + out.currency +
                  " (pricing.currency): one cluster, one currency");
    }
  };
  auto prices = [&](const char* key, std::map<std::string, Money>& dest) {
    YamlField table = f.Child(key);
    if (!table.defined()) return;
    if (!table.is_map()) {
      table.Error("expected a mapping of GPU model to price per GPU-hour");
      return;
    }
    for (const auto& [model, price] : table.Entries()) {
      if (auto m = price.MoneyValue(out.currency)) {
        one_currency(price, *m);
        dest[model] = Money(m->micros(), out.currency);
      }
    }
  };
  prices("gpuHour", out.gpu_hour);
  prices("spotGpuHour", out.spot_gpu_hour);
  YamlField egress = f.Child("egressPerGiB");
  if (auto v = egress.MoneyValue(out.currency)) {
    one_currency(egress, *v);
    out.egress_per_gib = *v;
  }
  out.egress_per_gib = Money(out.egress_per_gib.micros(), out.currency);
}

}  // namespace

void DecodeClusterSpec(const YamlField& spec, model::Cluster& out) {
  if (!spec.ExpectObject({"provider", "region", "zone", "connector", "attributes", "nodePools", "elasticity", "pricing",
                          "network", "datasets", "health"},
                         Required::kYes)) {
    return;
  }
  if (auto v = spec.Child("provider").String(Required::kYes)) out.provider = *v;
  if (auto v = spec.Child("region").String()) out.region = *v;
  if (auto v = spec.Child("zone").String(Required::kYes)) out.zone = *v;
  DecodeConnector(spec.Child("connector"), out.connector);

  YamlField attributes = spec.Child("attributes");
  if (attributes.ExpectObject({"encryptionAtRest", "certifications", "labels"})) {
    if (auto v = attributes.Child("encryptionAtRest").Bool()) out.attributes.encryption_at_rest = *v;
    if (auto v = attributes.Child("certifications").StringList()) out.attributes.certifications = *v;
    if (auto v = attributes.Child("labels").StringMap()) out.attributes.labels = *v;
  }

  YamlField pools = spec.Child("nodePools");
  std::vector<YamlField> pool_fields = pools.Elements(Required::kYes);
  if (pools.is_sequence() && pool_fields.empty()) pools.Error("a cluster needs at least one node pool");
  for (const YamlField& pool_field : pool_fields) {
    model::NodePool pool;
    DecodeNodePool(pool_field, pool);
    for (const model::NodePool& other : out.node_pools) {
      if (!pool.name.empty() && other.name == pool.name) {
        pool_field.Child("name").Error("duplicate node pool name '" + pool.name + "'");
      }
    }
    out.node_pools.push_back(std::move(pool));
  }

  YamlField elasticity = spec.Child("elasticity");
  if (elasticity.ExpectObject({"maxNodes", "provisionDelay", "idleTimeout"})) {
    if (auto v = elasticity.Child("maxNodes").Int(0, kMaxNodesPerPool)) out.elasticity.max_nodes = static_cast<int>(*v);
    if (auto v = elasticity.Child("provisionDelay").DurationValue()) out.elasticity.provision_delay = *v;
    if (auto v = elasticity.Child("idleTimeout").DurationValue()) out.elasticity.idle_timeout = *v;
  }

  YamlField health = spec.Child("health");
  if (health.ExpectObject({"unhealthyAfter", "lostAfter"})) {
    if (auto v = health.Child("unhealthyAfter").DurationValue()) out.health.unhealthy_after = *v;
    if (auto v = health.Child("lostAfter").DurationValue()) out.health.lost_after = *v;
    // Lost before unhealthy would requeue work from a cluster that still takes new work.
    if (out.health.lost_after < out.health.unhealthy_after) {
      health.Child(health.Child("lostAfter").defined() ? "lostAfter" : "unhealthyAfter")
          .Error("lostAfter (" + out.health.lost_after.ToString() + ") must not be shorter than unhealthyAfter (" +
                 out.health.unhealthy_after.ToString() + ")");
    }
  }

  DecodePricing(spec.Child("pricing"), out.pricing);
  YamlField network = spec.Child("network");
  if (network.ExpectObject({"bandwidthGbps"})) {
    if (auto v = network.Child("bandwidthGbps").Number(0.001, 1e6)) out.bandwidth_gbps = *v;
  }
  if (auto v = spec.Child("datasets").StringList()) out.datasets = *v;
}

}  // namespace gpufed::config
