// Controller: the API methods behind the HTTP server and CLI.
#include <algorithm>
#include <optional>
#include <sstream>

#include "controller/config/loader.h"
#include "controller/config/priority_cap.h"
#include "controller/config/references.h"
#include "controller/reconcile/controller.h"
#include "controller/reconcile/request_journal.h"
#include "controller/reconcile/scoped_reads.h"

namespace gpufed::reconcile {

using store::WorkloadRecord;

namespace {

// The `normal` priority class of a revision: a Policy's, else the built-in one.
int NormalPriority(const model::Config& config) {
  std::optional<int> value;
  for (const model::Policy& p : config.policies) {
    auto it = p.priority_classes.find("normal");
    if (it != p.priority_classes.end()) value = it->second;
  }
  return value ? *value : config::DefaultPriorityClasses().at("normal");
}

}  // namespace

Result<WorkloadRecord> Controller::Submit(const std::string& text, const std::string& file_name, const Requester& by,
                                          const std::string& owner) {
  const std::string& tenant = by.tenant;
  // Every record an API call causes names who made it.
  if (by.principal.empty()) return InvalidArgument("a submission must name its principal");
  // Not under mu_, which a pass holds throughout: the revision published for the API (a
  // Reload meanwhile does not free it), the clock (thread-safe) and the store (which
  // serialises its writers in arrival order). So a submission does not wait for a pass.
  std::shared_ptr<const policy::Revision> revision;
  {
    MutexLock lock(limits_mu_);
    revision = api_revision_;
  }
  const Duration now = clock_->Now();
  if (!revision) return Unavailable("no policy revision is active");
  const model::Config& active = revision->config;
  // The loader gives API submissions the same file/line/field messages as `validate`.
  config::LoadResult loaded = config::LoadText(text, file_name, &active);
  // A tenant's token learns nothing of other tenants: a workload for a tenant it may not
  // use is refused alike whether that tenant exists or not (before the loader's "unknown
  // tenant" could tell them apart).
  if (!tenant.empty() && loaded.config.workloads.size() == 1 && loaded.config.workloads[0].tenant != tenant &&
      !loaded.config.workloads[0].tenant.empty()) {
    return Status(StatusCode::kPermissionDenied, "token of tenant " + tenant + " cannot submit for another tenant");
  }
  // A tenant token is held to its tenant's cap, or to the normal class when the
  // repository declares none (config/priority_cap.h); refused as forbidden (403) with the
  // line `validate` gives. Before the loader's own errors, which report a declared cap
  // as invalid (400), for admin tokens too.
  if (!tenant.empty() && loaded.config.workloads.size() == 1 && loaded.config.workloads[0].has_priority &&
      !loaded.config.workloads[0].tenant.empty()) {
    const model::Workload& w = loaded.config.workloads[0];
    const model::Tenant* t = active.FindTenant(w.tenant);
    std::optional<config::PriorityCap> cap = t != nullptr ? config::DeclaredPriorityCap(*t) : std::nullopt;
    if (!cap)
      cap =
          config::PriorityCap{NormalPriority(active), " (the normal class; set Tenant.spec.maxPriority to allow more)"};
    if (std::optional<config::Diagnostic> above = config::CheckPriorityCap(w, *cap)) {
      return Status(StatusCode::kPermissionDenied, above->ToString());
    }
  }
  if (!loaded.ok()) {
    std::string why;
    for (const auto& d : loaded.diagnostics.items()) why += (why.empty() ? "" : "\n") + d.ToString();
    return InvalidArgument(why);
  }
  if (loaded.config.workloads.size() != 1 || loaded.documents != 1) {
    return InvalidArgument(file_name + ": expected exactly one Workload document");
  }
  const model::Workload& w = loaded.config.workloads[0];
  if (!owner.empty() && w.tenant != owner) {
    return InvalidArgument(file_name + ": spec.tenant " + w.tenant + " is not the tenant of the path (" + owner + ")");
  }
  if (!tenant.empty() && w.tenant != tenant) {
    return Status(StatusCode::kPermissionDenied, "token of tenant " + tenant + " cannot submit for another tenant");
  }
  WorkloadRecord r;
  r.name = w.metadata.name;
  r.tenant = w.tenant;
  r.source = "api";
  r.spec_text = text;
  r.submitted = now;
  r.gpu_milli = int64_t{w.resources.total_gpus()} * 1000;
  // Write-ahead (request_journal.h): journal, then store, then the API's 201.
  store::SubmissionFacts facts = SubmissionFactsOf(w, r.submitted, by.principal, revision->config.revision);
  Result<WorkloadRecord> stored = store_->SubmitNumbered(std::move(r), now, std::move(facts));
  // The loop would parse the text again (Reconciler::SpecOf); hand it this parse. The
  // loader reads YAML and JSON alike, so this is the loop's spec but for the file name
  // the loop gives the text (api/NAME.yaml), set here.
  if (stored.ok()) {
    model::Workload spec = w;
    spec.metadata.location.file = "api/" + w.metadata.name + ".yaml";
    if (spec.max_cost) spec.max_cost_location.file = spec.metadata.location.file;
    submitted_specs_.Put(stored->uid, {revision->config.revision, std::move(spec)});
  }
  return stored;
}

Result<WorkloadRecord> Controller::Owned(const WorkloadRef& ref, const std::string& caller) {
  return ScopedWorkload(*store_, ref, caller);
}

Status Controller::Cancel(const WorkloadRef& ref, const Requester& by) {
  if (by.principal.empty()) return InvalidArgument("a cancel must name its principal");
  MutexLock lock(mu_);
  if (read_only()) return FailedPrecondition("a read-only controller cancels nothing");
  Result<WorkloadRecord> r = Owned(ref, by.tenant);
  if (!r.ok()) return r.status();
  if (store::IsTerminal(r->state))
    return FailedPrecondition("workload " + r->name + " is already " + StateName(r->state));
  // Who asked, and in which state the workload was, before the cancel can take effect.
  GPUFED_RETURN_IF_ERROR(JournalCancellation(journal_, *r, by.principal, clock_->Now()));
  return store_->RequestCancel(r->uid);
}

Result<std::vector<WorkloadRecord>> Controller::List(const std::string& caller, const std::string& owner) {
  MutexLock lock(mu_);
  return ScopedWorkloads(*store_, caller, owner);
}

Result<WorkloadRecord> Controller::Get(const WorkloadRef& ref, const std::string& caller) {
  MutexLock lock(mu_);
  return Owned(ref, caller);
}

Result<std::vector<store::DecisionRow>> Controller::Decisions(const WorkloadRef& ref, const std::string& caller) {
  MutexLock lock(mu_);
  return ScopedDecisions(*store_, ref, caller);
}

Result<nlohmann::json> Controller::Explain(const WorkloadRef& ref, const std::string& caller) {
  MutexLock lock(mu_);
  return ScopedExplanation(*store_, ref, caller);
}

}  // namespace gpufed::reconcile
