#include "controller/audit/inputs.h"

#include <algorithm>
#include <charconv>
#include <filesystem>

#include "controller/audit/canonical_json.h"
#include "controller/audit/record.h"
#include "controller/audit/workload_text.h"
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
  return "sha256:" + Sha256Hex(WorkloadDocumentText(workload));
}

namespace {

// A request of the pod mix, in exact integers (quantities in milli-units).
nlohmann::json RequestJson(const model::ResourceRequest& r) {
  return {{"gpus", r.gpus},
          {"gpuMemoryMilli", r.gpu_memory.milli()},
          {"gpuShareMilli", r.gpu_share.milli()},
          {"migProfile", r.mig_profile},
          {"topology", static_cast<int>(r.topology)},
          {"nodes", r.nodes},
          {"gpusPerNode", r.gpus_per_node},
          {"cpuMilli", r.cpu.milli()},
          {"memoryMilli", r.memory.milli()},
          {"gpuModels", r.gpu_models}};
}

}  // namespace

nlohmann::json RunningEntryDocument(const placement::RunningWorkload& r, nlohmann::json workload) {
  return {{"workload", std::move(workload)},
          {"binding", placement::BindingToJson(r.binding)},
          {"startedMillis", r.started_at.millis()},
          {"lastCheckpointMillis", r.last_checkpoint.millis()},
          {"attempt", r.attempt}};
}

nlohmann::json ObservedClusterDocument(const placement::ObservedCluster& c) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const placement::ObservedNode& n : c.nodes) {
    nlohmann::json gpus = nlohmann::json::array();
    for (const placement::ObservedGpu& g : n.gpus) gpus.push_back({g.free_milli, g.free_memory, g.mig_slices_used});
    nodes.push_back({{"name", n.name},
                     {"pool", n.pool},
                     {"ready", n.ready},
                     {"freeCpuMilli", n.free_cpu_milli},
                     {"freeMemory", n.free_memory},
                     {"gpus", std::move(gpus)}});
  }
  nlohmann::json doc = {{"healthy", c.healthy}, {"nodes", std::move(nodes)}};
  if (!c.down_reason.empty()) doc["downReason"] = c.down_reason;  // absent when up: earlier snapshots read the same
  return doc;
}

std::string ObservedClusterText(const placement::ObservedCluster& c) {
  // Keys in canonical (sorted) order: downReason (when set), healthy, nodes;
  // freeCpuMilli, freeMemory, gpus, name, pool, ready.
  std::string out;
  out.reserve(64 + c.nodes.size() * 160);
  auto number = [&out](int64_t v) {
    char buf[24];
    out.append(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof buf, v).ptr - buf));
  };
  if (c.down_reason.empty()) {
    out += c.healthy ? "{\"healthy\":true,\"nodes\":[" : "{\"healthy\":false,\"nodes\":[";
  } else {
    out += "{\"downReason\":";
    AppendCanonicalString(c.down_reason, &out);
    out += c.healthy ? ",\"healthy\":true,\"nodes\":[" : ",\"healthy\":false,\"nodes\":[";
  }
  for (size_t i = 0; i < c.nodes.size(); ++i) {
    const placement::ObservedNode& n = c.nodes[i];
    out += i == 0 ? "{\"freeCpuMilli\":" : ",{\"freeCpuMilli\":";
    number(n.free_cpu_milli);
    out += ",\"freeMemory\":";
    number(n.free_memory);
    out += ",\"gpus\":[";
    for (size_t g = 0; g < n.gpus.size(); ++g) {
      out += g == 0 ? "[" : ",[";
      number(n.gpus[g].free_milli);
      out += ',';
      number(n.gpus[g].free_memory);
      out += ',';
      number(n.gpus[g].mig_slices_used);
      out += ']';
    }
    out += "],\"name\":";
    AppendCanonicalString(n.name, &out);
    out += ",\"pool\":";
    AppendCanonicalString(n.pool, &out);
    out += n.ready ? ",\"ready\":true}" : ",\"ready\":false}";
  }
  out += "]}";
  return out;
}

