#include "tests/fake-kube/state.h"

#include <algorithm>
#include <cstring>
#include <ctime>

#include "controller/common/base64.h"
#include "controller/common/quantity.h"
#include "tests/fake-kube/schema.h"
#include "tests/fake-kube/selectors.h"

namespace gpufed::testing {
namespace {

using nlohmann::json;

std::vector<std::string> Split(const std::string& path) {
  std::vector<std::string> out;
  size_t start = 1;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    if (slash > start) out.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return out;
}


std::string Unbase64(const std::string& in) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  int val = 0, bits = -8;
  for (char c : in) {
    const char* p = c == '\0' ? nullptr : std::strchr(k, c);
    if (p == nullptr) break;
    val = (val << 6) + static_cast<int>(p - k);
    bits += 6;
    if (bits >= 0) {
      out.push_back(static_cast<char>((val >> bits) & 0xFF));
      bits -= 8;
    }
  }
  return out;
}

std::map<std::string, std::string> FieldsOf(const json& obj) {
  return {{"metadata.name", obj.value("/metadata/name"_json_pointer, "")},
          {"metadata.namespace", obj.value("/metadata/namespace"_json_pointer, "")},
          {"spec.nodeName", obj.value("/spec/nodeName"_json_pointer, "")},
          {"status.phase", obj.value("/status/phase"_json_pointer, "")}};
}

}  // namespace

std::map<std::string, std::string> LabelsOf(const json& obj) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : ObjectAt(obj, "/metadata/labels"_json_pointer).items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
  return out;
}

int64_t Milli(const json& v) {
  std::string text = v.is_string() ? v.get<std::string>() : v.dump();
  Result<Quantity> q = Quantity::Parse(text);
  return q.ok() ? q->milli() : 0;
}

bool Terminal(const json& pod) {
  std::string phase = pod.value("/status/phase"_json_pointer, "");
  return phase == "Succeeded" || phase == "Failed";
}

// What a pod takes from its node: extended resources by limit, cpu/memory by request.
std::map<std::string, int64_t> Demand(const json& pod) {
  std::map<std::string, int64_t> d;
  for (const json& c : pod.value("/spec/containers"_json_pointer, json::array())) {
    for (const auto& [r, v] : ObjectAt(c, "/resources/limits"_json_pointer).items()) {
      if (r.find('/') != std::string::npos) d[r] += Milli(v);
    }
    for (const auto& [r, v] : ObjectAt(c, "/resources/requests"_json_pointer).items()) {
      if (r.find('/') == std::string::npos) d[r] += Milli(v);
    }
  }
  return d;
}

bool MatchExpression(const json& e, const std::map<std::string, std::string>& labels) {
  std::string key = e.value("key", ""), op = e.value("operator", "");
  std::vector<std::string> values = e.value("values", std::vector<std::string>{});
  auto it = labels.find(key);
  bool in = it != labels.end() && std::find(values.begin(), values.end(), it->second) != values.end();
  if (op == "In") return in;
  if (op == "NotIn") return !in;
  if (op == "Exists") return it != labels.end();
  if (op == "DoesNotExist") return it == labels.end();
  return false;
}

void SetCondition(json& obj, const std::string& type, const std::string& status, const std::string& reason,
                  const std::string& message, const std::string& at) {
  json& conds = obj["status"]["conditions"];
  if (!conds.is_array()) conds = json::array();
  for (json& c : conds) {
    if (c["type"] == type) {
      if (c["status"] != status) c["lastTransitionTime"] = at;
      c["status"] = status;
      c["reason"] = reason;
      c["message"] = message;
      return;
    }
  }
  conds.push_back({{"type", type}, {"status", status}, {"reason", reason}, {"message", message},
                   {"lastProbeTime", at}, {"lastTransitionTime", at}});
}

Route ParseRoute(const std::string& method, const std::string& path) {
  std::vector<std::string> p = Split(path);
  Route r;
  auto verb = [&](bool item) {
    if (method == "GET") return std::string(item ? "get" : "list");
    if (method == "POST" && !item) return std::string("create");
    if (method == "DELETE" && item) return std::string("delete");
    return std::string();
  };
  if (p.size() == 3 && p[0] == "api" && p[1] == "v1" && (p[2] == "nodes" || p[2] == "pods")) {
    r = {verb(false), p[2], "", ""};
  } else if (p.size() == 5 && p[0] == "api" && p[1] == "v1" && p[2] == "namespaces" && p[4] == "pods") {
    r = {verb(false), "pods", p[3], ""};
  } else if (p.size() >= 6 && p.size() <= 7 && p[0] == "apis" && p[1] == "batch" && p[2] == "v1" &&
             p[3] == "namespaces" && p[5] == "jobs") {
    r = {verb(p.size() == 7), "jobs", p[4], p.size() == 7 ? p[6] : ""};
  }
  if (r.verb.empty() || (r.verb != "list" && r.resource != "jobs")) r.resource.clear();
  return r;
}

