#include "tests/fake-kube/schema.h"

#include <cctype>
#include <map>
#include <set>

namespace gpufed::testing {
namespace {

using nlohmann::json;

// A member object by key or JSON pointer, or an empty object; by reference, so a
// range-for over its items() does not outlive a temporary.
template <typename Key>
const json& ObjectAt(const json& j, const Key& key) {
  static const json kEmpty = json::object();
  if (!j.is_object() || !j.contains(key)) return kEmpty;
  const json& v = j.at(key);
  return v.is_object() ? v : kEmpty;
}

// What a field holds. kObject/kArray with a type name are checked recursively; an
// empty type name means "opaque" (a type the connector never writes).
enum class Kind { kString, kInteger, kBoolean, kQuantity, kObject, kArray, kStringMap, kQuantityMap, kStringArray };

struct Field {
  Kind kind;
  std::string type;  // for kObject / kArray elements
};

using Schema = std::map<std::string, std::map<std::string, Field>>;

const Schema& Types() {
  static const Schema* schema = [] {
    const Field S{Kind::kString, ""}, I{Kind::kInteger, ""}, B{Kind::kBoolean, ""}, O{Kind::kObject, ""},
        A{Kind::kArray, ""}, SM{Kind::kStringMap, ""}, QM{Kind::kQuantityMap, ""}, SA{Kind::kStringArray, ""};
    auto obj = [](const char* t) { return Field{Kind::kObject, t}; };
    auto arr = [](const char* t) { return Field{Kind::kArray, t}; };
    auto* s = new Schema{
        {"Job", {{"apiVersion", S}, {"kind", S}, {"metadata", obj("ObjectMeta")}, {"spec", obj("JobSpec")}, {"status", O}}},
        {"JobSpec",
         {{"activeDeadlineSeconds", I}, {"backoffLimit", I}, {"backoffLimitPerIndex", I}, {"completionMode", S},
          {"completions", I}, {"managedBy", S}, {"manualSelector", B}, {"maxFailedIndexes", I}, {"parallelism", I},
          {"podFailurePolicy", O}, {"podReplacementPolicy", S}, {"selector", obj("LabelSelector")},
          {"successPolicy", O}, {"suspend", B}, {"template", obj("PodTemplateSpec")}, {"ttlSecondsAfterFinished", I}}},
        {"ObjectMeta",
         {{"annotations", SM}, {"creationTimestamp", S}, {"deletionGracePeriodSeconds", I}, {"deletionTimestamp", S},
          {"finalizers", SA}, {"generateName", S}, {"generation", I}, {"labels", SM}, {"managedFields", A},
          {"name", S}, {"namespace", S}, {"ownerReferences", A}, {"resourceVersion", S}, {"selfLink", S}, {"uid", S}}},
        {"PodTemplateSpec", {{"metadata", obj("ObjectMeta")}, {"spec", obj("PodSpec")}}},
        {"PodSpec",
         {{"activeDeadlineSeconds", I}, {"affinity", obj("Affinity")}, {"automountServiceAccountToken", B},
          {"containers", arr("Container")}, {"dnsConfig", O}, {"dnsPolicy", S}, {"enableServiceLinks", B},
          {"ephemeralContainers", A}, {"hostAliases", A}, {"hostIPC", B}, {"hostNetwork", B}, {"hostPID", B},
          {"hostUsers", B}, {"hostname", S}, {"imagePullSecrets", A}, {"initContainers", arr("Container")},
          {"nodeName", S}, {"nodeSelector", SM}, {"os", O}, {"overhead", QM}, {"preemptionPolicy", S},
          {"priority", I}, {"priorityClassName", S}, {"readinessGates", A}, {"resourceClaims", A},
          {"resources", obj("ResourceRequirements")}, {"restartPolicy", S}, {"runtimeClassName", S},
          {"schedulerName", S}, {"schedulingGates", A}, {"securityContext", O}, {"serviceAccount", S},
          {"serviceAccountName", S}, {"setHostnameAsFQDN", B}, {"shareProcessNamespace", B}, {"subdomain", S},
          {"terminationGracePeriodSeconds", I}, {"tolerations", arr("Toleration")},
          {"topologySpreadConstraints", A}, {"volumes", A}}},
        {"Container",
         {{"args", SA}, {"command", SA}, {"env", arr("EnvVar")}, {"envFrom", A}, {"image", S},
          {"imagePullPolicy", S}, {"lifecycle", O}, {"livenessProbe", O}, {"name", S}, {"ports", A},
          {"readinessProbe", O}, {"resizePolicy", A}, {"resources", obj("ResourceRequirements")},
          {"restartPolicy", S}, {"securityContext", O}, {"startupProbe", O}, {"stdin", B}, {"stdinOnce", B},
          {"terminationMessagePath", S}, {"terminationMessagePolicy", S}, {"tty", B}, {"volumeDevices", A},
          {"volumeMounts", A}, {"workingDir", S}}},
        {"EnvVar", {{"name", S}, {"value", S}, {"valueFrom", O}}},
        {"ResourceRequirements", {{"claims", A}, {"limits", QM}, {"requests", QM}}},
        {"Toleration", {{"effect", S}, {"key", S}, {"operator", S}, {"tolerationSeconds", I}, {"value", S}}},
        {"Affinity",
         {{"nodeAffinity", obj("NodeAffinity")}, {"podAffinity", obj("PodAffinity")},
          {"podAntiAffinity", obj("PodAffinity")}}},
        {"NodeAffinity",
         {{"preferredDuringSchedulingIgnoredDuringExecution", arr("PreferredSchedulingTerm")},
          {"requiredDuringSchedulingIgnoredDuringExecution", obj("NodeSelector")}}},
        {"NodeSelector", {{"nodeSelectorTerms", arr("NodeSelectorTerm")}}},
        {"NodeSelectorTerm",
         {{"matchExpressions", arr("NodeSelectorRequirement")}, {"matchFields", arr("NodeSelectorRequirement")}}},
        {"NodeSelectorRequirement", {{"key", S}, {"operator", S}, {"values", SA}}},
        {"PreferredSchedulingTerm", {{"preference", obj("NodeSelectorTerm")}, {"weight", I}}},
        // PodAffinity and PodAntiAffinity have the same two fields.
        {"PodAffinity",
         {{"preferredDuringSchedulingIgnoredDuringExecution", arr("WeightedPodAffinityTerm")},
          {"requiredDuringSchedulingIgnoredDuringExecution", arr("PodAffinityTerm")}}},
        {"PodAffinityTerm",
         {{"labelSelector", obj("LabelSelector")}, {"matchLabelKeys", SA}, {"mismatchLabelKeys", SA},
          {"namespaceSelector", obj("LabelSelector")}, {"namespaces", SA}, {"topologyKey", S}}},
        {"WeightedPodAffinityTerm", {{"podAffinityTerm", obj("PodAffinityTerm")}, {"weight", I}}},
        {"LabelSelector", {{"matchExpressions", arr("LabelSelectorRequirement")}, {"matchLabels", SM}}},
        {"LabelSelectorRequirement", {{"key", S}, {"operator", S}, {"values", SA}}},
        {"DeleteOptions",
         {{"apiVersion", S}, {"kind", S}, {"dryRun", SA}, {"gracePeriodSeconds", I},
          {"ignoreStoreReadErrorWithClusterBreakingPotential", B}, {"orphanDependents", B},
          {"preconditions", obj("Preconditions")}, {"propagationPolicy", S}}},
        {"Preconditions", {{"resourceVersion", S}, {"uid", S}}},
    };
    return s;
  }();
  return *schema;
}

const char* JsonTypeName(const json& v) {
  if (v.is_string()) return "string";
  if (v.is_number_integer()) return "number";
  if (v.is_number()) return "number";
  if (v.is_boolean()) return "bool";
  if (v.is_array()) return "array";
  if (v.is_object()) return "object";
  return "null";
}

void Check(const json& value, const std::string& type, const std::string& path, DecodeResult& out);

void CheckValue(const json& v, const Field& f, const std::string& path, const std::string& go_type, DecodeResult& out) {
  if (v.is_null()) return;  // null means "unset" to the decoder
  auto mismatch = [&](const char* want) {
    out.type_errors.push_back(std::string("json: cannot unmarshal ") + JsonTypeName(v) + " into Go struct field " +
                              go_type + "." + path + " of type " + want);
  };
  switch (f.kind) {
    case Kind::kString:
      if (!v.is_string()) mismatch("string");
      return;
    case Kind::kInteger:
      if (!v.is_number_integer()) mismatch("int64");
      return;
    case Kind::kBoolean:
      if (!v.is_boolean()) mismatch("bool");
      return;
    case Kind::kQuantity:
      if (!v.is_string() && !v.is_number()) mismatch("resource.Quantity");
      return;
    case Kind::kStringArray:
      if (!v.is_array()) return mismatch("[]string");
      for (const json& e : v) {
        if (!e.is_string()) return mismatch("string");
      }
      return;
    case Kind::kStringMap:
      if (!v.is_object()) return mismatch("map[string]string");
      for (const auto& [k, e] : v.items()) {
        if (!e.is_string()) return mismatch("string");
      }
      return;
    case Kind::kQuantityMap:
      if (!v.is_object()) return mismatch("v1.ResourceList");
      for (const auto& [k, e] : v.items()) {
        if (!e.is_string() && !e.is_number()) return mismatch("resource.Quantity");
      }
      return;
    case Kind::kObject:
      if (!v.is_object()) return mismatch(f.type.empty() ? "object" : f.type.c_str());
      if (!f.type.empty()) Check(v, f.type, path, out);
      return;
    case Kind::kArray:
      if (!v.is_array()) return mismatch("array");
      if (f.type.empty()) return;
      for (size_t i = 0; i < v.size(); ++i) {
        if (!v[i].is_object()) return mismatch(f.type.c_str());
        Check(v[i], f.type, path + "[" + std::to_string(i) + "]", out);
      }
      return;
  }
}

void Check(const json& value, const std::string& type, const std::string& path, DecodeResult& out) {
  const auto& fields = Types().at(type);
  for (const auto& [name, v] : value.items()) {
    std::string p = path.empty() ? name : path + "." + name;
    auto it = fields.find(name);
    if (it == fields.end()) {
      out.unknown_fields.push_back(p);
      continue;
    }
    CheckValue(v, it->second, p, type, out);
  }
}

bool IsAlnumLower(char c) { return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)); }

}  // namespace