nlohmann::json SnapshotHeader(const placement::Snapshot& snapshot, const std::string& repo_root) {
  nlohmann::json usage = nlohmann::json::object();
  for (const auto& [tenant, u] : snapshot.usage) {
    usage[tenant] = {{"gpuMilliInUse", u.gpu_milli_in_use},
                     {"spent", u.spent.ToString()},
                     {"cloudSpent", u.cloud_spent.ToString()},
                     {"decayedGpuHours", u.decayed_gpu_hours}};
  }
  std::error_code ec;
  std::string repo =
      repo_root.empty() ? repo_root : std::filesystem::absolute(repo_root, ec).lexically_normal().string();
  if (ec) repo = repo_root;
  std::string revision = snapshot.config != nullptr ? snapshot.config->revision : "";
  nlohmann::json document = {{"format", kSnapshotFormat},
                             {"revision", {{"id", revision}, {"repo", repo}}},
                             {"nowMillis", snapshot.now.millis()},
                             {"onpremQueueDepth", snapshot.onprem_queue_depth},
                             {"fairShareHalfLifeMillis", snapshot.fair_share_half_life.millis()},
                             {"explainClusters", snapshot.explain_clusters},
                             {"usage", std::move(usage)},
                             {"pending", nlohmann::json::array()},
                             {"running", nlohmann::json::array()},
                             {"observed", nlohmann::json::object()}};
  if (!snapshot.pod_mix.empty()) {
    nlohmann::json mix = nlohmann::json::array();
    for (const auto& [request, count] : snapshot.pod_mix)
      mix.push_back({{"request", RequestJson(request)}, {"count", count}});
    document["podMix"] = std::move(mix);
  }
  return document;
}

nlohmann::json SnapshotDocument(const placement::Snapshot& snapshot, const std::string& repo_root) {
  nlohmann::json document = SnapshotHeader(snapshot, repo_root);
  for (const auto& [cluster, c] : snapshot.observed) document["observed"][cluster] = ObservedClusterDocument(c);
  for (const model::Workload* w : snapshot.pending) document["pending"].push_back(WorkloadDocument(*w));
  for (const placement::RunningWorkload& r : snapshot.running) {
    if (r.workload != nullptr) document["running"].push_back(RunningEntryDocument(r, WorkloadDocument(*r.workload)));
  }
  return document;
}

namespace {

// Typed reads that name the field that is wrong.
struct Fields {
  const nlohmann::json& j;
  std::string where;
  Status status;

  const nlohmann::json* Get(const char* key, nlohmann::json::value_t type, bool required) {
    auto it = j.find(key);
    if (it == j.end()) {
      if (required && status.ok()) status = InvalidArgument(where + "." + key + ": missing");
      return nullptr;
    }
    const bool number = type == nlohmann::json::value_t::number_integer;
    if (!(number                                          ? it->is_number_integer()
          : type == nlohmann::json::value_t::number_float ? it->is_number()
                                                          : it->type() == type)) {
      if (status.ok()) status = InvalidArgument(where + "." + key + ": wrong type");
      return nullptr;
    }
    return &*it;
  }
  int64_t Int(const char* key, int64_t fallback, bool required = false) {
    const nlohmann::json* v = Get(key, nlohmann::json::value_t::number_integer, required);
    return v ? v->get<int64_t>() : fallback;
  }
  double Real(const char* key) {
    const nlohmann::json* v = Get(key, nlohmann::json::value_t::number_float, false);
    return v ? v->get<double>() : 0;
  }
  std::string Text(const char* key, bool required = false) {
    const nlohmann::json* v = Get(key, nlohmann::json::value_t::string, required);
    return v ? v->get<std::string>() : std::string();
  }
  bool Bool(const char* key, bool fallback) {
    const nlohmann::json* v = Get(key, nlohmann::json::value_t::boolean, false);
    return v ? v->get<bool>() : fallback;
  }
  Money Amount(const char* key) {
    std::string text = Text(key);
    if (text.empty()) return Money();
    Result<Money> m = Money::Parse(text);
    if (!m.ok() && status.ok()) status = InvalidArgument(where + "." + key + ": " + m.status().message());
    return m.ok() ? *m : Money();
  }
};

}  // namespace