json StatusBody(int code, const std::string& reason, const std::string& message, json details) {
  json s = {{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", json::object()}, {"status", "Failure"},
            {"message", message}, {"reason", reason}, {"code", code}};
  if (!details.is_null()) s["details"] = details;
  return s;
}

std::string ReasonFor(int code) {
  switch (code) {
    case 400: return "BadRequest";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "NotFound";
    case 409: return "AlreadyExists";
    case 410: return "Expired";
    case 422: return "Invalid";
    case 429: return "TooManyRequests";
    case 500: return "InternalError";
    case 503: return "ServiceUnavailable";
    case 504: return "Timeout";
    default: return "Unknown";
  }
}

std::string HttpDate(int64_t t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return buf;
}

std::string Rfc3339(int64_t t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void FakeKube::State::Touch(json& obj) { obj["metadata"]["resourceVersion"] = std::to_string(++rv); }

void FakeKube::State::AddNode(const FakeNode& n, Duration now) {
  json node = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata", {{"name", n.name}, {"labels", n.labels}, {"uid", "node-" + std::to_string(++serial)},
                             {"creationTimestamp", Rfc3339(Wall(now))}}},
               {"spec", {{"taints", n.taints}}},
               {"status", {{"capacity", n.allocatable}, {"allocatable", n.allocatable}}}};
  node["metadata"]["labels"]["kubernetes.io/hostname"] = n.name;
  SetCondition(node, "Ready", n.ready ? "True" : "False", n.ready ? "KubeletReady" : "NodeStatusUnknown", "",
               Rfc3339(Wall(now)));
  Touch(node);
  nodes[n.name] = node;
}

void FakeKube::State::SetNodeReady(const std::string& name, bool ready, Duration now) {
  auto it = nodes.find(name);
  if (it == nodes.end()) return;
  SetCondition(it->second, "Ready", ready ? "True" : "False", ready ? "KubeletReady" : "NodeStatusUnknown", "",
               Rfc3339(Wall(now)));
  Touch(it->second);
}

void FakeKube::State::AddForeignPod(const std::string& ns, const std::string& name, const std::string& node,
                                    const std::map<std::string, std::string>& limits, Duration now) {
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", ns}, {"uid", "pod-" + std::to_string(++serial)}}},
              {"spec", {{"nodeName", node},
                        {"containers", json::array({{{"name", "main"}, {"image", "other"},
                                                     {"resources", {{"limits", limits}, {"requests", limits}}}}})}}},
              {"status", {{"phase", "Running"}, {"startTime", Rfc3339(Wall(now))}}}};
  Touch(pod);
  pods[ns + "/" + name] = pod;
}

void FakeKube::State::FailPodOf(const std::string& job, const std::string& reason, Duration now) {
  for (auto& [k, pod] : pods) {
    if (pod.value("/metadata/labels/job-name"_json_pointer, "") != job || Terminal(pod)) continue;
    pod["status"]["phase"] = "Failed";
    SetCondition(pod, "DisruptionTarget", "True", reason, "injected by the test", Rfc3339(Wall(now)));
    Touch(pod);
  }
  Reconcile(now);
}

