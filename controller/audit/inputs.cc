#include "controller/audit/inputs.h"

#include <atomic>

#include "controller/audit/record.h"
#include "controller/common/sha256.h"

namespace gpufed::audit {
namespace {

void PutQuantity(nlohmann::json& j, const char* key, const Quantity& q) {
  if (q.milli() != 0) j[key] = q.ToString();
}

}  // namespace

nlohmann::json WorkloadDocument(const model::Workload& w) {
  nlohmann::json metadata = {{"name", w.metadata.name}};
  if (!w.metadata.labels.empty()) metadata["labels"] = w.metadata.labels;
  if (!w.metadata.annotations.empty()) metadata["annotations"] = w.metadata.annotations;

  const model::ResourceRequest& r = w.resources;
  nlohmann::json resources = nlohmann::json::object();
  if (r.gpus != 0 && !(r.nodes > 1 && r.gpus == r.nodes * r.gpus_per_node)) resources["gpus"] = r.gpus;
  PutQuantity(resources, "gpuMemory", r.gpu_memory);
  PutQuantity(resources, "gpuShare", r.gpu_share);
  if (!r.gpu_models.empty()) resources["gpuModels"] = r.gpu_models;
  if (!r.mig_profile.empty()) resources["migProfile"] = r.mig_profile;
  if (r.topology != model::Topology::kAny) resources["topology"] = model::TopologyName(r.topology);
  if (r.nodes != 1) resources["nodes"] = r.nodes;
  if (r.gpus_per_node != 0 && r.nodes > 1) resources["gpusPerNode"] = r.gpus_per_node;
  PutQuantity(resources, "cpu", r.cpu);
  PutQuantity(resources, "memory", r.memory);

  nlohmann::json spec = {{"tenant", w.tenant}, {"type", model::WorkloadTypeName(w.type)}, {"resources", resources}};
  if (!w.priority_class.empty()) {
    spec["priority"] = w.priority_class;
  } else if (w.has_priority) {
    spec["priority"] = w.priority;
  }
  if (w.has_duration_hint) spec["durationHint"] = w.duration_hint.ToString();
  nlohmann::json data = nlohmann::json::object();
  if (!w.data.dataset.empty()) data["dataset"] = w.data.dataset;
  PutQuantity(data, "size", w.data.size);
  data["sensitivity"] = model::SensitivityName(w.data.sensitivity);
  if (w.data.pii) data["pii"] = true;
  if (!w.data.residency.empty()) data["residency"] = w.data.residency;
  spec["data"] = data;
  if (w.checkpoint.enabled || !w.checkpoint.uri.empty() || w.checkpoint.interval.millis() != 0) {
    nlohmann::json cp = {{"enabled", w.checkpoint.enabled}};
    if (w.checkpoint.interval.millis() != 0) cp["interval"] = w.checkpoint.interval.ToString();
    if (!w.checkpoint.uri.empty()) cp["uri"] = w.checkpoint.uri;
    spec["checkpoint"] = cp;
  }
  if (w.preemptible) spec["preemptible"] = true;
  if (w.spot) spec["spot"] = true;
  if (w.max_cost) spec["maxCost"] = w.max_cost->ToString();
  if (w.submitted_at.millis() != 0) spec["submittedAt"] = w.submitted_at.ToString();
  nlohmann::json run = nlohmann::json::object();
  if (!w.run.image.empty()) run["image"] = w.run.image;
  if (!w.run.command.empty()) run["command"] = w.run.command;
  if (!w.run.args.empty()) run["args"] = w.run.args;
  if (!w.run.env.empty()) run["env"] = w.run.env;
  if (!w.run.working_dir.empty()) run["workingDir"] = w.run.working_dir;
  if (!run.empty()) spec["run"] = run;
  return {{"apiVersion", model::kApiVersion}, {"kind", "Workload"}, {"metadata", metadata}, {"spec", spec}};
}

std::string WorkloadSpecHash(const model::Workload& workload) {
  return "sha256:" + Sha256Hex(DumpPayload(WorkloadDocument(workload)));
}

nlohmann::json SnapshotDocument(const placement::Snapshot& snapshot, const std::string& repo_root) {
  nlohmann::json usage = nlohmann::json::object();
  for (const auto& [tenant, u] : snapshot.usage) {
    usage[tenant] = {{"gpuMilliInUse", u.gpu_milli_in_use}, {"spent", u.spent.ToString()},
                     {"cloudSpent", u.cloud_spent.ToString()}};
  }
  nlohmann::json pending = nlohmann::json::array();
  for (const model::Workload* w : snapshot.pending) pending.push_back(WorkloadDocument(*w));
  std::string revision = snapshot.config != nullptr ? snapshot.config->revision : "";
  return {{"format", 1},
          {"revision", {{"id", revision}, {"repo", repo_root}}},
          {"nowMillis", snapshot.now.millis()},
          {"onpremQueueDepth", snapshot.onprem_queue_depth},
          {"usage", usage},
          {"pending", pending}};
}

SnapshotStore::SnapshotStore(Env* env, std::string audit_dir) : env_(env), dir_(std::move(audit_dir) + "/snapshots") {}

std::string SnapshotStore::PathFor(const std::string& hex) const { return dir_ + "/" + hex.substr(0, 2) + "/" + hex + ".json"; }

Result<std::string> SnapshotStore::Put(const nlohmann::json& document) {
  std::string text = DumpPayload(document);
  std::string hex = Sha256Hex(text);
  std::string path = PathFor(hex);
  if (!env_->FileExists(path)) {
    GPUFED_RETURN_IF_ERROR(env_->CreateDirs(dir_ + "/" + hex.substr(0, 2)));
    GPUFED_RETURN_IF_ERROR(WriteFileAtomic(*env_, path, text));
  }
  return "sha256:" + hex;
}

Result<nlohmann::json> SnapshotStore::Get(const std::string& digest) {
  if (digest.size() != 71 || digest.substr(0, 7) != "sha256:") return InvalidArgument("not a snapshot digest: " + digest);
  std::string hex = digest.substr(7);
  Result<std::string> text = env_->ReadFile(PathFor(hex));
  if (!text.ok()) return text.status();
  if (Sha256Hex(*text) != hex) return Status(StatusCode::kDataLoss, "snapshot " + digest + " does not match its digest");
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) return Status(StatusCode::kDataLoss, "snapshot " + digest + " is not JSON");
  return j;
}

}  // namespace gpufed::audit