Result<SnapshotInputs> ParseSnapshotDocument(const nlohmann::json& doc) {
  if (!doc.is_object()) return InvalidArgument("snapshot: not an object");
  SnapshotInputs out;
  Fields top{doc, "snapshot"};
  out.format = static_cast<int>(top.Int("format", 0, true));
  if (top.status.ok() && (out.format < 1 || out.format > kSnapshotFormat)) {
    return InvalidArgument("snapshot: format " + std::to_string(out.format) + " is not known to this gpufed (1-" +
                           std::to_string(kSnapshotFormat) + ")");
  }
  if (const nlohmann::json* rev = top.Get("revision", nlohmann::json::value_t::object, true)) {
    Fields r{*rev, "snapshot.revision"};
    out.revision = r.Text("id", true);
    out.repo = r.Text("repo");
    if (!r.status.ok()) return r.status;
  }
  placement::Snapshot& s = out.snapshot;
  s.now = Duration::FromMillis(top.Int("nowMillis", 0, true));
  s.onprem_queue_depth = static_cast<int>(top.Int("onpremQueueDepth", 0));
  s.fair_share_half_life = Duration::FromMillis(top.Int("fairShareHalfLifeMillis", 0));
  s.explain_clusters = static_cast<size_t>(
      std::max<int64_t>(0, top.Int("explainClusters", static_cast<int64_t>(placement::Snapshot::kExplainAllClusters))));
  if (const nlohmann::json* usage = top.Get("usage", nlohmann::json::value_t::object, false)) {
    for (const auto& [tenant, u] : usage->items()) {
      if (!u.is_object()) return InvalidArgument("snapshot.usage." + tenant + ": not an object");
      Fields f{u, "snapshot.usage." + tenant};
      placement::TenantUsage& t = s.usage[tenant];
      t.gpu_milli_in_use = f.Int("gpuMilliInUse", 0);
      t.spent = f.Amount("spent");
      t.cloud_spent = f.Amount("cloudSpent");
      t.decayed_gpu_hours = f.Real("decayedGpuHours");
      if (!f.status.ok()) return f.status;
    }
  }
  if (const nlohmann::json* pending = top.Get("pending", nlohmann::json::value_t::array, true)) {
    for (size_t i = 0; i < pending->size(); ++i) {
      if (!(*pending)[i].is_object()) {
        return InvalidArgument(
            "snapshot.pending[" + std::to_string(i) + "]: not a workload document" +
            ((*pending)[i].is_string() ? " (a stored object's name: read the snapshot from its store)" : ""));
      }
    }
    out.pending_documents.assign(pending->begin(), pending->end());
  }
  if (const nlohmann::json* running = top.Get("running", nlohmann::json::value_t::array, false)) {
    for (size_t i = 0; i < running->size(); ++i) {
      const nlohmann::json& r = (*running)[i];
      if (!r.is_object()) return InvalidArgument("snapshot.running[" + std::to_string(i) + "]: not an object");
      Fields f{r, "snapshot.running[" + std::to_string(i) + "]"};
      const nlohmann::json* workload = f.Get("workload", nlohmann::json::value_t::object, true);
      const nlohmann::json* binding = f.Get("binding", nlohmann::json::value_t::object, true);
      placement::RunningWorkload rw;
      rw.started_at = Duration::FromMillis(f.Int("startedMillis", 0));
      rw.last_checkpoint = Duration::FromMillis(f.Int("lastCheckpointMillis", 0));
      rw.attempt = static_cast<int>(f.Int("attempt", 1));
      if (!f.status.ok()) return f.status;
      rw.binding = placement::BindingFromJson(*binding);
      s.running.push_back(std::move(rw));
      out.running_documents.push_back(*workload);
    }
  }
  if (const nlohmann::json* observed = top.Get("observed", nlohmann::json::value_t::object, false)) {
    for (const auto& [cluster, c] : observed->items()) {
      const std::string where = "snapshot.observed." + cluster;
      if (!c.is_object()) return InvalidArgument(where + ": not an object");
      Fields f{c, where};
      placement::ObservedCluster& oc = s.observed[cluster];
      oc.healthy = f.Bool("healthy", true);
      oc.down_reason = f.Text("downReason");
      const nlohmann::json* nodes = f.Get("nodes", nlohmann::json::value_t::array, false);
      if (!f.status.ok()) return f.status;
      if (nodes == nullptr) continue;
      for (size_t i = 0; i < nodes->size(); ++i) {
        const nlohmann::json& n = (*nodes)[i];
        const std::string at = where + ".nodes[" + std::to_string(i) + "]";
        if (!n.is_object()) return InvalidArgument(at + ": not an object");
        Fields nf{n, at};
        placement::ObservedNode node;
        node.name = nf.Text("name", true);
        node.pool = nf.Text("pool", true);
        node.ready = nf.Bool("ready", true);
        node.free_cpu_milli = nf.Int("freeCpuMilli", -1);
        node.free_memory = nf.Int("freeMemory", -1);
        const nlohmann::json* gpus = nf.Get("gpus", nlohmann::json::value_t::array, false);
        if (!nf.status.ok()) return nf.status;
        for (size_t g = 0; gpus != nullptr && g < gpus->size(); ++g) {
          const nlohmann::json& v = (*gpus)[g];
          if (!v.is_array() || v.size() != 3 || !v[0].is_number_integer() || !v[1].is_number_integer() ||
              !v[2].is_number_integer()) {
            return InvalidArgument(at + ".gpus[" + std::to_string(g) + "]: not [freeMilli, freeMemory, migSlicesUsed]");
          }
          node.gpus.push_back({v[0].get<int>(), v[1].get<int64_t>(), v[2].get<int>()});
        }
        oc.nodes.push_back(std::move(node));
      }
    }
  }
  if (const nlohmann::json* mix = top.Get("podMix", nlohmann::json::value_t::array, false)) {
    for (size_t i = 0; i < mix->size(); ++i) {
      const std::string where = "snapshot.podMix[" + std::to_string(i) + "]";
      if (!(*mix)[i].is_object()) return InvalidArgument(where + ": not an object");
      Fields f{(*mix)[i], where};
      const int64_t count = f.Int("count", 0, true);
      const nlohmann::json* request = f.Get("request", nlohmann::json::value_t::object, true);
      if (!f.status.ok()) return f.status;
      Fields q{*request, where + ".request"};
      model::ResourceRequest r;
      r.gpus = static_cast<int>(q.Int("gpus", 0));
      r.gpu_memory = Quantity::FromMilli(q.Int("gpuMemoryMilli", 0));
      r.gpu_share = Quantity::FromMilli(q.Int("gpuShareMilli", 0));
      r.mig_profile = q.Text("migProfile");
      const int64_t topology = q.Int("topology", 0);
      r.topology = static_cast<model::Topology>(std::clamp<int64_t>(topology, 0, 1));
      r.nodes = static_cast<int>(q.Int("nodes", 0));
      r.gpus_per_node = static_cast<int>(q.Int("gpusPerNode", 0));
      r.cpu = Quantity::FromMilli(q.Int("cpuMilli", 0));
      r.memory = Quantity::FromMilli(q.Int("memoryMilli", 0));
      if (const nlohmann::json* models = q.Get("gpuModels", nlohmann::json::value_t::array, false)) {
        for (const nlohmann::json& m : *models) {
          if (!m.is_string()) return InvalidArgument(where + ".request.gpuModels: not a list of names");
          r.gpu_models.push_back(m.get<std::string>());
        }
      }
      if (!q.status.ok()) return q.status;
      if (count < 0) return InvalidArgument(where + ".count: negative");
      s.pod_mix.emplace_back(std::move(r), count);
    }
  }
  if (!top.status.ok()) return top.status;
  return out;
}

