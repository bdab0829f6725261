// gpufed: wiring only; every command lives in controller/cli. main owns the connector
// registry and registers the built-in connectors explicitly (no static registries), and
// hands down what this binary is (build_info.h: version and commit, made at build time).
#include <iostream>

#include "connectors/core/registry.h"
#include "connectors/kubernetes/kubernetes_connector.h"
#include "connectors/local/local_connector.h"
#include "connectors/sim/sim_connector.h"
#include "connectors/slurm/slurm_connector.h"
#include "controller/cli/cli.h"
#include "controller/common/build_info.h"

int main(int argc, char** argv) {
  gpufed::connectors::ConnectorRegistry registry;
  gpufed::Status registered = gpufed::connectors::sim::RegisterSimConnector(registry);
  if (registered.ok()) registered = gpufed::connectors::local::RegisterLocalConnector(registry);
  if (registered.ok()) registered = gpufed::connectors::slurm::RegisterSlurmConnector(registry);
  if (registered.ok()) registered = gpufed::connectors::kubernetes::RegisterKubernetesConnector(registry);
  if (!registered.ok()) {
    std::cerr << "gpufed: " << registered.ToString() << "\n";
    return 1;
  }
  return gpufed::cli::Main(argc, argv, &registry, gpufed::ThisBuild());
}
