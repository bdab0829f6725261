// The crash-safety test's child: a busy controller on sim clusters in virtual time that
// keeps accepting submissions. Prints "accepted NAME" once Submit returned (durable).
// Usage: controller_crash_child REPO STATE SEED run|finish
#include <unistd.h>

#include <cstdio>
#include <random>
#include <string>

#include "connectors/sim/sim_connector.h"
#include "controller/common/clock.h"
#include "controller/runtime/app.h"

int main(int argc, char** argv) {
  using namespace gpufed;
  if (argc != 5) return 2;
  std::string repo = argv[1], state = argv[2], mode = argv[4];
  int seed = std::atoi(argv[3]);
  gpufed::ManualClock clock;
  {
    auto peek = store::Store::OpenReadOnly(state + "/gpufed.db");
    if (peek.ok()) {
      auto saved = (*peek)->GetMetaMillis("clock_ms");
      if (saved.ok() && *saved) clock.AdvanceTo(**saved);
    }
  }
  connectors::ConnectorRegistry registry;
  if (!connectors::sim::RegisterSimConnector(registry).ok()) return 3;
  // The App of `gpufed run` on this process's clock, its loop driven pass by pass.
  runtime::AppOptions options;
  options.config_dir = repo;
  options.state_dir = state;
  options.clock = &clock;
  options.handle_signals = false;
  auto opened = runtime::App::Open(options, registry, nullptr);
  if (!opened.ok()) {
    std::fprintf(stderr, "open: %s\n", opened.status().ToString().c_str());
    return 4;
  }
  reconcile::Controller& c = (*opened)->controller();
  std::mt19937 rng(static_cast<unsigned>(seed));
  for (int i = 0; i < 100000; ++i) {
    if (mode == "run" && i < 40) {
      std::string name = "s" + std::to_string(seed) + "-" + std::to_string(i);
      std::string yaml =
          "apiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: " + name +
          "}\nspec:\n  tenant: alpha\n  type: training\n  resources: {gpus: " + std::to_string(1 + rng() % 8) +
          "}\n  durationHint: " + std::to_string(5 + rng() % 40) +
          "m\n  checkpoint: {enabled: true, interval: 5m, uri: s3://c}\n";
      if (c.Submit(yaml, name + ".yaml", {"", "crash-child"}).ok()) {
        std::printf("accepted %s\n", name.c_str());
        std::fflush(stdout);
      }
    }
    auto stats = c.Pass();
    if (!stats.ok()) {
      std::fprintf(stderr, "pass: %s\n", stats.status().ToString().c_str());
      return 5;
    }
    Duration now = clock.Now();
    if (!c.store()->SetMeta("clock_ms", std::to_string(now.millis())).ok()) return 6;
    if (mode == "finish" && (c.Idle() || c.Stuck())) {
      std::printf("idle\n");
      return 0;
    }
    Duration next = c.NextEvent();
    Duration cap = now + Duration::FromSeconds(120);
    clock.AdvanceTo(next.millis() == 0 || next > cap ? cap : next);
  }
  return 0;
}
