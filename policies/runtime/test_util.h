#pragma once
// Test helpers for the policy runtime tests.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "policies/runtime/lua_policy.h"

namespace gpufed::policy::testing {

inline std::unique_ptr<LuaPolicyFile> MustLoad(std::string_view source,
                                               const LuaLimits& limits = {}) {
  auto loaded = LuaPolicyFile::Load("p", "rules/x.lua", source, limits);
  EXPECT_TRUE(loaded.ok()) << loaded.error().ToString();
  if (!loaded.ok()) return nullptr;
  return std::move(loaded).value();
}

inline HookError MustFailLoad(std::string_view source, const LuaLimits& limits = {}) {
  auto loaded = LuaPolicyFile::Load("p", "rules/x.lua", source, limits);
  EXPECT_FALSE(loaded.ok());
  return loaded.ok() ? HookError{} : loaded.error();
}

inline nlohmann::json Workload() {
  return nlohmann::json::parse(R"({
    "name": "train-llm", "tenant": "ml", "priority": 7,
    "resources": {"gpus": 8, "gpu_memory_gib": 80, "models": ["H100", "A100"]},
    "data": {"sensitivity": "confidential", "residency": "eu", "pii": true},
    "labels": {"team": "nlp", "cost-center": "42"},
    "ratio": 0.25, "nothing": null
  })");
}

inline nlohmann::json Cluster() {
  return nlohmann::json::parse(R"({
    "name": "onprem-a", "provider": "onprem", "zone": "eu", "free_gpus": 16,
    "pools": [{"model": "H100", "free": 8}, {"model": "A100", "free": 8}],
    "price_per_gpu_hour": 2.5, "healthy": true
  })");
}

}  // namespace gpufed::policy::testing
