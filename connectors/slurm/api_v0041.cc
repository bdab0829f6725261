// slurmrestd OpenAPI v0.0.41 (data_parser/v0.0.41: Slurm 24.05 to 25.11; verified against
// 24.11.5). For what the connector reads and sends it is v0.0.40 (api_v0040.h): the
// changes are elsewhere (job_resources reshaped, node gpu_spec added, bare integers taken
// silently where v0.0.40 warned, warnings quoting the offending value). The submit reply
// still repeats the job id in "result"; a cancel of an unknown job is still a silent success.
#include "connectors/slurm/api_common.h"
#include "connectors/slurm/api_v0040.h"

namespace gpufed::connectors::slurm {
namespace {

class ApiV0041Mapping : public ApiV0040Mapping {
 public:
  std::string version() const override { return "v0.0.41"; }
};

}  // namespace

const ApiMapping& ApiV0041() {
  static const ApiV0041Mapping kMapping;
  return kMapping;
}

}  // namespace gpufed::connectors::slurm
