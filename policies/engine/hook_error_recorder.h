#pragma once
// Policy hooks that remember their failures. PolicyTests run through it so that a case
// whose hook raised an error or ran out of its instruction or memory budget fails,
// instead of passing on the placer's fallback (a failed hook is skipped at run time;
// in a test it is a bug in the revision, and a revision with one is not activated).
#include <string>
#include <vector>

#include "controller/placement/hooks.h"

namespace gpufed::policy {

class HookErrorRecorder : public placement::PolicyHooks {
 public:
  // `inner` must outlive the recorder.
  explicit HookErrorRecorder(placement::PolicyHooks* inner) : inner_(inner) {}

  std::vector<placement::HookOutcome> Admit(const nlohmann::json& workload, double now_seconds) override;
  bool HasAdmitHooks() const override { return inner_->HasAdmitHooks(); }
  std::vector<placement::HookOutcome> Filter(const nlohmann::json& workload, const nlohmann::json& cluster,
                                             double now_seconds) override;
  double Score(const nlohmann::json& workload, const nlohmann::json& cluster, double now_seconds,
               std::vector<std::string>& errors) override;
  bool RecordWorkloadReads(bool on) override { return inner_->RecordWorkloadReads(on); }
  std::vector<ViewRead> TakeWorkloadReads() override { return inner_->TakeWorkloadReads(); }

  // The distinct errors since the last call (each names policy, file and line), in the
  // order they first happened; forgets them.
  std::vector<std::string> TakeErrors();

 private:
  void Note(const std::string& error);

  placement::PolicyHooks* inner_;
  std::vector<std::string> errors_;
};

}  // namespace gpufed::policy
