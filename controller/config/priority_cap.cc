#include "controller/config/priority_cap.h"

namespace gpufed::config {

std::optional<PriorityCap> DeclaredPriorityCap(const model::Tenant& tenant) {
  if (!tenant.max_priority) return std::nullopt;
  return PriorityCap{*tenant.max_priority,
                     tenant.max_priority_class.empty() ? "" : " (" + tenant.max_priority_class + ")"};
}

std::optional<Diagnostic> CheckPriorityCap(const model::Workload& w, const PriorityCap& cap) {
  if (w.priority <= cap.value) return std::nullopt;
  const model::SourceLocation& at = w.metadata.location;
  return Diagnostic{at.file, at.line, at.column, "spec.priority",
                    "priority " + std::to_string(w.priority) + " is above tenant " + w.tenant + "'s maxPriority " +
                        std::to_string(cap.value) + cap.named};
}

}  // namespace gpufed::config
