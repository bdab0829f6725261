#pragma once
// A fake Kubernetes API server for hermetic tests: HTTPS on 127.0.0.1 (port 0) with a
// test CA, serving the calls the kubernetes connector makes and behaving like the real
// server for them:
//   - resourceVersion on every write (one global counter, as etcd's revision);
//   - lists with labelSelector, fieldSelector (status.phase, spec.nodeName, metadata.name),
//     limit/continue paging; a continue token older than the last compaction is 410
//     Gone (reason Expired); resourceVersion with resourceVersionMatch Exact/NotOlderThan;
//   - create: JSON decoding against the official field names/types (schema.h): unknown
//     fields are 400 under fieldValidation=Strict and a Warning header otherwise (and
//     recorded either way), type mismatches 400; semantic validation 422 Invalid with
//     causes; duplicate names 409 AlreadyExists;
//   - delete with DeleteOptions (Background removes the Job at once, its pods after);
//   - bearer-token or client-certificate authentication (401), per-verb RBAC denials (403);
//   - injected faults: N answers of a status with Retry-After (429, 5xx), a stopped server;
//   - a scheduler and Job controller on the test's clock: pods bind to nodes whose
//     labels, affinity, taints and free resources fit (else Pending, Unschedulable), run,
//     and finish after the configured runtime; Jobs get Complete/Failed conditions
//     (activeDeadlineSeconds -> DeadlineExceeded). Time moves only with the clock.
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/common/clock.h"
#include "controller/common/status.h"
#include "tests/fake-kube/test_ca.h"

namespace httplib {
class SSLServer;
}

namespace gpufed::testing {

struct FakeKubeOptions {
  const gpufed::Clock* clock = nullptr;   // required; the server's time line
  int64_t epoch = 1767225600;                 // wall time (Unix s) at clock zero: 2026-01-01
  std::string token = "test-token";           // accepted bearer token ("" = none)
  bool client_certs = false;                  // also require/accept client certificates
  Duration job_runtime = Duration::FromSeconds(600);  // how long a pod runs before success
};

struct RecordedRequest {
  std::string method;
  std::string path;
  std::map<std::string, std::string> query;
  std::string body;
  int status = 0;
};

struct FakeNode {
  std::string name;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> allocatable;   // also the capacity
  std::vector<nlohmann::json> taints;               // {"key","value","effect"}
  bool ready = true;
};

class FakeKube {
 public:
  // Starts listening on 127.0.0.1:<free port>.
  static Result<std::unique_ptr<FakeKube>> Start(FakeKubeOptions options);
  ~FakeKube();
  FakeKube(const FakeKube&) = delete;
  FakeKube& operator=(const FakeKube&) = delete;

  std::string url() const;                    // https://127.0.0.1:<port>
  const TestCa& ca() const { return ca_; }

  void AddNode(const FakeNode& node);
  void SetNodeReady(const std::string& name, bool ready);
  // Adds a pod that holds resources on `node` (someone else's workload).
  void AddForeignPod(const std::string& ns, const std::string& name, const std::string& node,
                     const std::map<std::string, std::string>& limits);

  // Faults.
  // The next `count` requests get `status` with a Status body and, when set, Retry-After.
  void FailNext(int count, int status, const std::string& retry_after = "");
  // After `pages` more list pages are served, compact: outstanding continue tokens and
  // resourceVersions older than now expire (410 Gone).
  void CompactAfterPages(int pages);
  void Forbid(const std::string& verb, const std::string& resource);  // 403
  // Stops answering: the listener closes (connections are refused).
  void Stop();

  // Test-driven progression on top of the clock.
  void FailPod(const std::string& job, const std::string& disruption_reason);  // e.g. PreemptionByScheduler
  // Runs the scheduler and Job controller at the clock's now (also done on every request).
  void Tick();

  // Inspection.
  std::vector<nlohmann::json> Jobs() const;
  std::optional<nlohmann::json> Job(const std::string& ns, const std::string& name) const;
  std::vector<nlohmann::json> PodsOf(const std::string& job) const;
  std::vector<RecordedRequest> Requests() const;
  // Every unknown field and type error any request body had (should stay empty).
  std::vector<std::string> Violations() const;
  int64_t resource_version() const;

 private:
  explicit FakeKube(FakeKubeOptions options);
  struct State;
  void Handle(const std::string& method, const std::string& path, const std::map<std::string, std::string>& query,
              const std::string& body, const std::string& auth_header, bool client_cert, int& status,
              std::string& out, std::map<std::string, std::string>& headers);

  FakeKubeOptions options_;
  TestCa ca_;
  std::unique_ptr<httplib::SSLServer> server_;
  std::thread thread_;
  int port_ = 0;
  mutable std::mutex mu_;
  std::unique_ptr<State> state_;
};

}  // namespace gpufed::testing
