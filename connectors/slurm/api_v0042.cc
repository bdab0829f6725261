// slurmrestd OpenAPI v0.0.42 (data_parser/v0.0.42: Slurm 24.11 to 26.05; verified against
// 24.11.5). Differs from v0.0.40/v0.0.41 (api_v0040.h) where the connector looks:
//   - the submit reply has no "result" any more: only the top-level job_id;
//   - DELETE /job/{id} reports failures in "status": one entry per failure with
//     error.code 2017 (unknown job) or 2021 (already completing or completed), [] when
//     all went well, so a cancel needs no read-back;
//   - ping adds "responding" and "primary".
#include "connectors/slurm/api_common.h"
#include "connectors/slurm/api_v0040.h"

namespace gpufed::connectors::slurm {
namespace {

using nlohmann::json;

constexpr int kAlreadyCompleting = 2021;

class ApiV0042Mapping : public ApiV0040Mapping {
 public:
  std::string version() const override { return "v0.0.42"; }

  Status ParseCancel(const json& reply, int64_t job_id) const override {
    std::string what = "slurmrestd " + version() + " DELETE " + JobPath(job_id);
    ReplyContext ctx(version(), "DELETE", JobPath(job_id));
    GPUFED_RETURN_IF_ERROR(ctx.ExpectObject(reply));
    Fields top(ctx, reply, "");
    std::vector<SlurmError> failures = ReadErrors(reply);
    const json* status = top.Array("status");
    for (size_t i = 0; status != nullptr && i < status->size() && top.ok(); ++i) {
      Fields entry = top.Element((*status)[i], i, "status");
      Fields error = entry.Child("error", Need::kRequired);
      SlurmError e;
      e.number = static_cast<int>(error.Int("code"));
      e.error = error.Str("string", Need::kOptional);
      e.description = error.Str("message", Need::kOptional);
      if (e.number != kAlreadyCompleting) failures.push_back(std::move(e));  // finished is fine
    }
    if (!top.ok()) return top.status();
    return StatusFromSlurmErrors(failures, 200, what);
  }
  bool CancelReportsFailures() const override { return true; }

 protected:
  int64_t ReadSubmitJobId(Fields& top) const override {
    return top.Has("job_id") ? std::max<int64_t>(0, top.Int("job_id")) : 0;
  }
};

}  // namespace

const ApiMapping& ApiV0042() {
  static const ApiV0042Mapping kMapping;
  return kMapping;
}

}  // namespace gpufed::connectors::slurm
