#pragma once
// The leader's read views in the form a standby replica reads them (issue 38): what
// /v1/clusters, /v1/tenants[/{name}], /v1/queue and /v1/audit answer an admin, plus what
// scoping a tenant's answer needs, published to the database after a pass
// (runtime/view_publisher.h). The scoping below is the one definition: the leader's
// Controller answers every caller by scoping its own unscoped view with these functions,
// and a standby scopes the published view with the same ones, so a tenant sees the same
// (and nothing of another tenant's) through either.
//
// `caller` is the token's tenant ("" for an admin).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/common/duration.h"
#include "controller/common/metrics_text.h"
#include "controller/common/status.h"

namespace gpufed::reconcile {

// The views' names, as published.
inline constexpr char kClustersView[] = "clusters";
inline constexpr char kTenantsView[] = "tenants";
inline constexpr char kQueueView[] = "queue";
inline constexpr char kAuditView[] = "audit";

// Every view at one moment of the leader (taken under one lock).
struct ReadViews {
  nlohmann::json clusters;  // Controller::Clusters(): the items of /v1/clusters
  // {"items": [every tenant's object], "declared": [names the active revision declares]}
  nlohmann::json tenants;
  // {"items": [every waiting workload, in the placer's order, positions among all],
  //  "waitHistograms": {"": every tenant's, "<tenant>": its own, ...}}
  nlohmann::json queue;
  nlohmann::json audit;     // Controller::AuditStatus()
  Duration now;             // the controller's time when they were taken
};

// /v1/tenants: the items the caller may see.
nlohmann::json ScopeTenants(const nlohmann::json& tenants, const std::string& caller);
// /v1/tenants/{name}, first step: NotFound when the caller is another tenant (a tenant
// cannot tell another tenant from a missing one), before anything is read.
Status TenantVisible(const std::string& name, const std::string& caller);
// /v1/tenants/{name}: the tenant's object when the caller may see it and the revision
// declares it; NotFound otherwise.
Result<nlohmann::json> ScopeTenant(const nlohmann::json& tenants, const std::string& name, const std::string& caller);
// /v1/queue: the caller's waiting work (positions numbered among what it sees) and its
// own wait histogram.
nlohmann::json ScopeQueue(const nlohmann::json& queue, const std::string& caller);
// A wait histogram as /v1/queue shows it ({"bounds", "counts", "count", "sum"}).
nlohmann::json WaitHistogramJson(const Histogram& h);

}  // namespace gpufed::reconcile
