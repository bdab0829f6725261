#pragma once
// What replay needs: the placer's inputs as JSON, kept in a content-addressed store
// beside the journal (snapshot_store.h). One snapshot per placer pass; every decision
// record of that pass names it by digest ("inputs").
//
// Workloads are stored as Kubernetes-style JSON documents (`apiVersion`, `kind`,
// `metadata`, `spec`). JSON is YAML, so replay loads them with config::LoadText against
// the recorded (or a what-if) policy revision.
#include <string>

#include <nlohmann/json.hpp>

#include "controller/audit/env.h"
#include "controller/audit/snapshot_store.h"
#include "controller/model/workload.h"
#include "controller/placement/plan.h"

namespace gpufed::audit {

// The workload as a document the loader accepts; round-trips through config::LoadText.
nlohmann::json WorkloadDocument(const model::Workload& workload);
// "sha256:" + SHA-256 over the compact document (written without building it:
// workload_text.h): the workload's spec hash.
std::string WorkloadSpecHash(const model::Workload& workload);

// Snapshot format version 4: everything the placer read (the revision is loaded again
// from its repository and must hash to `revision.id`).
//   {"format":4, "revision":{"id":REV,"repo":ABSOLUTE ROOT}, "nowMillis":N,
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
// As stored (SnapshotWriter), each element of `pending` and `running`, each member of
// `observed`, and each running entry's `workload`, is the name ("sha256:<hex>") of an
// object in the same store, so a workload, a running entry or a cluster's unchanged
// report is stored once however many passes read it; ReadSnapshot puts the objects back
// in their place.
// Format 3 held the documents inline. Format 2 had no podMix (the mix was the snapshot's
// own work). Format 1 (earlier journals) had no fairShareHalfLifeMillis, explainClusters,
// running or observed: it planned on declared node pools with nothing running.
// `repo_root` is where the revision can be loaded from again (made absolute here).
inline constexpr int kSnapshotFormat = 4;
// The document with `pending`, `running` and `observed` empty.
nlohmann::json SnapshotHeader(const placement::Snapshot& snapshot, const std::string& repo_root);
// One member of `observed`.
nlohmann::json ObservedClusterDocument(const placement::ObservedCluster& cluster);
// Its canonical text, byte for byte DumpPayload(ObservedClusterDocument(cluster)) but
// written directly: a cluster's report changes in most passes where work starts or ends,
// and building the tree first was most of the cost of storing it (inputs_test.cc
// compares the two on random reports).
std::string ObservedClusterText(const placement::ObservedCluster& cluster);
// One element of `running`, around its workload (a document, or an object's name).
nlohmann::json RunningEntryDocument(const placement::RunningWorkload& running, nlohmann::json workload);
// The whole document with every workload inline (what ReadSnapshot reads back).
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
// InvalidArgument naming the field when the document is not a snapshot of a known format
// with its workloads inline.
Result<SnapshotInputs> ParseSnapshotDocument(const nlohmann::json& document);
// The revision a snapshot was planned under and the repository it was loaded from: its
// own object only, without the objects it names (`audit report` asks once per pass).
struct SnapshotRevision {
  std::string id;
  std::string repo;  // empty when the snapshot did not record one
};
// NotFound or DataLoss as Get; InvalidArgument when the object is not a snapshot.
Result<SnapshotRevision> ReadSnapshotRevision(SnapshotStore& store, const std::string& digest);

// Reads the snapshot `digest` from `store`, with the objects it names, and parses it.
// NotFound or DataLoss (naming the element) when an object is missing or altered.
Result<SnapshotInputs> ReadSnapshot(SnapshotStore& store, const std::string& digest);

}  // namespace gpufed::audit