DecodeResult Decode(const json& object, const std::string& type) {
  DecodeResult out;
  if (!object.is_object()) {
    out.type_errors.push_back("body is not a JSON object");
    return out;
  }
  Check(object, type, "", out);
  return out;
}

bool IsDns1123Label(const std::string& s) {
  if (s.empty() || s.size() > 63 || !IsAlnumLower(s.front()) || !IsAlnumLower(s.back())) return false;
  for (char c : s) {
    if (!IsAlnumLower(c) && c != '-') return false;
  }
  return true;
}

bool IsDns1123Subdomain(const std::string& s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    std::string part = s.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!IsDns1123Label(part)) return false;
    if (dot == std::string::npos) return true;
    start = dot + 1;
  }
}

bool IsLabelValue(const std::string& s) {
  if (s.empty()) return true;
  if (s.size() > 63 || !std::isalnum(static_cast<unsigned char>(s.front())) ||
      !std::isalnum(static_cast<unsigned char>(s.back()))) {
    return false;
  }
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

bool IsQualifiedName(const std::string& s) {
  size_t slash = s.find('/');
  std::string name = slash == std::string::npos ? s : s.substr(slash + 1);
  if (slash != std::string::npos && !IsDns1123Subdomain(s.substr(0, slash))) return false;
  return !name.empty() && IsLabelValue(name);
}

std::vector<FieldError> ValidateJob(const json& job) {
  std::vector<FieldError> errs;
  auto req = [&](const std::string& f) { errs.push_back({f, "FieldValueRequired", "Required value"}); };
  auto bad = [&](const std::string& f, const std::string& m) { errs.push_back({f, "FieldValueInvalid", m}); };
  auto unsupported = [&](const std::string& f, const std::string& v, const std::string& allowed) {
    errs.push_back({f, "FieldValueNotSupported", "Unsupported value: \"" + v + "\": supported values: " + allowed});
  };
  const json meta = job.value("metadata", json::object());
  std::string name = meta.value("name", "");
  if (name.empty()) {
    req("metadata.name");
  } else if (!IsDns1123Subdomain(name) || name.size() > 63) {
    // The Job controller puts the name into the job-name pod label (<= 63 chars).
    bad("metadata.name", "a lowercase RFC 1123 subdomain of at most 63 characters");
  }
  auto check_labels = [&](const json& m, const std::string& path) {
    for (const auto& [k, v] : ObjectAt(m, "labels").items()) {
      if (!IsQualifiedName(k)) bad(path + ".labels", "invalid label key \"" + k + "\"");
      if (!v.is_string() || !IsLabelValue(v.get<std::string>())) bad(path + ".labels", "invalid label value for " + k);
    }
    for (const auto& [k, v] : ObjectAt(m, "annotations").items()) {
      if (!IsQualifiedName(k)) bad(path + ".annotations", "invalid annotation key \"" + k + "\"");
    }
  };
  check_labels(meta, "metadata");
  const json spec = job.value("spec", json::object());
  if (!spec.contains("template")) req("spec.template");
  for (const char* f : {"backoffLimit", "completions", "parallelism", "ttlSecondsAfterFinished"}) {
    if (spec.contains(f) && spec[f].get<int64_t>() < 0) bad(std::string("spec.") + f, "must be greater than or equal to 0");
  }
  if (spec.contains("activeDeadlineSeconds") && spec["activeDeadlineSeconds"].get<int64_t>() <= 0) {
    bad("spec.activeDeadlineSeconds", "must be greater than 0");
  }
  if (spec.contains("completionMode")) {
    std::string mode = spec["completionMode"];
    if (mode != "NonIndexed" && mode != "Indexed") unsupported("spec.completionMode", mode, "\"Indexed\", \"NonIndexed\"");
    if (mode == "Indexed" && !spec.contains("completions")) req("spec.completions");
  }
  const json tmpl = spec.value("template", json::object());
  check_labels(tmpl.value("metadata", json::object()), "spec.template.metadata");
  const json pod = tmpl.value("spec", json::object());
  const std::string ps = "spec.template.spec";
  std::string restart = pod.value("restartPolicy", "");
  if (restart != "Never" && restart != "OnFailure") {
    unsupported(ps + ".restartPolicy", restart, "\"OnFailure\", \"Never\"");
  }
  const json containers = pod.value("containers", json::array());
  if (containers.empty()) req(ps + ".containers");
  std::set<std::string> names;
  for (size_t i = 0; i < containers.size(); ++i) {
    const json& c = containers[i];
    std::string p = ps + ".containers[" + std::to_string(i) + "]";
    std::string cname = c.value("name", "");
    if (cname.empty()) req(p + ".name");
    else if (!IsDns1123Label(cname)) bad(p + ".name", "a lowercase RFC 1123 label");
    else if (!names.insert(cname).second) errs.push_back({p + ".name", "FieldValueDuplicate", "Duplicate value"});
    if (c.value("image", "").empty()) req(p + ".image");
    for (size_t e = 0; e < c.value("env", json::array()).size(); ++e) {
      if (c["env"][e].value("name", "").empty()) req(p + ".env[" + std::to_string(e) + "].name");
    }
    const json res = c.value("resources", json::object());
    const json limits = res.value("limits", json::object());
    const json requests = res.value("requests", json::object());
    for (const auto& [r, v] : requests.items()) {
      bool extended = r.find('/') != std::string::npos && r.rfind("kubernetes.io/", 0) != 0;
      if (!extended) continue;
      // Extended resources cannot be overcommitted: a request needs an equal limit.
      if (!limits.contains(r) || limits[r] != v) {
        bad(p + ".resources.requests[" + r + "]", "must be equal to " + r + " limit");
      }
    }
    for (const auto& [r, v] : limits.items()) {
      if (r.find('/') != std::string::npos && !IsQualifiedName(r)) bad(p + ".resources.limits[" + r + "]", "invalid resource name");
      if (r.rfind("nvidia.com/", 0) == 0) {
        std::string text = v.is_string() ? v.get<std::string>() : v.dump();
        bool integer = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
        if (!integer) bad(p + ".resources.limits[" + r + "]", "must be an integer");
      }
    }
  }
  const json tolerations = pod.value("tolerations", json::array());
  for (size_t i = 0; i < tolerations.size(); ++i) {
    const json& t = tolerations[i];
    std::string p = ps + ".tolerations[" + std::to_string(i) + "]";
    std::string op = t.value("operator", "Equal");
    if (op != "Exists" && op != "Equal") unsupported(p + ".operator", op, "\"Equal\", \"Exists\"");
    if (op == "Exists" && !t.value("value", "").empty()) bad(p + ".operator", "value must be empty when `operator` is 'Exists'");
    std::string effect = t.value("effect", "");
    if (!effect.empty() && effect != "NoSchedule" && effect != "PreferNoSchedule" && effect != "NoExecute") {
      unsupported(p + ".effect", effect, "\"NoExecute\", \"NoSchedule\", \"PreferNoSchedule\"");
    }
  }
  for (const auto& [k, v] : ObjectAt(pod, "nodeSelector").items()) {
    if (!IsQualifiedName(k)) bad(ps + ".nodeSelector", "invalid label key \"" + k + "\"");
  }
  const json na = pod.value("/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution"_json_pointer,
                            json::object());
  if (na.is_object() && !na.empty()) {
    const json terms = na.value("nodeSelectorTerms", json::array());
    if (terms.empty()) req(ps + ".affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms");
    for (const json& term : terms) {
      for (const json& e : term.value("matchExpressions", json::array())) {
        std::string op = e.value("operator", "");
        static const std::set<std::string> ops = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
        if (!ops.count(op)) unsupported(ps + ".affinity.nodeAffinity...operator", op, "\"In\", \"NotIn\", ...");
        size_t n = e.value("values", json::array()).size();
        if ((op == "In" || op == "NotIn") && n == 0) req(ps + ".affinity.nodeAffinity...values");
      }
    }
  }
  for (const json& term : pod.value("/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution"_json_pointer,
                                    json::array())) {
    if (term.value("topologyKey", "").empty()) req(ps + ".affinity.podAntiAffinity...topologyKey");
  }
  return errs;
}

}  // namespace gpufed::testing
