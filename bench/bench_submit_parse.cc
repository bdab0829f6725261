// What an API submission's YAML costs before it reaches the store: the whole loader
// (config::LoadText against the active revision, as Controller::Submit runs it) and the
// parse alone (YamlStream: libyaml's event parser into the loader's nodes).
// The body is the shape gpufed-load submits; the context is the quickstart's revision.
#include <benchmark/benchmark.h>

#include <string>

#include "bench/quickstart.h"
#include "controller/common/yaml_tree.h"
#include "controller/config/loader.h"

namespace {

using gpufed::policy::Candidate;

std::string SubmissionBody(int64_t n) {
  return "apiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: load-" + std::to_string(n) +
         "}\nspec:\n  tenant: team-vision\n  resources: {gpus: 1}\n  durationHint: 1h\n"
         "  run: {command: [\"true\"]}\n";
}

void BM_SubmitParseLoadText(benchmark::State& state) {
  const Candidate& candidate = gpufed::bench::QuickstartCandidate();
  if (!candidate.revision) {
    state.SkipWithError("examples/quickstart does not activate");
    return;
  }
  int64_t n = 0;
  for (auto _ : state) {
    gpufed::config::LoadResult loaded =
        gpufed::config::LoadText(SubmissionBody(n++), "api/load.yaml", &candidate.revision->config);
    if (!loaded.ok() || loaded.config.workloads.size() != 1) {
      state.SkipWithError("the submission body does not load against the quickstart");
      return;
    }
    benchmark::DoNotOptimize(loaded);
  }
  state.SetItemsProcessed(n);
}

void BM_SubmitParseYamlOnly(benchmark::State& state) {
  const gpufed::config::LoadOptions defaults;
  int64_t n = 0;
  for (auto _ : state) {
    const gpufed::YamlStream stream = gpufed::YamlStream::Parse(
        SubmissionBody(n++),
        {.max_documents = defaults.max_documents_per_file, .max_nodes_per_document = defaults.max_nodes_per_document});
    if (stream.problem() || stream.documents().size() != 1) {
      state.SkipWithError("the submission body does not parse as one document");
      return;
    }
    benchmark::DoNotOptimize(stream);
  }
  state.SetItemsProcessed(n);
}

BENCHMARK(BM_SubmitParseLoadText)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SubmitParseYamlOnly)->Unit(benchmark::kMicrosecond);

}  // namespace
