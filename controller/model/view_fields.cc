#include "controller/model/view_fields.h"

#include <set>
#include <vector>

#include "controller/common/text.h"

namespace gpufed::model {
namespace {

constexpr std::string_view kWorkloadTypes[] = {"training",  "fine-tuning", "inference",
                                               "rendering", "simulation",  "batch"};
constexpr std::string_view kSensitivities[] = {"public", "internal", "confidential", "restricted"};
constexpr std::string_view kTopologies[] = {"any", "same-node"};
constexpr std::string_view kSharings[] = {"none", "mig", "memory"};
constexpr std::string_view kIsolations[] = {"exclusive", "hard", "soft"};

using enum FieldType;
using enum FieldDomain;

const ViewField kWorkloadFields[] = {
    {"name", kString, "The workload's name (metadata.name).", "{in: [nightly-eval]}"},
    {"labels.*", kString, "A label of the workload (metadata.labels).", "nlp", kFree, {}, false, true, "team"},
    {"metadata.name", kString, "The workload's name.", "nightly-eval"},
    {"metadata.labels.*", kString, "A label of the workload.", "{exists: true}", kFree, {}, false, true, "team"},
    {"tenant", kString, "The tenant that submitted it.", "{in: [team-nlp, team-vision]}", kTenant},
    {"priority", kInteger, "Its priority as an integer (a class name resolved).", "{gte: 1000}"},
    {"priorityClass", kString, "The priority class name it was written with (\"\" for an integer).", "high",
     kPriorityClass},
    {"type", kString, "What kind of work it is.", "training", kEnum, kWorkloadTypes},
    {"resources.gpus", kInteger,
     "GPUs it asks for in all: a multi-node gang counts nodes x gpusPerNode; 1 for a fraction of a GPU.", "{gte: 16}"},
    {"resources.totalGpus", kInteger, "The same as resources.gpus (the older name).", "{gte: 16}"},
    {"resources.gpuMemory", kBytes, "GPU memory per GPU it needs (0: any).", "{gte: 40Gi}"},
    {"resources.gpuShare", kNumber, "The fraction of one GPU it asks for (0: whole GPUs).", "{lt: 0.5}"},
    {"resources.gpuModels", kStringList, "GPU models it accepts (empty: any).", "{contains: H100-80GB}", kGpuModel},
    {"resources.migProfile", kString, "The MIG profile it asks for (\"\": none).", "1g.10gb", kMigProfile},
    {"resources.fractional", kBoolean, "Asks for part of one GPU (a share, or a MIG profile).", "true"},
    {"resources.topology", kString, "any: GPUs may be spread over nodes; same-node: all on one node (NVLink).",
     "same-node", kEnum, kTopologies},
    {"resources.nodes", kInteger, "Nodes of a multi-node gang (1 otherwise).", "{gt: 1}"},
    {"resources.gpusPerNode", kInteger, "GPUs on each node of a gang; for single-node work, resources.gpus.",
     "{gte: 8}"},
    {"resources.cpu", kCores, "CPU cores it needs (per node).", "{gte: 32}"},
    {"resources.memory", kBytes, "Memory it needs (per node).", "{gte: 256Gi}"},
    {"durationHint", kSeconds, "How long it expects to run.", "{gt: 8h}"},
    {"data.dataset", kString, "The dataset it reads (\"\": none).", "fraud-2026", kDataset},
    {"data.size", kBytes, "Size of that dataset.", "{gte: 1Ti}"},
    {"data.sensitivity", kString, "How sensitive its data is.", "{in: [confidential, restricted]}", kEnum,
     kSensitivities},
    {"data.pii", kBoolean, "The data holds personal information.", "true"},
    {"data.residency", kStringList, "Compliance zones its data must stay in (empty: anywhere).", "{in: [eu]}"},
    {"checkpoint.enabled", kBoolean, "It writes checkpoints and can resume from them.", "false"},
    {"checkpoint.interval", kSeconds, "Time between its checkpoints.", "{lte: 30m}"},
    {"preemptible", kBoolean, "Higher-priority work may stop it.", "true"},
    {"spot", kBoolean, "It may run on spot capacity.", "true"},
    {"submittedAt", kSeconds, "When it was submitted, as an offset from the plan's start.", "{gte: 0}"},
    {"maxCost",
     kDecimal,
     "Its cost cap as a number, in the cap's currency (absent when it has none).",
     "{exists: true}",
     kFree,
     {},
     /*optional=*/true},
};

const ViewField kClusterFields[] = {
    {"name", kString, "The cluster's name.", "munich-dgx", kCluster},
    {"labels.*", kString, "A label of the cluster (metadata.labels).", "munich", kFree, {}, false, true, "site"},
    {"provider", kString, "onprem, or the cloud's name.", "onprem"},
    {"onprem", kBoolean, "provider is onprem.", "true"},
    {"region", kString, "The cluster's region.", "eu-central"},
    {"zone", kString, "Its compliance zone.", "{in: [eu]}"},
    {"connector.type", kString, "How gpufed reaches it.", "slurm", kConnectorType},
    {"attributes.encryptionAtRest", kBoolean, "Data at rest is encrypted.", "true"},
    {"attributes.certifications", kStringList, "Certifications it holds.", "{contains: iso27001}"},
    {"attributes.labels.*", kString, "A free-form attribute.", "{in: [\"1\", \"2\"]}", kFree, {}, false, true, "tier"},
    {"nodePools",
     kPoolList,
     "Its node pools, each with the fields of a node pool (node.* in rules).",
     "",
     kFree,
     {},
     false,
     /*in_rules=*/false},
    {"gpuModels", kStringList, "GPU models of its node pools.", "{contains: H100-80GB}", kGpuModel},
    {"totalGpus", kInteger, "GPUs of the nodes present now.", "{gte: 64}"},
    {"elastic", kBoolean, "It can add nodes on demand now.", "true"},
    {"pricing.currency", kString, "Currency of its prices.", "EUR"},
    {"pricing.gpuHour.*",
     kDecimal,
     "Price of one GPU-hour of a model (the key), in pricing.currency.",
     "{lte: 3}",
     kFree,
     {},
     false,
     true,
     "H100-80GB"},
    {"pricing.spotGpuHour.*",
     kDecimal,
     "Spot price of one GPU-hour of a model (the key), paid on the cluster's spot pools.",
     "{lte: 2}",
     kFree,
     {},
     false,
     true,
     "H100-80GB"},
    {"pricing.egressPerGiB", kDecimal, "Price of moving one GiB out.", "{lte: 0.05}"},
    {"pricing.rates.*",
     kDecimal,
     "Units of a currency (the key) per unit of pricing.currency, from the repository's ExchangeRates (its own: 1).",
     "{gte: 0.9}",
     kFree,
     {},
     false,
     true,
     "EUR"},
    {"network.bandwidthGbps", kNumber, "Bandwidth used to estimate data transfers.", "{gte: 10}"},
    {"datasets", kStringList, "Datasets it holds.", "{contains: imagenet-1k}", kDataset},
};

const ViewField kNodePoolFields[] = {
    {"name", kString, "The node pool's name.", "{notIn: [dgx-spare]}", kPool},
    {"count", kInteger, "Nodes of the pool present now.", "{gte: 2}"},
    {"cpu", kCores, "CPU cores per node.", "{gte: 64}"},
    {"memory", kBytes, "Memory per node.", "{gte: 512Gi}"},
    {"spot", kBoolean, "Its nodes are spot capacity.", "false"},
    {"isolation", kString, "How work sharing a GPU is isolated: exclusive (no sharing), hard (MIG), soft (memory).",
     "{notIn: [soft]}", kEnum, kIsolations},
    {"gpu.model", kString, "GPU model.", "{in: [A100-80GB, H100-80GB]}", kGpuModel},
    {"gpu.count", kInteger, "GPUs per node.", "{gte: 8}"},
    {"gpu.memory", kBytes, "Memory per GPU.", "{gte: 80Gi}"},
    {"gpu.nvlink", kBoolean, "The GPUs of a node share one NVLink domain.", "true"},
    {"gpu.sharing", kString, "How GPUs are shared.", "mig", kEnum, kSharings},
    {"gpu.migProfiles", kStringList, "MIG profiles offered (sharing: mig).", "{contains: 1g.10gb}", kMigProfile},
};

const RuleOperator kOperators[] = {
    {"=", MatchOp::kEquals, "a value", "equals it (a list field: contains it)"},
    {"in", MatchOp::kIn, "a list of values", "equals one of them (a list field: every member is one of them)"},
    {"notIn", MatchOp::kNotIn, "a list of values", "equals none of them, or is absent"},
    {"exists", MatchOp::kExists, "true or false", "is set (non-empty) / is not"},
    {"gte", MatchOp::kGte, "a number or a quantity (80Gi, 8h)", ">=", /*numeric=*/true},
    {"gt", MatchOp::kGt, "a number or a quantity", ">", true},
    {"lte", MatchOp::kLte, "a number or a quantity", "<=", true},
    {"lt", MatchOp::kLt, "a number or a quantity", "<", true},
    {"contains", MatchOp::kContains, "a value", "the list contains it", false, /*on_lists=*/true},
    {"containsAll", MatchOp::kContainsAll, "a list of values", "the list contains all of them", false, true},
};

bool IsMapPattern(std::string_view pattern) { return pattern.size() > 2 && pattern.ends_with(".*"); }

// `path` lies under map pattern "x.y.*": it is "x.y.KEY" with one more segment.
bool MatchesPattern(std::string_view pattern, std::string_view path) {
  if (!IsMapPattern(pattern)) return pattern == path;
  std::string_view stem = pattern.substr(0, pattern.size() - 1);  // "x.y."
  return path.size() > stem.size() && path.starts_with(stem) &&
         path.substr(stem.size()).find('.') == std::string_view::npos;
}

}  // namespace

const char* FieldTypeName(FieldType type) {
  switch (type) {
    case kString: return "string";
    case kInteger: return "integer";
    case kNumber: return "number";
    case kBoolean: return "boolean";
    case kBytes: return "bytes";
    case kCores: return "cores";
    case kSeconds: return "seconds";
    case kDecimal: return "decimal";
    case kStringList: return "list of strings";
    case kPoolList: return "list of node pools";
  }
  return "value";
}

std::string FieldTypeWithArticle(FieldType type) {
  const std::string name = FieldTypeName(type);
  return (name.front() == 'i' ? "an " : "a ") + name;
}

bool IsNumeric(FieldType type) {
  return type == kInteger || type == kNumber || type == kBytes || type == kCores || type == kSeconds ||
         type == kDecimal;
}

const char* FieldDomainName(FieldDomain domain) {
  switch (domain) {
    case kFree:
    case kEnum: return "value";
    case kTenant: return "tenant";
    case kCluster: return "cluster";
    case kPool: return "node pool";
    case kGpuModel: return "GPU model";
    case kMigProfile: return "MIG profile";
    case kDataset: return "dataset";
    case kPriorityClass: return "priority class";
    case kConnectorType: return "connector type";
  }
  return "value";
}

std::span<const ViewField> WorkloadViewFields() { return kWorkloadFields; }
std::span<const ViewField> ClusterViewFields() { return kClusterFields; }
std::span<const ViewField> NodePoolViewFields() { return kNodePoolFields; }

const ViewField* FindViewField(std::span<const ViewField> fields, std::string_view path) {
  for (const ViewField& f : fields) {
    if (MatchesPattern(f.path, path)) return &f;
  }
  return nullptr;
}

std::string DescribeUnknownPath(std::span<const ViewField> fields, std::string_view path, std::string_view prefix) {
  if (const ViewField* f = FindViewField(fields, path)) {
    if (f->in_rules) return "";
    return std::string(prefix) + std::string(path) + " is " + FieldTypeWithArticle(f->type) +
           "; rules test node pools with node.* paths";
  }
  // Walk the segments while some field starts with them, as a reader of the table would.
  std::string known;  // the segments matched so far, with a trailing '.'
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    std::string segment(path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    std::set<std::string> next;  // the segments that may follow `known`
    bool leaf_here = false;
    for (const ViewField& f : fields) {
      if (!f.path.starts_with(known)) continue;
      std::string_view rest = f.path.substr(known.size());
      std::string_view head = rest.substr(0, rest.find('.'));
      if (head == "*") continue;
      next.emplace(head);
      leaf_here = leaf_here || (head == segment && rest.size() == head.size());
    }
    if (leaf_here) {
      std::string why = "'";
      why += path.substr(dot + 1);
      why += "' is below ";
      why += prefix;
      why += known;
      why += segment;
      why += ", which has no sub-fields";
      return why;
    }
    if (!next.count(segment)) {
      std::vector<std::string_view> names(next.begin(), next.end());
      std::string best = ClosestMatch(segment, names);
      for (std::string_view name : names) {  // "gpu" means "gpus" more likely than "cpu"
        if (name.starts_with(segment) && name.size() == segment.size() + 1) best = name;
      }
      return "unknown field '" + segment + "'" + (best.empty() ? "" : " (did you mean '" + best + "'?)");
    }
    known += segment + ".";
    if (dot == std::string_view::npos) {
      std::vector<std::string> members;
      for (const ViewField& f : fields) {
        if (!f.path.starts_with(known) || !f.in_rules) continue;
        std::string member = std::string(prefix) + std::string(f.path);
        if (IsMapPattern(f.path)) member.replace(member.size() - 1, 1, "<key>");
        members.push_back(std::move(member));
      }
      return "'" + std::string(prefix) + std::string(path) +
             "' is a group of fields; name one of them: " + Join(members, ", ");
    }
    start = dot + 1;
  }
}

std::span<const RuleOperator> RuleOperators() { return kOperators; }

const RuleOperator* FindRuleOperator(std::string_view name) {
  for (const RuleOperator& op : kOperators) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

bool OperatorApplies(const RuleOperator& op, FieldType type) {
  if (op.numeric) return IsNumeric(type);
  if (op.on_lists) return type == kStringList;
  return type != kPoolList;
}

std::span<const std::string_view> WorkloadTypeNames() { return kWorkloadTypes; }
std::span<const std::string_view> SensitivityNames() { return kSensitivities; }
std::span<const std::string_view> TopologyNames() { return kTopologies; }
std::span<const std::string_view> GpuSharingNames() { return kSharings; }
std::span<const std::string_view> IsolationNames() { return kIsolations; }

}  // namespace gpufed::model