void FakeKube::State::List(const Route& r, const std::map<std::string, std::string>& query, int& status,
                           std::string& out) {
  auto q = [&](const char* k) {
    auto it = query.find(k);
    return it == query.end() ? std::string() : it->second;
  };
  auto fail = [&](int code, const std::string& msg) {
    status = code;
    out = StatusBody(code, ReasonFor(code), msg).dump();
  };
  std::optional<Selector> labels = Selector::ParseLabels(q("labelSelector"));
  if (!labels) return fail(400, "unable to parse requirement: invalid label selector \"" + q("labelSelector") + "\"");
  std::optional<Selector> fields = Selector::ParseFields(q("fieldSelector"));
  if (!fields) return fail(400, "invalid field selector \"" + q("fieldSelector") + "\"");
  for (const Requirement& req : fields->requirements()) {
    if (!FieldsOf(json::object()).count(req.key)) return fail(400, "field label not supported: " + req.key);
  }
  int64_t list_rv = rv;
  std::string start_after;
  if (!q("continue").empty()) {
    json token;
    try {
      token = json::parse(Unbase64(q("continue")));
    } catch (const json::exception&) {
      return fail(400, "continue key is not valid: incorrect encoded start resourceVersion");
    }
    list_rv = token.value("rv", int64_t{0});
    start_after = token.value("start", "");
    if (list_rv < compacted) {
      return fail(410,
                  "The provided continue parameter is too old to display a consistent list result. You can start a new "
                  "list without the continue parameter.");
    }
  } else if (!q("resourceVersion").empty() && q("resourceVersion") != "0") {
    int64_t want = std::atoll(q("resourceVersion").c_str());
    std::string match = q("resourceVersionMatch");
    if (match == "Exact" && want < compacted) return fail(410, "too old resource version: " + q("resourceVersion"));
    if (want > rv) return fail(504, "Too large resource version: " + q("resourceVersion") + ", current: " + std::to_string(rv));
  }
  const std::map<std::string, json>& objects = r.resource == "nodes" ? nodes : r.resource == "jobs" ? jobs : pods;
  int limit = q("limit").empty() ? 0 : std::atoi(q("limit").c_str());
  json items = json::array();
  std::string last;
  bool more = false;
  for (auto it = objects.upper_bound(start_after); it != objects.end(); ++it) {
    const json& obj = it->second;
    if (!r.ns.empty() && obj.value("/metadata/namespace"_json_pointer, "") != r.ns) continue;
    if (!labels->Matches(LabelsOf(obj)) || !fields->Matches(FieldsOf(obj))) continue;
    if (limit > 0 && static_cast<int>(items.size()) == limit) {
      more = true;
      break;
    }
    items.push_back(obj);
    last = it->first;
  }
  std::string kind = r.resource == "nodes" ? "NodeList" : r.resource == "jobs" ? "JobList" : "PodList";
  json meta = {{"resourceVersion", std::to_string(list_rv)}};
  if (more) meta["continue"] = Base64Encode(json{{"rv", list_rv}, {"start", last}}.dump());
  out = json{{"kind", kind}, {"apiVersion", r.resource == "jobs" ? "batch/v1" : "v1"}, {"metadata", meta},
             {"items", items}}
            .dump();
  if (compact_after_pages > 0 && --compact_after_pages == 0) {
    compacted = ++rv;
    compact_after_pages = -1;
  }
}

void FakeKube::State::CreateJob(const Route& r, const std::map<std::string, std::string>& query,
                                const std::string& body, Duration now, int& status, std::string& out,
                                std::map<std::string, std::string>& headers) {
  auto fail = [&](int code, const std::string& msg, json details = nullptr) {
    status = code;
    out = StatusBody(code, ReasonFor(code), msg, details).dump();
  };
  json job;
  try {
    job = json::parse(body);
  } catch (const json::exception& e) {
    return fail(400, std::string("the object provided is unrecognized: ") + e.what());
  }
  DecodeResult decoded = Decode(job, "Job");
  for (const std::string& f : decoded.unknown_fields) violations.push_back("unknown field \"" + f + "\"");
  for (const std::string& e : decoded.type_errors) violations.push_back(e);
  if (!decoded.type_errors.empty()) {
    return fail(400, "Job in version \"v1\" cannot be handled as a Job: " + decoded.type_errors.front());
  }
  auto strict = query.find("fieldValidation");
  if (!decoded.unknown_fields.empty()) {
    if (strict != query.end() && strict->second == "Strict") {
      return fail(400, "Job in version \"v1\" cannot be handled as a Job: strict decoding error: unknown field \"" +
                           decoded.unknown_fields.front() + "\"");
    }
    headers["Warning"] = "299 - \"unknown field \\\"" + decoded.unknown_fields.front() + "\\\"\"";
  }
  if (job.value("apiVersion", "") != "batch/v1" || job.value("kind", "") != "Job") {
    return fail(400, "Job in version \"v1\" cannot be handled as a Job: wrong apiVersion/kind");
  }
  std::string ns = job.value("/metadata/namespace"_json_pointer, "");
  if (!ns.empty() && ns != r.ns) {
    return fail(400, "the namespace of the provided object does not match the namespace sent on the request");
  }
  std::string name = job.value("/metadata/name"_json_pointer, "");
  std::vector<FieldError> errors = ValidateJob(job);
  if (!errors.empty()) {
    json causes = json::array();
    std::string msg = "Job.batch \"" + name + "\" is invalid: ";
    for (size_t i = 0; i < errors.size(); ++i) {
      causes.push_back({{"reason", errors[i].reason}, {"message", errors[i].message}, {"field", errors[i].field}});
      msg += (i ? ", " : "") + errors[i].field + ": " + errors[i].message;
    }
    return fail(422, msg, {{"name", name}, {"group", "batch"}, {"kind", "Job"}, {"causes", causes}});
  }
  std::string key = r.ns + "/" + name;
  if (jobs.count(key)) {
    return fail(409, "jobs.batch \"" + name + "\" already exists", {{"name", name}, {"group", "batch"}, {"kind", "jobs"}});
  }
  std::string uid = "job-uid-" + std::to_string(++serial);
  json& meta = job["metadata"];
  meta["namespace"] = r.ns;
  meta["uid"] = uid;
  meta["generation"] = 1;
  meta["creationTimestamp"] = Rfc3339(Wall(now));
  json& spec = job["spec"];
  if (!spec.contains("parallelism")) spec["parallelism"] = 1;
  if (!spec.contains("completions")) spec["completions"] = 1;
  if (!spec.contains("backoffLimit")) spec["backoffLimit"] = 6;
  if (!spec.contains("completionMode")) spec["completionMode"] = "NonIndexed";
  if (!spec.contains("suspend")) spec["suspend"] = false;
  spec["selector"] = {{"matchLabels", {{"batch.kubernetes.io/controller-uid", uid}}}};
  json& tl = spec["template"]["metadata"]["labels"];
  tl["batch.kubernetes.io/controller-uid"] = uid;
  tl["batch.kubernetes.io/job-name"] = name;
  tl["controller-uid"] = uid;
  tl["job-name"] = name;
  job["status"] = {{"startTime", Rfc3339(Wall(now))}, {"active", 0}};
  Touch(job);
  jobs[key] = job;
  status = 201;
  out = job.dump();
  Reconcile(now);
}

