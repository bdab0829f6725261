#pragma once
// The fake API server's object store and its two controllers (scheduler, Job
// controller). Internal to tests/fake-kube; callers hold FakeKube's mutex.
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/fake-kube/fake_kube.h"

namespace gpufed::testing {

struct Route {
  std::string verb;       // list, get, create, delete
  std::string resource;   // nodes, pods, jobs; "" when unknown
  std::string ns;         // "" for cluster scope
  std::string name;
};
Route ParseRoute(const std::string& method, const std::string& path);

nlohmann::json StatusBody(int code, const std::string& reason, const std::string& message,
                          nlohmann::json details = nullptr);
std::string ReasonFor(int code);
std::string HttpDate(int64_t unix_seconds);
std::string Rfc3339(int64_t unix_seconds);

// Helpers shared by state.cc and controllers.cc.
// A member object by key or JSON pointer, or an empty object; by reference, so a
// range-for over its items() does not outlive a temporary.
template <typename Key>
const nlohmann::json& ObjectAt(const nlohmann::json& j, const Key& key) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  if (!j.is_object() || !j.contains(key)) return kEmpty;
  const nlohmann::json& v = j.at(key);
  return v.is_object() ? v : kEmpty;
}

std::map<std::string, std::string> LabelsOf(const nlohmann::json& obj);
int64_t Milli(const nlohmann::json& quantity);
bool Terminal(const nlohmann::json& pod);
// What a pod takes from its node: extended resources by limit, cpu/memory by request.
std::map<std::string, int64_t> Demand(const nlohmann::json& pod);
bool MatchExpression(const nlohmann::json& requirement, const std::map<std::string, std::string>& labels);
void SetCondition(nlohmann::json& obj, const std::string& type, const std::string& status, const std::string& reason,
                  const std::string& message, const std::string& at);

struct FakeKube::State {
  int64_t epoch = 0;
  Duration job_runtime;
  int64_t rv = 1;
  int64_t compacted = 0;          // continue tokens / resourceVersions below this are gone
  int64_t serial = 0;             // uids and pod-name suffixes
  std::map<std::string, nlohmann::json> nodes;  // by name
  std::map<std::string, nlohmann::json> jobs;   // by "ns/name"
  std::map<std::string, nlohmann::json> pods;   // by "ns/name"
  int fail_count = 0;
  int fail_status = 0;
  std::string fail_retry_after;
  int compact_after_pages = -1;
  std::set<std::string> forbidden;
  std::vector<RecordedRequest> requests;
  std::vector<std::string> violations;

  int64_t Wall(Duration now) const { return epoch + now.millis() / 1000; }
  void Touch(nlohmann::json& obj);  // a write: new resourceVersion

  void AddNode(const FakeNode& node, Duration now);
  void SetNodeReady(const std::string& name, bool ready, Duration now);
  void AddForeignPod(const std::string& ns, const std::string& name, const std::string& node,
                     const std::map<std::string, std::string>& limits, Duration now);
  void FailPodOf(const std::string& job, const std::string& reason, Duration now);

  void List(const Route& r, const std::map<std::string, std::string>& query, int& status, std::string& out);
  void CreateJob(const Route& r, const std::map<std::string, std::string>& query, const std::string& body,
                 Duration now, int& status, std::string& out, std::map<std::string, std::string>& headers);
  void DeleteJob(const Route& r, const std::map<std::string, std::string>& query, const std::string& body,
                 Duration now, int& status, std::string& out);

  // The Job controller and scheduler, run to a fixed point at `now`.
  void Reconcile(Duration now);

 private:
  void SyncJob(nlohmann::json& job, Duration now);
  void Schedule(nlohmann::json& pod, Duration now);
  std::string Unfit(const nlohmann::json& pod, const nlohmann::json& node) const;
};

}  // namespace gpufed::testing
