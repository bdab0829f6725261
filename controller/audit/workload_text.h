#pragma once
// The canonical text of a Workload document, written straight from the struct.
//
// Why: the spec hash is taken on every submission and every decision, and each pass's
// snapshot stores every new workload's document. Building an nlohmann tree for each was
// about 9 % of a leader's CPU under load (bench/README.md, "The spec hash without an
// nlohmann tree"); a hash now takes 1.6-1.9 us instead of 5.8-7.0 us. The text must be
// byte-identical to AppendCanonicalJson(WorkloadDocument(w)) (inputs.h), which names the
// fields and when each is left out: hashes already in journals depend on it.
// workload_text_test.cc compares the two over randomised workloads.
#include <string>

#include "controller/model/workload.h"

namespace gpufed::audit {

// Appends the canonical text of `workload`'s document to `*out`.
void AppendWorkloadDocumentText(const model::Workload& workload, std::string* out);
std::string WorkloadDocumentText(const model::Workload& workload);

}  // namespace gpufed::audit
