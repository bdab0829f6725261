// A policy's Lua file: random hook text, loaded in the sandbox and called against a
// fixed workload and cluster view (what the placer passes). Whatever the text does, Load
// and every call return a HookResult (an error for syntax, runtime, budget, memory, depth
// or deadline), never crash or hang, and the state stays under its memory cap.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <nlohmann/json.hpp>

#include "policies/runtime/lua_policy.h"

namespace {

using gpufed::policy::HookContext;
using gpufed::policy::LuaLimits;
using gpufed::policy::LuaPolicyFile;

const nlohmann::json& WorkloadView() {
  static const nlohmann::json w = nlohmann::json::parse(R"({
    "name": "train-llm", "tenant": "ml", "priority": 7, "kind": "training",
    "resources": {"gpus": 8, "gpu_memory_gib": 80, "models": ["H100", "A100"], "gang": true},
    "data": {"sensitivity": "confidential", "residency": "eu", "pii": true, "datasets": ["corpus"]},
    "labels": {"team": "nlp", "cost-center": "42"}, "ratio": 0.25, "nothing": null})");
  return w;
}

const nlohmann::json& ClusterView() {
  static const nlohmann::json c = nlohmann::json::parse(R"({
    "name": "onprem-a", "provider": "onprem", "zone": "eu", "free_gpus": 16, "queue_depth": 3,
    "pools": [{"model": "H100", "free": 8}, {"model": "A100", "free": 8}],
    "price_per_gpu_hour": 2.5, "healthy": true, "labels": {"site": "munich"}})");
  return c;
}

const nlohmann::json& Params() {
  static const nlohmann::json p = nlohmann::json::parse(R"({"maxGpus": 4, "zones": ["eu"], "weight": 2.5})");
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (16u << 10)) return 0;
  LuaLimits limits;
  // Smaller than the product's defaults so an exhausting hook costs milliseconds, not a
  // second; the limits are enforced the same way whatever their size.
  limits.instructions = 100'000;
  limits.memory_bytes = 4u << 20;
  limits.wall_time_ms = 5'000;
  const std::string_view source(reinterpret_cast<const char*>(data), size);
  auto loaded = LuaPolicyFile::Load("fuzz", "rules/fuzz.lua", source, limits);
  if (!loaded.ok()) return 0;
  LuaPolicyFile& file = *loaded.value();
  HookContext ctx;
  ctx.now_seconds = 1.8e9;
  ctx.seed = 42;
  ctx.params = &Params();
  // Each hook twice: an error in the first call must leave the file serving the second.
  for (int round = 0; round < 2; ++round) {
    if (file.has_admit()) (void)file.Admit(WorkloadView(), ctx);
    if (file.has_filter()) (void)file.Filter(WorkloadView(), ClusterView(), ctx);
    if (file.has_score()) (void)file.Score(WorkloadView(), ClusterView(), ctx);
    if (file.memory_in_use() > limits.memory_bytes) std::abort();
  }
  (void)file.TakeReads();
  return 0;
}
