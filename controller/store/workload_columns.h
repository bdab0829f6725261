#pragma once
// The workloads table's columns in the order the Store writes and reads them (store.cc's
// ReadWorkload, store_rows.cc's inserts). Internal to the store.

namespace gpufed::store {

inline constexpr const char* kWorkloadColumns =
    "name, uid, tenant, source, spec_text, submitted_ms, state, reason, attempt, cluster, binding_json, resume_ms, "
    "progress_ms, checkpoint_ms, started_ms, finished_ms, estimate_micros, cost_micros, currency, gpu_milli, cloud, "
    "cancel_requested, decision_signature, seq";
inline constexpr int kWorkloadColumnCount = 24;

}  // namespace gpufed::store
