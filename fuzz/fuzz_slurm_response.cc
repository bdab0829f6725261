// slurmrestd replies: the body of any endpoint, read by every API adapter (v0.0.38,
// v0.0.40-v0.0.42) as ping, nodes, partitions, jobs, job, submit, cancel and errors, by
// version negotiation as an OpenAPI document, and as GRES text; parsed nodes and jobs then
// go through the connector's observation (observe.h) against the Slurm Cluster of
// examples/slurm-burst, with job comments read as gpufed's job tags. The parsers must
// answer every body with values or an error Status (api.h: "accept any JSON value and
// never throw"), never crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "connectors/http/token_bucket.h"
#include "connectors/slurm/api.h"
#include "connectors/slurm/gres.h"
#include "connectors/slurm/job_request.h"
#include "connectors/slurm/negotiate.h"
#include "connectors/slurm/observe.h"
#include "controller/config/loader.h"
#include "policies/engine/validation.h"

namespace slurm = gpufed::connectors::slurm;

namespace {

const gpufed::model::Cluster& SlurmCluster() {
  static const gpufed::model::Cluster* cluster = [] {
    auto loaded = gpufed::config::LoadRepository({GPUFED_SOURCE_DIR "/examples/slurm-burst"},
                                                 gpufed::policy::ProductLoadOptions(nullptr));
    if (!loaded.ok()) std::abort();
    for (const auto& c : loaded.config.clusters) {
      if (c.metadata.name == "onprem-slurm") return new gpufed::model::Cluster(c);
    }
    std::abort();
  }();
  return *cluster;
}

void Observe(const gpufed::Result<std::vector<slurm::SlurmNode>>& nodes,
             const gpufed::Result<std::vector<slurm::SlurmJob>>& jobs) {
  const std::vector<slurm::SlurmJob> none;
  const std::vector<slurm::SlurmJob>& pending = jobs.ok() ? *jobs : none;
  if (nodes.ok()) {
    std::map<std::string, slurm::NodeGroup> groups;
    (void)slurm::ObserveNodes(*nodes, SlurmCluster(), "", &groups, pending);
    (void)slurm::ObserveNodes(*nodes, SlurmCluster(), "gpu", &groups, pending);
  }
  const slurm::TimeFrame frame{1'800'000'000, gpufed::Duration::FromSeconds(3600)};
  for (const slurm::SlurmJob& job : pending) {
    bool lost = false;
    (void)slurm::MapJobState(job.state, false, &lost);
    const slurm::JobTag tag = slurm::DecodeJobTag(job.comment).value_or(slurm::JobTag{"k", "w", "t", 1});
    (void)slurm::ObserveJob(job, tag, SlurmCluster(), false, frame);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (64u << 10)) return 0;
  const std::string body(reinterpret_cast<const char*>(data), size);
  // Headers and header-like text the client reads from the same responses.
  (void)gpufed::connectors::http::ParseRetryAfter(body, "Wed, 21 Oct 2026 07:28:00 GMT");
  (void)gpufed::connectors::http::ParseHttpDate(body);
  // GRES strings ("gpu:a100:2(IDX:0-1)") and index lists come inside the JSON; fuzz them raw too.
  (void)slurm::ParseGres(body);
  (void)slurm::ParseIndexList(body);
  (void)slurm::ParseMigType(body);

  const nlohmann::json reply = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (reply.is_discarded()) return 0;  // the client reports a body that is not JSON itself
  const std::vector<std::string> offered = slurm::VersionsInOpenApi(reply);
  (void)slurm::ChooseApi(slurm::kAutoApiVersion, offered, "fuzz");
  for (const std::string& version : slurm::SupportedApiVersions()) {
    const slurm::ApiMapping* api = slurm::FindApiMapping(version);
    const std::vector<slurm::SlurmError> errors = api->ParseErrors(reply);
    (void)api->ParseWarnings(reply);
    (void)slurm::StatusFromSlurmErrors(errors, 500, "GET /fuzz");
    (void)slurm::StatusFromSlurmErrors(errors, 200, "GET /fuzz");
    (void)api->ParsePing(reply);
    (void)api->ParsePartitions(reply);
    Observe(api->ParseNodes(reply), api->ParseJobs(reply));
    (void)api->ParseJobList(reply, api->JobPath(7));
    (void)api->ParseSubmit(reply);
    (void)api->ParseCancel(reply, 7);
  }
  return 0;
}
