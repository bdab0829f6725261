#include "controller/config/decoders.h"
#include "controller/model/view_fields.h"

namespace gpufed::config {
namespace {

void DecodeResources(const YamlField& f, model::ResourceRequest& out) {
  if (!f.ExpectObject({"gpus", "gpuMemory", "gpuShare", "gpuModels", "migProfile", "topology", "nodes", "gpusPerNode",
                       "cpu", "memory"})) {
    return;
  }
  if (auto v = f.Child("gpus").Int(0, 1024)) out.gpus = static_cast<int>(*v);
  if (auto v = f.Child("gpuMemory").QuantityValue(Quantity(), kMaxGpuMemory)) out.gpu_memory = *v;
  YamlField share = f.Child("gpuShare");
  if (auto v = share.QuantityValue(Quantity(), Quantity::FromUnits(1))) {
    out.gpu_share = *v;
    if (v->milli() == 0) share.Error("gpuShare must be above 0 (e.g. 250m for a quarter of a GPU)");
  }
  if (auto v = f.Child("gpuModels").StringList()) out.gpu_models = *v;
  if (auto v = f.Child("migProfile").String()) out.mig_profile = *v;
  if (auto v = f.Child("topology").Enum(model::TopologyNames())) {
    out.topology = *v == "same-node" ? model::Topology::kSameNode : model::Topology::kAny;
  }
  if (auto v = f.Child("nodes").Int(1, 4096)) out.nodes = static_cast<int>(*v);
  if (auto v = f.Child("gpusPerNode").Int(1, kMaxGpusPerNode)) out.gpus_per_node = static_cast<int>(*v);
  if (auto v = f.Child("cpu").QuantityValue(Quantity(), kMaxCpu)) out.cpu = *v;
  if (auto v = f.Child("memory").QuantityValue(Quantity(), kMaxNodeMemory)) out.memory = *v;

  // Shapes that cannot mean anything: say so now rather than queue forever.
  if (out.nodes > 1 && out.gpus_per_node == 0)
    f.Child("gpusPerNode").Error("a multi-node gang (nodes > 1) needs gpusPerNode");
  if (out.nodes > 1 && out.gpus != 0 && out.gpus != out.nodes * out.gpus_per_node) {
    f.Child("gpus").Error("gpus must equal nodes x gpusPerNode for a multi-node gang (or be omitted)");
  }
  if (out.nodes == 1 && out.gpus == 0 && out.gpus_per_node > 0) out.gpus = out.gpus_per_node;
  if (out.is_fractional() && out.gpus > 1) {
    f.Child("gpus").Error("a fraction of a GPU (gpuShare or migProfile) is asked with gpus: 1");
  }
  if (out.is_fractional() && out.gpus == 0) out.gpus = 1;
}

void DecodeData(const YamlField& f, model::DataSpec& out) {
  if (!f.ExpectObject({"dataset", "size", "sensitivity", "pii", "residency"})) return;
  if (auto v = f.Child("dataset").String()) out.dataset = *v;
  if (auto v = f.Child("size").QuantityValue(Quantity(), kMaxDatasetSize)) out.size = *v;
  if (auto v = f.Child("sensitivity").Enum(model::SensitivityNames())) {
    out.sensitivity = *v == "public"         ? model::Sensitivity::kPublic
                      : *v == "internal"     ? model::Sensitivity::kInternal
                      : *v == "confidential" ? model::Sensitivity::kConfidential
                                             : model::Sensitivity::kRestricted;
  }
  if (auto v = f.Child("pii").Bool()) out.pii = *v;
  if (auto v = f.Child("residency").StringList()) out.residency = *v;
}

void DecodeRun(const YamlField& f, model::RunSpec& out) {
  if (!f.ExpectObject({"image", "command", "args", "env", "workingDir"})) return;
  if (auto v = f.Child("image").String()) out.image = *v;
  if (auto v = f.Child("command").StringList()) out.command = *v;
  if (auto v = f.Child("args").StringList()) out.args = *v;
  if (auto v = f.Child("env").StringMap()) out.env = *v;
  if (auto v = f.Child("workingDir").String()) out.working_dir = *v;
}

model::WorkloadType ParseType(const std::string& t) {
  if (t == "training") return model::WorkloadType::kTraining;
  if (t == "fine-tuning") return model::WorkloadType::kFineTuning;
  if (t == "inference") return model::WorkloadType::kInference;
  if (t == "rendering") return model::WorkloadType::kRendering;
  if (t == "simulation") return model::WorkloadType::kSimulation;
  return model::WorkloadType::kBatch;
}

}  // namespace

WrittenPriority DecodePriority(const YamlField& f) {
  WrittenPriority out;
  if (!f.defined()) return out;
  ScalarKind kind = f.node().IsScalar() ? ClassifyScalar(f.node()) : ScalarKind::kNull;
  if (kind == ScalarKind::kInt) {
    if (auto v = f.Int(-1000000000, 1000000000)) out.number = static_cast<int>(*v);
  } else if (kind == ScalarKind::kFloat) {
    // 1.5 or 1e3: a number, but priorities are whole numbers (or class names).
    f.Error("priority " + f.node().Scalar() +
            " is not a whole number; write an integer from -1000000000 to "
            "1000000000 or a priority class name");
  } else if (auto v = f.String()) {
    out.class_name = *v;  // resolved against the priority classes after loading
    f.NoteReference(ReferenceKind::kPriorityClass, *v);
  }
  return out;
}

void DecodeWorkloadSpec(const YamlField& spec, bool partial, model::Workload& out) {
  Required required = partial ? Required::kNo : Required::kYes;
  if (!spec.ExpectObject({"tenant", "priority", "type", "resources", "durationHint", "data", "checkpoint",
                          "preemptible", "spot", "maxCost", "submittedAt", "run"},
                         required)) {
    return;
  }
  YamlField tenant = spec.Child("tenant");
  if (auto v = tenant.String(required)) {
    out.tenant = *v;
    tenant.NoteReference(ReferenceKind::kTenant, *v);
  }
  WrittenPriority priority = DecodePriority(spec.Child("priority"));
  if (priority.number) {
    out.priority = *priority.number;
    out.has_priority = true;
  }
  if (!priority.class_name.empty()) out.priority_class = priority.class_name;
  if (auto v = spec.Child("type").Enum(model::WorkloadTypeNames())) {
    out.type = ParseType(*v);
  }
  YamlField resources = spec.Child("resources");
  if (resources.defined() || !partial) {
    DecodeResources(resources, out.resources);
    if (!resources.defined()) resources.Error("missing required field");
  } else {
    out.resources.gpus = 1;
  }
  if (auto v = spec.Child("durationHint").DurationValue()) {
    out.duration_hint = *v;
    out.has_duration_hint = true;
  }
  DecodeData(spec.Child("data"), out.data);
  YamlField checkpoint = spec.Child("checkpoint");
  if (checkpoint.ExpectObject({"enabled", "interval", "uri"})) {
    if (auto v = checkpoint.Child("enabled").Bool()) out.checkpoint.enabled = *v;
    if (auto v = checkpoint.Child("interval").DurationValue()) out.checkpoint.interval = *v;
    if (auto v = checkpoint.Child("uri").String()) out.checkpoint.uri = *v;
  }
  if (auto v = spec.Child("preemptible").Bool()) out.preemptible = *v;
  if (auto v = spec.Child("spot").Bool()) out.spot = *v;
  YamlField max_cost = spec.Child("maxCost");
  if (auto v = max_cost.MoneyWithCurrency()) {
    out.max_cost = *v;
    out.max_cost_location = max_cost.location();
  }
  if (auto v = spec.Child("submittedAt").DurationValue()) out.submitted_at = *v;
  DecodeRun(spec.Child("run"), out.run);
}

}  // namespace gpufed::config
