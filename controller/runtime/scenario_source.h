#pragma once
// A simulation scenario as the runtime plays it: its timed submissions are a workload
// source (each Workload is submitted when its spec.submittedAt comes), and its failures
// are the sim connectors' input (BindFailures). The reconcile loop knows neither: it
// only sees submissions and connectors.
#include <memory>
#include <string>
#include <vector>

#include "connectors/core/registry.h"
#include "connectors/sim/scenario.h"
#include "controller/common/duration.h"
#include "controller/common/status.h"
#include "controller/common/vocabulary.h"
#include "controller/model/config.h"

namespace gpufed::runtime {

inline constexpr const char* kScenarioSource = "scenario";
// The journal names a source's submissions by the source's name (workload-submitted).
static_assert(std::string_view(kScenarioSource) == kScenarioPrincipal);

class ScenarioSource {
 public:
  ScenarioSource() = default;  // no scenario: nothing to submit
  // Loads the scenario file and its submission files, checked in the context of the
  // repository's configuration (`context`: tenants, clusters, priority classes).
  // Errors name the file, line and field.
  static Result<ScenarioSource> Load(const std::string& scenario_file, const model::Config& context);

  const std::string& file() const { return file_; }
  // Every workload the scenario submits (their specs, for the loop's records).
  const std::vector<model::Workload>& specs() const { return specs_; }
  // Workloads whose submittedAt is at or before `now`, in submission order; each is
  // returned once.
  std::vector<model::Workload> TakeDue(Duration now);
  bool done() const { return next_ == order_.size(); }
  // When the next submission is due; zero when none is left.
  Duration NextSubmission() const;
  // Gives the sim connectors `registry` makes the scenario's failures: its "sim"
  // provider becomes connectors::sim::SimProvider(this scenario). Nothing to do without
  // a scenario or a sim provider. `registry` is the caller's copy of main's.
  Status BindFailures(connectors::ConnectorRegistry& registry) const;

 private:
  std::string file_;
  std::shared_ptr<const connectors::sim::Scenario> failures_;  // null: no scenario
  std::vector<model::Workload> specs_;
  std::vector<size_t> order_;  // indexes into specs_ by submittedAt
  size_t next_ = 0;
};

}  // namespace gpufed::runtime