namespace {

// Replaces the object name at `slot` by the object it names.
Status Resolve(SnapshotStore& store, nlohmann::json& slot, const std::string& where) {
  if (!slot.is_string()) return Status::Ok();  // inline (formats 1-3)
  Result<nlohmann::json> object = store.Get(slot.get<std::string>());
  if (!object.ok()) return Status(object.status().code(), where + ": " + object.status().message());
  if (!object->is_object())
    return Status(StatusCode::kDataLoss, where + ": " + slot.get<std::string>() + " is not an object");
  slot = std::move(*object);
  return Status::Ok();
}

}  // namespace

Result<SnapshotRevision> ReadSnapshotRevision(SnapshotStore& store, const std::string& digest) {
  Result<nlohmann::json> doc = store.Get(digest);
  if (!doc.ok()) return doc.status();
  auto revision = doc->is_object() ? doc->find("revision") : doc->end();
  if (!doc->is_object() || revision == doc->end() || !revision->is_object()) {
    return InvalidArgument("snapshot " + digest + ": no revision object");
  }
  Fields r{*revision, "snapshot.revision"};
  SnapshotRevision out{r.Text("id", true), r.Text("repo")};
  if (!r.status.ok()) return r.status;
  return out;
}

Result<SnapshotInputs> ReadSnapshot(SnapshotStore& store, const std::string& digest) {
  Result<nlohmann::json> doc = store.Get(digest);
  if (!doc.ok()) return doc.status();
  if (doc->is_object() && doc->contains("pending") && (*doc)["pending"].is_array()) {
    nlohmann::json& pending = (*doc)["pending"];
    for (size_t i = 0; i < pending.size(); ++i) {
      GPUFED_RETURN_IF_ERROR(Resolve(store, pending[i], "snapshot.pending[" + std::to_string(i) + "]"));
    }
  }
  if (doc->is_object() && doc->contains("observed") && (*doc)["observed"].is_object()) {
    for (auto& [cluster, c] : (*doc)["observed"].items()) {
      GPUFED_RETURN_IF_ERROR(Resolve(store, c, "snapshot.observed." + cluster));
    }
  }
  if (doc->is_object() && doc->contains("running") && (*doc)["running"].is_array()) {
    nlohmann::json& running = (*doc)["running"];
    for (size_t i = 0; i < running.size(); ++i) {
      const std::string where = "snapshot.running[" + std::to_string(i) + "]";
      GPUFED_RETURN_IF_ERROR(Resolve(store, running[i], where));
      if (running[i].contains("workload"))
        GPUFED_RETURN_IF_ERROR(Resolve(store, running[i]["workload"], where + ".workload"));
    }
  }
  return ParseSnapshotDocument(*doc);
}

}  // namespace gpufed::audit
