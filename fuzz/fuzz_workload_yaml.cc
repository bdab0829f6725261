// A workload body as YAML (POST /v1/workloads, `gpufed submit FILE.yaml`).
#include "fuzz/submission.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gpufed::fuzz::DecodeSubmission(data, size, "request.yaml");
  return 0;
}
