#include "policies/engine/hook_error_recorder.h"

#include <algorithm>

namespace gpufed::policy {

void HookErrorRecorder::Note(const std::string& error) {
  if (std::find(errors_.begin(), errors_.end(), error) == errors_.end()) errors_.push_back(error);
}

std::vector<placement::HookOutcome> HookErrorRecorder::Admit(const nlohmann::json& workload, double now_seconds) {
  std::vector<placement::HookOutcome> outcomes = inner_->Admit(workload, now_seconds);
  for (const placement::HookOutcome& o : outcomes) {
    if (o.error) Note(o.reason);
  }
  return outcomes;
}

std::vector<placement::HookOutcome> HookErrorRecorder::Filter(const nlohmann::json& workload,
                                                              const nlohmann::json& cluster, double now_seconds) {
  std::vector<placement::HookOutcome> outcomes = inner_->Filter(workload, cluster, now_seconds);
  for (const placement::HookOutcome& o : outcomes) {
    if (o.error) Note(o.reason);
  }
  return outcomes;
}

double HookErrorRecorder::Score(const nlohmann::json& workload, const nlohmann::json& cluster, double now_seconds,
                                std::vector<std::string>& errors) {
  const size_t before = errors.size();
  const double score = inner_->Score(workload, cluster, now_seconds, errors);
  for (size_t i = before; i < errors.size(); ++i) Note(errors[i]);
  return score;
}

std::vector<std::string> HookErrorRecorder::TakeErrors() {
  std::vector<std::string> out;
  out.swap(errors_);
  return out;
}

}  // namespace gpufed::policy
