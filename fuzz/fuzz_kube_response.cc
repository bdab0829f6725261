// Kubernetes API answers: a list page (nodes, pods, jobs), a single object (a Job read
// back, a node), an error Status body, and the RFC 3339 / HTTP-date times they carry,
// through the connector's parsing and mapping (kube_api.h, observe_mapping.h) against a
// fixed kubernetes Cluster of examples/hybrid-k8s. Every answer maps to values or an
// error Status, never an exception or a crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "connectors/http/token_bucket.h"
#include "connectors/kubernetes/kube_api.h"
#include "connectors/kubernetes/observe_mapping.h"
#include "controller/config/loader.h"
#include "policies/engine/validation.h"

namespace kube = gpufed::connectors::kubernetes;

namespace {

const gpufed::model::Cluster& KubeCluster() {
  static const gpufed::model::Cluster* cluster = [] {
    auto loaded = gpufed::config::LoadRepository({GPUFED_SOURCE_DIR "/examples/hybrid-k8s"},
                                                 gpufed::policy::ProductLoadOptions(nullptr));
    if (!loaded.ok()) std::abort();
    for (const auto& c : loaded.config.clusters) {
      if (c.metadata.name == "gke-europe-west4") return new gpufed::model::Cluster(c);
    }
    std::abort();
  }();
  return *cluster;
}

void MapObjects(const std::vector<nlohmann::json>& objects) {
  const size_t n = std::min<size_t>(objects.size(), 16);  // MapJob is pods x jobs
  std::vector<nlohmann::json> first(objects.begin(), objects.begin() + static_cast<std::ptrdiff_t>(n));
  const std::map<std::string, kube::NodeUsage> usage = kube::UsageByNode(first);
  std::vector<const nlohmann::json*> pods;
  pods.reserve(first.size());
  for (const nlohmann::json& o : first) pods.push_back(&o);
  kube::TimeBase time{gpufed::Duration::FromSeconds(3600), 1'800'000'000};
  std::map<std::string, std::string> pool_by_node;
  for (const nlohmann::json& o : first) {
    kube::MappedNode node = kube::MapNode(o, KubeCluster(), usage.empty() ? kube::NodeUsage{} : usage.begin()->second);
    pool_by_node[node.node.name] = node.node.pool;
    (void)kube::MapJob(o, pods, time, KubeCluster(), pool_by_node);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (64u << 10)) return 0;
  const std::string body(reinterpret_cast<const char*>(data), size);
  (void)kube::ParseRfc3339(body);
  (void)gpufed::connectors::http::ParseHttpDate(body);
  for (int status : {400, 404, 409, 410, 422, 429, 500, 504, 302}) {
    gpufed::connectors::http::Response response;
    response.status = status;
    response.body = body;
    (void)kube::StatusFromResponse(response, "get /fuzz");
  }
  gpufed::Result<kube::ListPage> page = kube::ParseListPage(body, "list /fuzz");
  if (page.ok()) MapObjects(page->items);
  // The same body as one object: GET of a Job or a Node.
  nlohmann::json object = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!object.is_discarded()) MapObjects({object});
  return 0;
}
