#include "bench/quickstart.h"

#include <string>

namespace gpufed::bench {

const policy::Candidate& QuickstartCandidate() {
  static const policy::Candidate candidate =
      policy::PrepareRevision({std::string(GPUFED_SOURCE_DIR) + "/examples/quickstart"}, nullptr);
  return candidate;
}

}  // namespace gpufed::bench
