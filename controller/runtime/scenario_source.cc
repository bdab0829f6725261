#include "controller/runtime/scenario_source.h"

#include <algorithm>
#include <numeric>

#include "connectors/sim/sim_connector.h"
#include "controller/config/loader.h"

namespace gpufed::runtime {

Result<ScenarioSource> ScenarioSource::Load(const std::string& scenario_file, const model::Config& context) {
  Result<connectors::sim::Scenario> scenario = connectors::sim::LoadScenario(scenario_file);
  if (!scenario.ok()) return scenario.status();
  ScenarioSource out;
  out.file_ = scenario_file;
  out.failures_ = std::make_shared<const connectors::sim::Scenario>(*scenario);
  for (const std::string& file : scenario->submissions) {
    config::LoadResult more = config::LoadRepository({file}, {}, &context);
    if (!more.ok()) {
      std::string why = "scenario submissions " + file + ":";
      for (const auto& d : more.diagnostics.items()) why += "\n  " + d.ToString();
      return InvalidArgument(why);
    }
    for (model::Workload& w : more.config.workloads) out.specs_.push_back(std::move(w));
  }
  out.order_.resize(out.specs_.size());
  std::iota(out.order_.begin(), out.order_.end(), size_t{0});
  std::stable_sort(out.order_.begin(), out.order_.end(),
                   [&](size_t a, size_t b) { return out.specs_[a].submitted_at < out.specs_[b].submitted_at; });
  return out;
}

std::vector<model::Workload> ScenarioSource::TakeDue(Duration now) {
  std::vector<model::Workload> due;
  while (next_ < order_.size() && specs_[order_[next_]].submitted_at <= now) due.push_back(specs_[order_[next_++]]);
  return due;
}

Duration ScenarioSource::NextSubmission() const {
  return next_ < order_.size() ? specs_[order_[next_]].submitted_at : Duration();
}

Status ScenarioSource::BindFailures(connectors::ConnectorRegistry& registry) const {
  if (!failures_ || registry.Find("sim") == nullptr) return Status::Ok();
  return registry.Replace(connectors::sim::SimProvider(failures_));
}

}  // namespace gpufed::runtime
