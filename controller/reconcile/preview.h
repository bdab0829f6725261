#pragma once
// `gpufed plan --state DIR`: the decisions the next pass of a controller would make,
// planned on the same snapshot the loop builds (snapshot_builder.h) from that
// controller's store and its clusters' observations. Read-only: no journal is opened,
// nothing is applied, the store is only read.
#include <string>

#include "connectors/core/registry.h"
#include "controller/placement/plan.h"
#include "policies/engine/activation.h"

namespace gpufed::reconcile {

struct PreviewOptions {
  std::string state_dir;
};

// NotFound when `state_dir` holds no controller store. The plan's decisions refer to
// workloads of the store; `revision` must outlive the call.
Result<placement::Plan> PreviewFromState(const policy::Revision& revision, const PreviewOptions& options,
                                         const connectors::ConnectorRegistry& registry);

}  // namespace gpufed::reconcile
