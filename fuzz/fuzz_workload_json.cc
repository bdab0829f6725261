// A workload body as JSON (POST /v1/workloads with Content-Type application/json: the
// server names it request.json and the loader reads it as YAML's JSON subset).
#include "fuzz/submission.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gpufed::fuzz::DecodeSubmission(data, size, "request.json");
  return 0;
}
