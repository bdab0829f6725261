#pragma once
// The quickstart example (examples/quickstart) as a prepared revision, for benchmarks that
// plan or load against a real repository: prepared once per process, then shared.
#include "policies/engine/activation.h"

namespace gpufed::bench {

// Its `revision` is null when the example does not activate (the benchmark says so).
const policy::Candidate& QuickstartCandidate();

}  // namespace gpufed::bench
