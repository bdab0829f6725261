#include <algorithm>
#include <ctime>

#include "tests/fake-kube/state.h"

// The fake's scheduler and Job controller: what kube-scheduler and the Job controller
// would do for gpufed's Jobs, run to a fixed point whenever the fake handles a request.
namespace gpufed::testing {

using nlohmann::json;

void FakeKube::State::Reconcile(Duration now) {
  for (auto it = jobs.begin(); it != jobs.end();) {
    json& job = it->second;
    if (job.value("/metadata/deletionTimestamp"_json_pointer, "") != "") {
      it = jobs.erase(it);  // foreground deletion: the pods are already gone
      ++rv;
      continue;
    }
    SyncJob(job, now);
    ++it;
  }
  for (auto& [k, pod] : pods) {
    std::string phase = pod.value("/status/phase"_json_pointer, "");
    if (phase == "Pending" && pod.value("/spec/nodeName"_json_pointer, "") == "") Schedule(pod, now);
    if (pod.value("/status/phase"_json_pointer, "") != "Running" || !pod.contains("/metadata/labels/job-name"_json_pointer)) {
      continue;
    }
    int64_t started = std::atoll(pod.value("/metadata/annotations/fake.started"_json_pointer, "0").c_str());
    if (Wall(now) - started >= job_runtime.millis() / 1000) {
      pod["status"]["phase"] = "Succeeded";
      pod["status"]["containerStatuses"][0]["state"] = {
          {"terminated", {{"exitCode", 0}, {"reason", "Completed"}, {"startedAt", Rfc3339(started)},
                          {"finishedAt", Rfc3339(Wall(now))}}}};
      Touch(pod);
    }
  }
  for (auto& [k, job] : jobs) SyncJob(job, now);
}

void FakeKube::State::SyncJob(json& job, Duration now) {
  for (const json& c : job["status"].value("conditions", json::array())) {
    if ((c["type"] == "Complete" || c["type"] == "Failed") && c["status"] == "True") return;
  }
  std::string uid = job["metadata"]["uid"];
  std::string name = job["metadata"]["name"];
  std::string ns = job["metadata"]["namespace"];
  int active = 0, succeeded = 0, failed = 0;
  for (const auto& [k, p] : pods) {
    if (p.value("/metadata/labels/controller-uid"_json_pointer, "") != uid) continue;
    std::string phase = p.value("/status/phase"_json_pointer, "");
    if (phase == "Succeeded") ++succeeded;
    else if (phase == "Failed") ++failed;
    else ++active;
  }
  const json& spec = job["spec"];
  int completions = spec.value("completions", 1), parallelism = spec.value("parallelism", 1);
  std::string at = Rfc3339(Wall(now));
  auto finish = [&](const std::string& type, const std::string& reason, const std::string& message) {
    for (auto& [k, p] : pods) {  // terminate what still runs
      if (p.value("/metadata/labels/controller-uid"_json_pointer, "") == uid && !Terminal(p)) p["status"]["phase"] = "Failed";
    }
    if (type == "Complete") job["status"]["completionTime"] = at;
    SetCondition(job, type, "True", reason, message, at);
    job["status"]["active"] = 0;
    job["status"]["succeeded"] = succeeded;
    job["status"]["failed"] = failed;
    Touch(job);
  };
  int64_t start = 0;
  if (auto t = job["status"].value("startTime", ""); !t.empty()) {
    std::tm tm{};
    strptime(t.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
    start = timegm(&tm);
  }
  if (spec.contains("activeDeadlineSeconds") && Wall(now) - start >= spec["activeDeadlineSeconds"].get<int64_t>()) {
    return finish("Failed", "DeadlineExceeded", "Job was active longer than specified deadline");
  }
  if (failed > spec.value("backoffLimit", 6)) {
    return finish("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit");
  }
  if (succeeded >= completions) return finish("Complete", "", "");
  int want = std::min(parallelism, completions - succeeded) - active;
  for (int i = 0; i < want; ++i) {
    std::string pod_name = name + "-" + std::to_string(succeeded + active + failed + i) + "-x" + std::to_string(++serial);
    json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", job["spec"]["template"].value("metadata", json::object())},
                {"spec", job["spec"]["template"]["spec"]},
                {"status", {{"phase", "Pending"}}}};
    pod["metadata"]["name"] = pod_name;
    pod["metadata"]["namespace"] = ns;
    pod["metadata"]["uid"] = "pod-" + std::to_string(serial);
    pod["metadata"]["ownerReferences"] = json::array(
        {{{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"name", name}, {"uid", uid}, {"controller", true}}});
    pod["metadata"]["creationTimestamp"] = at;
    Touch(pod);
    pods[ns + "/" + pod_name] = pod;
    Schedule(pods[ns + "/" + pod_name], now);
  }
  if (job["status"].value("active", -1) != active + want) {
    job["status"]["active"] = active + want;
    Touch(job);
  }
}

std::string FakeKube::State::Unfit(const json& pod, const json& node) const {
  std::map<std::string, std::string> labels = LabelsOf(node);
  bool ready = false;
  for (const json& c : node.value("/status/conditions"_json_pointer, json::array())) {
    if (c["type"] == "Ready") ready = c["status"] == "True";
  }
  if (!ready) return "node(s) were not ready";
  for (const auto& [k, v] : ObjectAt(pod, "/spec/nodeSelector"_json_pointer).items()) {
    if (!labels.count(k) || labels[k] != v) return "node(s) didn't match Pod's node affinity/selector";
  }
  const json terms = pod.value(
      "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms"_json_pointer,
      json::array());
  if (!terms.empty()) {
    bool any = false;
    for (const json& t : terms) {
      bool all = true;
      for (const json& e : t.value("matchExpressions", json::array())) all = all && MatchExpression(e, labels);
      any = any || all;
    }
    if (!any) return "node(s) didn't match Pod's node affinity/selector";
  }
  for (const json& taint : node.value("/spec/taints"_json_pointer, json::array())) {
    std::string effect = taint.value("effect", "");
    if (effect != "NoSchedule" && effect != "NoExecute") continue;
    bool tolerated = false;
    for (const json& t : pod.value("/spec/tolerations"_json_pointer, json::array())) {
      bool key = t.value("key", "") == taint.value("key", "") || (t.value("key", "").empty() && t.value("operator", "") == "Exists");
      bool value = t.value("operator", "Equal") == "Exists" || t.value("value", "") == taint.value("value", "");
      bool eff = t.value("effect", "").empty() || t.value("effect", "") == effect;
      tolerated = tolerated || (key && value && eff);
    }
    if (!tolerated) return "node(s) had untolerated taint {" + taint.value("key", "") + ": " + taint.value("value", "") + "}";
  }
  std::map<std::string, int64_t> used;
  std::string node_name = node["metadata"]["name"];
  for (const auto& [k, p] : pods) {
    if (p.value("/spec/nodeName"_json_pointer, "") != node_name || Terminal(p)) continue;
    for (const auto& [r, v] : Demand(p)) used[r] += v;
    for (const json& term : pod.value("/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution"_json_pointer,
                                      json::array())) {
      bool match = true;
      for (const auto& [lk, lv] : ObjectAt(term, "/labelSelector/matchLabels"_json_pointer).items()) {
        match = match && LabelsOf(p).count(lk) && LabelsOf(p)[lk] == lv;
      }
      if (match) return "node(s) didn't match pod anti-affinity rules";
    }
  }
  const json alloc = node.value("/status/allocatable"_json_pointer, json::object());
  for (const auto& [r, v] : Demand(pod)) {
    int64_t have = alloc.contains(r) ? Milli(alloc[r]) : 0;
    if (used[r] + v > have) return "Insufficient " + r;
  }
  return "";
}

void FakeKube::State::Schedule(json& pod, Duration now) {
  std::map<std::string, int> reasons;
  for (const auto& [name, node] : nodes) {
    std::string why = Unfit(pod, node);
    if (why.empty()) {
      std::string at = Rfc3339(Wall(now));
      pod["spec"]["nodeName"] = name;
      pod["status"]["phase"] = "Running";
      pod["status"]["startTime"] = at;
      pod["metadata"]["annotations"]["fake.started"] = std::to_string(Wall(now));
      SetCondition(pod, "PodScheduled", "True", "", "", at);
      pod["status"]["containerStatuses"] = json::array(
          {{{"name", "main"}, {"ready", true}, {"restartCount", 0}, {"state", {{"running", {{"startedAt", at}}}}}}});
      Touch(pod);
      return;
    }
    ++reasons[why];
  }
  std::string msg = "0/" + std::to_string(nodes.size()) + " nodes are available:";
  bool first = true;
  for (const auto& [why, n] : reasons) {
    msg += (first ? " " : ", ") + std::to_string(n) + " " + why;
    first = false;
  }
  msg += ".";
  std::string before = pod.dump();
  SetCondition(pod, "PodScheduled", "False", "Unschedulable", msg, Rfc3339(Wall(now)));
  if (pod.dump() != before) Touch(pod);
}

}  // namespace gpufed::testing
