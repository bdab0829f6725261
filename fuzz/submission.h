#pragma once
// A workload submission decoded the way Controller::Submit decodes an API body:
// config::LoadText against the active repository, then exactly one Workload document.
// The active repository is examples/quickstart, loaded once.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "controller/config/loader.h"
#include "policies/engine/validation.h"

namespace gpufed::fuzz {

inline const model::Config& ActiveRepository() {
  static const config::LoadResult* active = [] {
    auto* loaded = new config::LoadResult(
        config::LoadRepository({GPUFED_SOURCE_DIR "/examples/quickstart"}, policy::ProductLoadOptions(nullptr)));
    if (!loaded->ok()) std::abort();  // the fixture itself must load
    return loaded;
  }();
  return active->config;
}

inline void DecodeSubmission(const uint8_t* data, size_t size, const std::string& file_name) {
  if (size > (64u << 10)) return;  // the API takes up to 1 MiB; larger inputs only slow the search
  const model::Config& active = ActiveRepository();
  const std::string text(reinterpret_cast<const char*>(data), size);
  config::LoadResult loaded = config::LoadText(text, file_name, &active);
  if (!loaded.ok() || loaded.config.workloads.size() != 1 || loaded.documents != 1) return;  // a 400
  // An accepted submission is a workload of a tenant the active repository or the text knows.
  const model::Workload& w = loaded.config.workloads[0];
  if (w.metadata.name.empty()) std::abort();
  if (active.FindTenant(w.tenant) == nullptr && loaded.config.FindTenant(w.tenant) == nullptr) std::abort();
}

}  // namespace gpufed::fuzz
