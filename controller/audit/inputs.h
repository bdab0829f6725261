#pragma once
// What replay needs: the placer's inputs as JSON, kept in a content-addressed store
// beside the journal (`<audit>/snapshots/<2 hex>/<64 hex>.json`). One snapshot per
// placer pass; every decision record of that pass names it by digest ("inputs").
//
// Workloads are stored as Kubernetes-style JSON documents (`apiVersion`, `kind`,
// `metadata`, `spec`). JSON is YAML, so replay loads them with config::LoadText against
// the recorded (or a what-if) policy revision.
#include <string>

#include <nlohmann/json.hpp>

#include "controller/audit/env.h"
#include "controller/model/workload.h"
#include "controller/placement/plan.h"

namespace gpufed::audit {

// The workload as a document the loader accepts; round-trips through config::LoadText.
nlohmann::json WorkloadDocument(const model::Workload& workload);
// "sha256:" + SHA-256 over the compact document: the workload's spec hash.
std::string WorkloadSpecHash(const model::Workload& workload);

// Snapshot format version 3: everything the placer read (the revision is loaded again
// from its repository and must hash to `revision.id`).
//   {"format":3, "revision":{"id":REV,"repo":ABSOLUTE ROOT}, "nowMillis":N,
//    "onpremQueueDepth":N, "fairShareHalfLifeMillis":N, "explainClusters":N,
//    "usage":{TENANT:{"gpuMilliInUse":N,"spent":"12.00 EUR","cloudSpent":"0 EUR",
//                     "decayedGpuHours":X}},
//    "pending":[WORKLOAD DOCUMENT, ...],
//    "running":[{"workload":DOC,"binding":BINDING (placement::BindingToJson),
//                "startedMillis":N,"lastCheckpointMillis":N,"attempt":N}, ...],
//    "observed":{CLUSTER:{"healthy":B,"nodes":[{"name","pool","ready","freeCpuMilli",
//                "freeMemory","gpus":[[FREE_MILLI,FREE_MEMORY,MIG_SLICES_USED],...]}]}},
//    "podMix":[{"request":{"gpus","gpuMemoryMilli","gpuShareMilli","migProfile",
//               "topology","nodes","gpusPerNode","cpuMilli","memoryMilli","gpuModels"},
//               "count":N}, ...]}   (podMix only when the loop fixed the mix)
// Format 2 had no podMix (the mix was the snapshot's own work).
// Format 1 (earlier journals) had no fairShareHalfLifeMillis, explainClusters, running
// or observed: it planned on declared node pools with nothing running.
// `repo_root` is where the revision can be loaded from again (made absolute here).
inline constexpr int kSnapshotFormat = 3;
nlohmann::json SnapshotDocument(const placement::Snapshot& snapshot, const std::string& repo_root);

// A snapshot document read back, except its workload documents, which the caller loads
// (with the loader, against the revision) into `pending` and `running[i].workload`.
struct SnapshotInputs {
  int format = 0;
  std::string revision;
  std::string repo;
  placement::Snapshot snapshot;                  // config, hooks, pending and running workloads unset
  std::vector<nlohmann::json> pending_documents;
  std::vector<nlohmann::json> running_documents;  // parallel to snapshot.running
};
// InvalidArgument naming the field when the document is not a snapshot of a known format.
Result<SnapshotInputs> ParseSnapshotDocument(const nlohmann::json& document);

// Content-addressed, write-once JSON documents. One writer at a time (the reconcile
// loop); readers may run concurrently. `env` must outlive the store.
class SnapshotStore {
 public:
  SnapshotStore(Env* env, std::string audit_dir);

  // Stores `document` durably (fdatasync + rename + directory sync) before returning
  // its digest ("sha256:<hex>"); a document already present is not rewritten.
  Result<std::string> Put(const nlohmann::json& document);
  // NotFound for an unknown digest; DataLoss when the stored bytes no longer match it.
  Result<nlohmann::json> Get(const std::string& digest);

 private:
  std::string PathFor(const std::string& hex) const;
  Env* env_;
  std::string dir_;
};

}  // namespace gpufed::audit
