#include "controller/audit/snapshot_writer.h"

#include "controller/audit/inputs.h"
#include "controller/audit/record.h"
#include "controller/audit/workload_text.h"

namespace gpufed::audit {

Result<SnapshotWriter::Remembered*> SnapshotWriter::Document(const model::Workload& workload) {
  auto [it, added] = remembered_.try_emplace(&workload);
  Remembered& r = it->second;
  if (added || !(r.workload == workload)) {
    Result<std::string> name = store_->Add(WorkloadDocumentText(workload));
    if (!name.ok()) {
      remembered_.erase(it);
      return name.status();
    }
    r = Remembered{};
    r.workload = workload;
    r.document = std::move(*name);
    ++stats_.workloads_serialised;
  }
  r.used = writes_;
  return &r;
}

Result<std::string> SnapshotWriter::Entry(const placement::RunningWorkload& running) {
  Result<Remembered*> doc = Document(*running.workload);
  if (!doc.ok()) return doc.status();
  Remembered& r = **doc;
  if (!r.has_entry || !(r.binding == running.binding) || r.started_at != running.started_at ||
      r.last_checkpoint != running.last_checkpoint || r.attempt != running.attempt) {
    Result<std::string> name = store_->Add(DumpPayload(RunningEntryDocument(running, r.document)));
    if (!name.ok()) return name.status();
    r.has_entry = true;
    r.binding = running.binding;
    r.started_at = running.started_at;
    r.last_checkpoint = running.last_checkpoint;
    r.attempt = running.attempt;
    r.entry = std::move(*name);
    ++stats_.entries_serialised;
  }
  return r.entry;
}

Result<std::string> SnapshotWriter::Observed(const std::string& cluster, const placement::ObservedCluster& observed) {
  auto [it, added] = clusters_.try_emplace(cluster);
  RememberedCluster& r = it->second;
  if (added || !(r.observed == observed)) {
    Result<std::string> name = store_->Add(ObservedClusterText(observed));
    if (!name.ok()) {
      clusters_.erase(it);
      return name.status();
    }
    r.observed = observed;
    r.name = std::move(*name);
    ++stats_.clusters_serialised;
  }
  r.used = writes_;
  return r.name;
}

Result<std::string> SnapshotWriter::Write(const placement::Snapshot& snapshot, const std::string& repo_root) {
  ++writes_;
  nlohmann::json document = SnapshotHeader(snapshot, repo_root);
  nlohmann::json& pending = document["pending"];
  for (const model::Workload* w : snapshot.pending) {
    Result<Remembered*> doc = Document(*w);
    if (!doc.ok()) return doc.status();
    pending.push_back((*doc)->document);
  }
  nlohmann::json& observed = document["observed"];
  for (const auto& [cluster, c] : snapshot.observed) {
    Result<std::string> name = Observed(cluster, c);
    if (!name.ok()) return name.status();
    observed[cluster] = std::move(*name);
  }
  nlohmann::json& running = document["running"];
  for (const placement::RunningWorkload& r : snapshot.running) {
    if (r.workload == nullptr) continue;
    Result<std::string> entry = Entry(r);
    if (!entry.ok()) return entry.status();
    running.push_back(std::move(*entry));
  }
  // Forget what this pass did not read, so memory follows the live work, not history.
  std::erase_if(remembered_, [this](const auto& kv) { return kv.second.used != writes_; });
  std::erase_if(clusters_, [this](const auto& kv) { return kv.second.used != writes_; });
  Result<std::string> name = store_->Add(DumpPayload(document));
  if (!name.ok()) return name.status();
  GPUFED_RETURN_IF_ERROR(store_->Sync());
  return name;
}

}  // namespace gpufed::audit
