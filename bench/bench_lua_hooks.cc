// Per-call cost of Lua policy hooks (policies/runtime): a typical ~20-line rule against
// an empty hook, which measures the fixed cost of a sandboxed call (hook arming,
// protected call, views, result checks).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>

#include <nlohmann/json.hpp>

#include "policies/runtime/lua_policy.h"

namespace {

using gpufed::policy::HookContext;
using gpufed::policy::LuaPolicyFile;

constexpr const char* kEmptyRule = R"(
function admit(w) return true end
function filter(w, c) return true end
function score(w, c) return 0 end
)";

// Shaped like the rules in policies/stdlib: residency, sensitivity, model fit, cost.
constexpr const char* kTypicalRule = R"(
local allowed_zones = {eu = true, ["eu-sovereign"] = true}
local sensitive = {confidential = true, restricted = true}

function admit(w)
  if w.resources.gpus > 64 then return false, "gang larger than any cluster" end
  if sensitive[w.data.sensitivity] and not w.data.residency then
    return false, "sensitive data needs a residency"
  end
  return true
end

function filter(w, c)
  if sensitive[w.data.sensitivity] and not allowed_zones[c.zone] then
    return false, "zone " .. c.zone .. " not allowed for " .. w.data.sensitivity .. " data"
  end
  for i = 1, #c.pools do
    local pool = c.pools[i]
    if pool.free >= w.resources.gpus and pool.model == w.resources.models[1] then return true end
  end
  return false, "no pool with enough free GPUs"
end

function score(w, c)
  local hours = (w.duration_hours or 1) * w.resources.gpus
  local cost = hours * c.price_per_gpu_hour
  local locality = c.datasets and c.datasets[w.data.dataset] and 50 or 0
  return 100 - cost + locality + (c.provider == "onprem" and 20 or 0)
end
)";

nlohmann::json Workload() {
  return nlohmann::json::parse(R"({
    "name": "train-llm", "tenant": "ml", "priority": 7, "duration_hours": 2,
    "resources": {"gpus": 8, "gpu_memory_gib": 80, "models": ["H100", "A100"]},
    "data": {"dataset": "corpus-v3", "sensitivity": "confidential", "residency": "eu"}
  })");
}

nlohmann::json Cluster() {
  return nlohmann::json::parse(R"({
    "name": "onprem-a", "provider": "onprem", "zone": "eu",
    "pools": [{"model": "A100", "free": 4}, {"model": "H100", "free": 16}],
    "price_per_gpu_hour": 2.5, "datasets": {"corpus-v3": true}
  })");
}

std::unique_ptr<LuaPolicyFile> LoadOrDie(const char* source) {
  auto loaded = LuaPolicyFile::Load("bench", "bench.lua", source);
  if (!loaded.ok()) std::abort();
  return std::move(loaded).value();
}

template <typename Call>
void RunHook(benchmark::State& state, const char* source, Call call) {
  auto file = LoadOrDie(source);
  const nlohmann::json w = Workload();
  const nlohmann::json c = Cluster();
  const HookContext ctx{1700000000, 1};
  for (auto _ : state) {
    if (!call(*file, w, c, ctx)) {
      state.SkipWithError("hook failed");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}

bool Admit(LuaPolicyFile& f, const nlohmann::json& w, const nlohmann::json&, const HookContext& ctx) {
  auto r = f.Admit(w, ctx);
  benchmark::DoNotOptimize(r);
  return r.ok();
}
bool Filter(LuaPolicyFile& f, const nlohmann::json& w, const nlohmann::json& c, const HookContext& ctx) {
  auto r = f.Filter(w, c, ctx);
  benchmark::DoNotOptimize(r);
  return r.ok();
}
bool Score(LuaPolicyFile& f, const nlohmann::json& w, const nlohmann::json& c, const HookContext& ctx) {
  auto r = f.Score(w, c, ctx);
  benchmark::DoNotOptimize(r);
  return r.ok();
}

void BM_LuaAdmitEmpty(benchmark::State& s) { RunHook(s, kEmptyRule, Admit); }
void BM_LuaFilterEmpty(benchmark::State& s) { RunHook(s, kEmptyRule, Filter); }
void BM_LuaScoreEmpty(benchmark::State& s) { RunHook(s, kEmptyRule, Score); }
void BM_LuaAdmitTypical(benchmark::State& s) { RunHook(s, kTypicalRule, Admit); }
void BM_LuaFilterTypical(benchmark::State& s) { RunHook(s, kTypicalRule, Filter); }
void BM_LuaScoreTypical(benchmark::State& s) { RunHook(s, kTypicalRule, Score); }

void BM_LuaFilterTypicalCoverage(benchmark::State& state) {
  auto file = LoadOrDie(kTypicalRule);
  file->EnableCoverage(true);
  const nlohmann::json w = Workload();
  const nlohmann::json c = Cluster();
  for (auto _ : state) {
    auto r = file->Filter(w, c, {});
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_LuaLoadTypical(benchmark::State& state) {
  for (auto _ : state) {
    auto file = LoadOrDie(kTypicalRule);
    benchmark::DoNotOptimize(file);
  }
}

BENCHMARK(BM_LuaAdmitEmpty);
BENCHMARK(BM_LuaFilterEmpty);
BENCHMARK(BM_LuaScoreEmpty);
BENCHMARK(BM_LuaAdmitTypical);
BENCHMARK(BM_LuaFilterTypical);
BENCHMARK(BM_LuaScoreTypical);
BENCHMARK(BM_LuaFilterTypicalCoverage);
BENCHMARK(BM_LuaLoadTypical);

}  // namespace
