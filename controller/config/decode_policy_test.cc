// PolicyTest documents: cases, the state they start from (`given`) and what they expect.
#include "controller/config/decoders.h"

namespace gpufed::config {
namespace {

void NoteNames(const YamlField& list, ReferenceKind kind, std::vector<std::string>& dest) {
  if (auto v = list.StringList()) {
    dest = *v;
    std::vector<YamlField> elements = list.Elements();
    for (size_t i = 0; i < v->size(); ++i) elements[i].NoteReference(kind, (*v)[i]);
  }
}

void DecodeRunning(const YamlField& f, size_t index, model::GivenRunning& out) {
  out.location = f.location();
  out.name = "running-" + std::to_string(index + 1);
  if (!f.ExpectObject({"name", "workload", "cluster", "node"})) return;
  if (auto v = f.Child("name").String()) {
    out.name = *v;
    if (!IsValidName(*v)) f.Child("name").Error("invalid name '" + *v + "' (lower-case letters, digits, '-' or '.')");
  }
  YamlField cluster = f.Child("cluster");
  if (auto v = cluster.String(Required::kYes)) {
    out.cluster = *v;
    cluster.NoteReference(ReferenceKind::kCluster, *v);
  }
  if (auto v = f.Child("node").String()) out.node = *v;
  YamlField workload = f.Child("workload");
  out.workload.metadata.name = out.name;
  out.workload.metadata.location = workload.location();
  if (workload.defined()) {
    DecodeWorkloadSpec(workload, /*partial=*/true, out.workload);
  } else {
    out.workload.resources.gpus = 1;
  }
}

void DecodeGiven(const YamlField& f, model::Given& out) {
  if (!f.ExpectObject({"waited", "queueAhead", "running", "usage", "unhealthy"})) return;
  if (auto v = f.Child("waited").DurationValue()) out.waited = *v;
  if (auto v = f.Child("queueAhead").Int(0, 100000000)) out.queue_ahead = static_cast<int>(*v);
  YamlField running = f.Child("running");
  if (running.defined()) {
    out.running.emplace();
    std::vector<YamlField> entries = running.Elements();
    for (size_t i = 0; i < entries.size(); ++i) {
      model::GivenRunning entry;
      DecodeRunning(entries[i], i, entry);
      for (const model::GivenRunning& other : *out.running) {
        if (other.name == entry.name) entries[i].Error("two running entries are named '" + entry.name + "'");
      }
      out.running->push_back(std::move(entry));
    }
  }
  YamlField unhealthy = f.Child("unhealthy");
  if (unhealthy.defined()) {
    out.unhealthy.emplace();
    NoteNames(unhealthy, ReferenceKind::kCluster, *out.unhealthy);
  }
  YamlField usage = f.Child("usage");
  if (usage.defined()) {
    out.usage.emplace();
    if (!usage.is_map()) usage.Error("expected a mapping of tenant names to {spent, cloudSpent}");
    for (const auto& [tenant, spend] : usage.Entries()) {
      spend.NoteReference(ReferenceKind::kTenant, tenant);
      model::GivenSpend& s = (*out.usage)[tenant];
      if (!spend.ExpectObject({"spent", "cloudSpent"}, Required::kYes)) continue;
      s.spent = spend.Child("spent").MoneyWithCurrency();
      s.cloud_spent = spend.Child("cloudSpent").MoneyWithCurrency();
    }
  }
}

void DecodePlaced(const YamlField& placed, model::Expectation& out) {
  if (!placed.ExpectObject(
          {"cluster", "provider", "zone", "region", "node", "pool", "migProfile", "gpusPerNode", "nodes", "maxCost"})) {
    return;
  }
  YamlField cluster = placed.Child("cluster");
  if (auto v = cluster.String()) {
    out.cluster = *v;
    cluster.NoteReference(ReferenceKind::kCluster, *v);
  }
  for (const char* key : {"provider", "zone", "region"}) {
    if (auto v = placed.Child(key).String()) out.selector[key] = *v;
  }
  if (auto v = placed.Child("node").String()) out.node = *v;
  YamlField pool = placed.Child("pool");
  if (auto v = pool.String()) {
    out.pool = *v;
    pool.NoteReference(ReferenceKind::kPool, *v, /*rule_value=*/true);
  }
  YamlField mig = placed.Child("migProfile");
  if (auto v = mig.String()) {
    out.mig_profile = *v;
    mig.NoteReference(ReferenceKind::kMigProfile, *v, /*rule_value=*/true);
  }
  if (auto v = placed.Child("gpusPerNode").Int(1, 1024)) out.gpus_per_node = static_cast<int>(*v);
  if (auto v = placed.Child("nodes").Int(1, 4096)) out.nodes = static_cast<int>(*v);
  if (auto v = placed.Child("maxCost").MoneyWithCurrency()) out.max_cost = *v;
}

void DecodeExpectation(const YamlField& f, model::Expectation& out) {
  if (!f.ExpectObject({"placed", "queued", "rejected", "preempts"}, Required::kYes)) return;
  const YamlNode& node = f.node();
  const int outcomes =
      (node.Find("placed") != nullptr) + (node.Find("queued") != nullptr) + (node.Find("rejected") != nullptr);
  if (outcomes != 1) {
    f.Error("expect needs exactly one of placed, queued, rejected");
    return;
  }
  if (node.Find("placed") != nullptr) {
    out.outcome = model::ExpectedOutcome::kPlaced;
    DecodePlaced(f.Child("placed"), out);
  } else if (node.Find("queued") != nullptr) {
    out.outcome = model::ExpectedOutcome::kQueued;
    YamlField queued = f.Child("queued");
    if (queued.ExpectObject({"reason", "rule"})) {
      if (auto v = queued.Child("reason").String()) out.reason = *v;
      if (auto v = queued.Child("rule").String()) out.rule = *v;
    }
  } else {
    out.outcome = model::ExpectedOutcome::kRejected;
    YamlField rejected = f.Child("rejected");
    if (rejected.ExpectObject({"rule", "reason"})) {
      if (auto v = rejected.Child("rule").String()) out.rule = *v;
      if (auto v = rejected.Child("reason").String()) out.reason = *v;
    }
  }
  YamlField preempts = f.Child("preempts");
  if (preempts.defined()) {
    if (out.outcome != model::ExpectedOutcome::kPlaced) {
      preempts.Error("preempts goes with placed: only a placement preempts running work");
    } else if (auto v = preempts.StringList()) {
      out.preempts = *v;
    }
  }
}

}  // namespace

void DecodePolicyTestSpec(const YamlField& spec, model::PolicyTest& out) {
  if (!spec.ExpectObject({"given", "cases"}, Required::kYes)) return;
  DecodeGiven(spec.Child("given"), out.given);
  for (const YamlField& case_field : spec.Child("cases").Elements(Required::kYes)) {
    model::PolicyTestCase c;
    c.location = case_field.location();
    if (case_field.ExpectObject({"name", "given", "clusters", "tenants", "now", "workload", "expect", "reasons"})) {
      if (auto v = case_field.Child("name").String(Required::kYes)) c.name = *v;
      NoteNames(case_field.Child("clusters"), ReferenceKind::kCluster, c.clusters);
      NoteNames(case_field.Child("tenants"), ReferenceKind::kTenant, c.tenants);
      if (auto v = case_field.Child("now").DurationValue()) {
        c.now = *v;
        c.now_set = true;
      }
      DecodeGiven(case_field.Child("given"), c.given);
      YamlField workload = case_field.Child("workload");
      c.workload.metadata.name = "test-workload";
      c.workload.metadata.location = workload.location();
      if (workload.defined()) {
        DecodeWorkloadSpec(workload, /*partial=*/true, c.workload);
      } else {
        c.workload.resources.gpus = 1;
      }
      DecodeExpectation(case_field.Child("expect"), c.expect);
      if (auto v = case_field.Child("reasons").StringList()) c.reasons = *v;
    }
    out.cases.push_back(std::move(c));
  }
}

}  // namespace gpufed::config