void FakeKube::State::DeleteJob(const Route& r, const std::map<std::string, std::string>& query,
                                const std::string& body, Duration now, int& status, std::string& out) {
  auto fail = [&](int code, const std::string& msg) {
    status = code;
    out = StatusBody(code, ReasonFor(code), msg, {{"name", r.name}, {"group", "batch"}, {"kind", "jobs"}}).dump();
  };
  std::string policy;
  if (!body.empty()) {
    json options;
    try {
      options = json::parse(body);
    } catch (const json::exception&) {
      return fail(400, "DeleteOptions is not valid JSON");
    }
    DecodeResult decoded = Decode(options, "DeleteOptions");
    for (const std::string& f : decoded.unknown_fields) violations.push_back("unknown field \"" + f + "\"");
    for (const std::string& e : decoded.type_errors) violations.push_back(e);
    if (!decoded.unknown_fields.empty() || !decoded.type_errors.empty()) {
      return fail(400, "DeleteOptions cannot be decoded: strict decoding error");
    }
    policy = options.value("propagationPolicy", "");
  }
  if (auto it = query.find("propagationPolicy"); it != query.end()) policy = it->second;
  if (!policy.empty() && policy != "Orphan" && policy != "Background" && policy != "Foreground") {
    return fail(422, "propagationPolicy: Unsupported value: \"" + policy + "\"");
  }
  // For Jobs the default is Orphan (kept for backwards compatibility), which would leave
  // the pods running: gpufed must say Background explicitly.
  if (policy.empty()) policy = "Orphan";
  auto it = jobs.find(r.ns + "/" + r.name);
  if (it == jobs.end()) return fail(404, "jobs.batch \"" + r.name + "\" not found");
  std::string uid = it->second["metadata"]["uid"];
  if (policy == "Foreground") {
    it->second["metadata"]["deletionTimestamp"] = Rfc3339(Wall(now));
    it->second["metadata"]["finalizers"] = json::array({"foregroundDeletion"});
    Touch(it->second);
  } else {
    jobs.erase(it);
    ++rv;
  }
  for (auto p = pods.begin(); p != pods.end();) {
    if (p->second.value("/metadata/labels/controller-uid"_json_pointer, "") == uid && policy != "Orphan") {
      p = pods.erase(p);
      ++rv;
    } else {
      ++p;
    }
  }
  status = 200;
  out = json{{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Success"},
             {"details", {{"name", r.name}, {"group", "batch"}, {"kind", "jobs"}, {"uid", uid}}}}
            .dump();
}

}  // namespace gpufed::testing
