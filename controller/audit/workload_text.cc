#include "controller/audit/workload_text.h"

#include <charconv>
#include <map>
#include <string_view>
#include <vector>

#include "controller/audit/canonical_json.h"
#include "controller/model/meta.h"

namespace gpufed::audit {
namespace {

// One JSON object's members, written in the order the caller gives. The caller gives
// them in canonical (bytewise sorted) order; keys are ASCII literals needing no escape.
class Members {
 public:
  explicit Members(std::string* out) : out_(out) { out_->push_back('{'); }
  Members(const Members&) = delete;
  Members& operator=(const Members&) = delete;
  ~Members() { out_->push_back('}'); }

  // Writes the key; the caller writes the value.
  std::string* Key(std::string_view key) {
    out_->append(first_ ? "\"" : ",\"");
    first_ = false;
    out_->append(key);
    out_->append("\":");
    return out_;
  }
  void Text(std::string_view key, std::string_view value) { AppendCanonicalString(value, Key(key)); }
  void Integer(std::string_view key, int64_t value) {
    Key(key);
    char buf[24];
    out_->append(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof buf, value).ptr - buf));
  }
  void Bool(std::string_view key, bool value) { Key(key)->append(value ? "true" : "false"); }
  void Texts(std::string_view key, const std::vector<std::string>& values) {
    Key(key)->push_back('[');
    for (size_t i = 0; i < values.size(); ++i) {
      if (i != 0) out_->push_back(',');
      AppendCanonicalString(values[i], out_);
    }
    out_->push_back(']');
  }
  void TextMap(std::string_view key, const std::map<std::string, std::string>& values) {
    Members map(Key(key));  // std::map iterates in the bytewise order canonical text sorts by
    for (const auto& [name, value] : values) AppendCanonicalString(value, map.AnyKey(name));
  }
  // A key the user wrote (a label's, an env variable's): escaped as any string is.
  std::string* AnyKey(std::string_view key) {
    if (!first_) out_->push_back(',');
    first_ = false;
    AppendCanonicalString(key, out_);
    out_->push_back(':');
    return out_;
  }
  // A quantity is written only when it is not zero.
  void QuantityIfSet(std::string_view key, const Quantity& q) {
    if (q.milli() != 0) Text(key, q.ToString());
  }

 private:
  std::string* out_;
  bool first_ = true;
};

void AppendMetadata(const model::ObjectMeta& m, std::string* out) {
  Members metadata(out);
  if (!m.annotations.empty()) metadata.TextMap("annotations", m.annotations);
  if (!m.labels.empty()) metadata.TextMap("labels", m.labels);
  metadata.Text("name", m.name);
}

void AppendResources(const model::ResourceRequest& r, std::string* out) {
  Members resources(out);
  resources.QuantityIfSet("cpu", r.cpu);
  resources.QuantityIfSet("gpuMemory", r.gpu_memory);
  if (!r.gpu_models.empty()) resources.Texts("gpuModels", r.gpu_models);
  resources.QuantityIfSet("gpuShare", r.gpu_share);
  // A gang's total is implied by nodes x gpusPerNode, and left out as the document does.
  if (r.gpus != 0 && !(r.nodes > 1 && r.gpus == r.nodes * r.gpus_per_node)) resources.Integer("gpus", r.gpus);
  if (r.gpus_per_node != 0 && r.nodes > 1) resources.Integer("gpusPerNode", r.gpus_per_node);
  resources.QuantityIfSet("memory", r.memory);
  if (!r.mig_profile.empty()) resources.Text("migProfile", r.mig_profile);
  if (r.nodes != 1) resources.Integer("nodes", r.nodes);
  if (r.topology != model::Topology::kAny) resources.Text("topology", model::TopologyName(r.topology));
}

void AppendData(const model::DataSpec& d, std::string* out) {
  Members data(out);
  if (!d.dataset.empty()) data.Text("dataset", d.dataset);
  if (d.pii) data.Bool("pii", true);
  if (!d.residency.empty()) data.Texts("residency", d.residency);
  data.Text("sensitivity", model::SensitivityName(d.sensitivity));
  data.QuantityIfSet("size", d.size);
}

void AppendRun(const model::RunSpec& r, std::string* out) {
  Members run(out);
  if (!r.args.empty()) run.Texts("args", r.args);
  if (!r.command.empty()) run.Texts("command", r.command);
  if (!r.env.empty()) run.TextMap("env", r.env);
  if (!r.image.empty()) run.Text("image", r.image);
  if (!r.working_dir.empty()) run.Text("workingDir", r.working_dir);
}

bool RunIsEmpty(const model::RunSpec& r) {
  return r.image.empty() && r.command.empty() && r.args.empty() && r.env.empty() && r.working_dir.empty();
}

void AppendSpec(const model::Workload& w, std::string* out) {
  Members spec(out);
  const model::CheckpointSpec& cp = w.checkpoint;
  if (cp.enabled || !cp.uri.empty() || cp.interval.millis() != 0) {
    Members checkpoint(spec.Key("checkpoint"));
    checkpoint.Bool("enabled", cp.enabled);
    if (cp.interval.millis() != 0) checkpoint.Text("interval", cp.interval.ToString());
    if (!cp.uri.empty()) checkpoint.Text("uri", cp.uri);
  }
  AppendData(w.data, spec.Key("data"));
  if (w.has_duration_hint) spec.Text("durationHint", w.duration_hint.ToString());
  if (w.max_cost) spec.Text("maxCost", w.max_cost->ToString());
  if (w.preemptible) spec.Bool("preemptible", true);
  if (!w.priority_class.empty()) {
    spec.Text("priority", w.priority_class);
  } else if (w.has_priority) {
    spec.Integer("priority", w.priority);
  }
  AppendResources(w.resources, spec.Key("resources"));
  if (!RunIsEmpty(w.run)) AppendRun(w.run, spec.Key("run"));
  if (w.spot) spec.Bool("spot", true);
  if (w.submitted_at.millis() != 0) spec.Text("submittedAt", w.submitted_at.ToString());
  spec.Text("tenant", w.tenant);
  spec.Text("type", model::WorkloadTypeName(w.type));
}

}  // namespace

void AppendWorkloadDocumentText(const model::Workload& workload, std::string* out) {
  Members document(out);
  document.Text("apiVersion", model::kApiVersion);
  document.Text("kind", "Workload");
  AppendMetadata(workload.metadata, document.Key("metadata"));
  AppendSpec(workload, document.Key("spec"));
}

std::string WorkloadDocumentText(const model::Workload& workload) {
  std::string out;
  out.reserve(512);
  AppendWorkloadDocumentText(workload, &out);
  return out;
}

}  // namespace gpufed::audit
